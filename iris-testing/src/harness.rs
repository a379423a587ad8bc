//! One tool through the real executor (parsing, permissions, hooks,
//! middleware, result limits, artifacts) without a model, in a workspace
//! of its own.
#![allow(
    clippy::panic,
    clippy::missing_panics_doc,
    reason = "call_ok fails the test by panicking, as assert! does, and says so"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use iris_agent::{Agent, AgentBuildError};
use iris_core::{RunId, ToolResult, ToolUseBlock};
use iris_runtime::{ApprovalDecision, RuntimeError, ToolExecutor, ToolOutcome};
use iris_tools::fs::FileServiceError;
use serde_json::Value;

/// Calls tools one at a time as a model would, through an agent's
/// executor, in a temporary workspace (or one the test names); the file
/// tools work in it, with their read-before-edit rules.
#[derive(Debug)]
pub struct ToolHarness {
    agent: Arc<Agent>,
    workspace: Workspace,
    run: RunId,
    calls: AtomicUsize,
}

#[derive(Debug)]
enum Workspace {
    Temporary(tempfile::TempDir),
    Given(PathBuf),
}

/// Why a harness could not be made.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The temporary workspace could not be made.
    #[error("the harness could not make its temporary workspace: {0}")]
    Workspace(#[from] std::io::Error),
    /// The executor could not be made into an agent.
    #[error(transparent)]
    Agent(#[from] AgentBuildError),
    /// A call's context could not be made (the workspace cannot be opened).
    #[error(transparent)]
    Context(#[from] FileServiceError),
    /// The executor refused a resume (no such call waits, or the decision
    /// was made for another request).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl ToolHarness {
    /// A harness over `agent`'s executor, in a new temporary workspace
    /// (removed when the harness is dropped).
    ///
    /// # Errors
    /// [`HarnessError::Workspace`] when the temporary folder cannot be made.
    pub fn new(agent: impl Into<Arc<Agent>>) -> Result<Self, HarnessError> {
        Ok(Self {
            agent: agent.into(),
            workspace: Workspace::Temporary(tempfile::tempdir()?),
            run: RunId::new("harness-run"),
            calls: AtomicUsize::new(0),
        })
    }

    /// A harness over `executor` alone.
    ///
    /// # Errors
    /// As [`ToolHarness::new`].
    pub fn for_executor(executor: ToolExecutor) -> Result<Self, HarnessError> {
        let agent = Agent::builder(executor).name("harness").build()?;
        Self::new(agent)
    }

    /// Works in `root` instead of a temporary folder.
    #[must_use]
    pub fn in_workspace(mut self, root: impl Into<PathBuf>) -> Self {
        self.workspace = Workspace::Given(root.into());
        self
    }

    /// Calls of the harness belong to run `run` (by default `harness-run`).
    #[must_use]
    pub fn in_run(mut self, run: impl Into<String>) -> Self {
        self.run = RunId::new(run.into());
        self
    }

    /// The workspace folder.
    #[must_use]
    pub fn workspace(&self) -> &Path {
        match &self.workspace {
            Workspace::Temporary(dir) => dir.path(),
            Workspace::Given(root) => root,
        }
    }

    /// Writes `contents` to `path` in the workspace (folders made as
    /// needed): a fixture for the file tools.
    ///
    /// # Errors
    /// The I/O failure.
    pub fn write_file(&self, path: &str, contents: &str) -> std::io::Result<()> {
        let path = self.workspace().join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, contents)
    }

    /// Reads `path` in the workspace.
    ///
    /// # Errors
    /// The I/O failure.
    pub fn read_file(&self, path: &str) -> std::io::Result<String> {
        std::fs::read_to_string(self.workspace().join(path))
    }

    /// Calls `tool` with `arguments` (the call id is `harness_<n>`).
    ///
    /// # Errors
    /// [`HarnessError::Context`] when the call's context cannot be made
    /// (the workspace cannot be opened).
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<ToolOutcome, HarnessError> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let call = ToolUseBlock::new(format!("harness_{n}"), tool, arguments);
        let cx = self
            .agent
            .context_builder(self.workspace(), self.run.clone())?
            .build();
        Ok(self.agent.executor().execute_one(call, &cx).await)
    }

    /// Calls `tool` and returns its result, failing the test (with the
    /// result's message) unless the call ran and succeeded.
    #[track_caller]
    pub fn call_ok<'a>(
        &'a self,
        tool: &'a str,
        arguments: Value,
    ) -> impl Future<Output = ToolResult> + 'a {
        let location = std::panic::Location::caller();
        async move {
            match self.call(tool, arguments).await {
                Ok(ToolOutcome::Finished { result, .. }) if !result.is_error() => result,
                Ok(ToolOutcome::Finished { result, .. }) => panic!(
                    "{location}: expected `{tool}` to succeed; it failed with `{}`: {}",
                    result.error_kind().map_or("error", |k| k.as_str()),
                    result.text_content()
                ),
                Ok(ToolOutcome::Waiting(request)) => panic!(
                    "{location}: expected `{tool}` to succeed; it waits for approval (request `{}`); decide it with `ToolHarness::decide`",
                    request.approval_id
                ),
                Err(err) => panic!("{location}: the call of `{tool}` could not be made: {err}"),
            }
        }
    }

    /// Resumes a call that waits for approval with `decision`.
    ///
    /// # Errors
    /// [`RuntimeError`] when the call does not wait, or the decision does
    /// not match it.
    pub async fn decide(
        &self,
        call_id: &str,
        decision: ApprovalDecision,
    ) -> Result<ToolOutcome, HarnessError> {
        let cx = self
            .agent
            .context_builder(self.workspace(), self.run.clone())?
            .build();
        Ok(self.agent.executor().resume(call_id, decision, &cx).await?)
    }
}
