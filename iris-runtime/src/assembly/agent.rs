//! An assembled agent: what the file described, built and ready.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use iris_core::{RunId, ToolContext, ToolContextBuilder};

use super::error::AssemblyError;
use super::file::ModelSection;
use super::names::Assembly;
use crate::ToolExecutor;
use crate::discovery::Discovery;
use crate::error::RuntimeError;
use crate::fs::FileService;
use crate::registry::ToolRegistry;

/// An agent assembled from its file: the registry, the executor (policy,
/// hooks, middleware and limits in place), discovery when tools are
/// deferred, and what the runner needs (instructions, model, step limit).
pub struct Agent {
    pub(crate) name: String,
    pub(crate) instructions: Option<String>,
    pub(crate) model: Option<ModelSection>,
    pub(crate) max_steps: Option<u32>,
    pub(crate) executor: ToolExecutor,
    pub(crate) discovery: Option<Arc<Discovery>>,
    pub(crate) uses_files: bool,
    pub(crate) origin: PathBuf,
    /// One file service per workspace, shared by every context made for
    /// it: what a run read is what its later edits are checked against.
    pub(crate) files: std::sync::Mutex<Vec<(PathBuf, Arc<FileService>)>>,
    pub(crate) results_budget: Option<usize>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.name)
            .field("origin", &self.origin)
            .field("model", &self.model)
            .field("max_steps", &self.max_steps)
            .field("tools", &self.executor.registry().len())
            .field("discovery", &self.discovery.is_some())
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// Assembles the agent file at `path`, naming functions and factories
    /// from the link-time catalog ([`Assembly::from_catalog`]).
    ///
    /// # Errors
    /// [`AssemblyError`] with every problem found, each with file, line,
    /// column and key path.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, AssemblyError> {
        Assembly::from_catalog().load(path)
    }

    /// The agent's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The system instructions (from `instructions` or `instructions_file`).
    #[must_use]
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The model configuration.
    #[must_use]
    pub fn model(&self) -> Option<&ModelSection> {
        self.model.as_ref()
    }

    /// Most model steps per run (`limits.max_steps`).
    #[must_use]
    pub fn max_steps(&self) -> Option<u32> {
        self.max_steps
    }

    /// Every tool the agent has, as of now (MCP servers' tools are kept
    /// current when their servers announce changes).
    #[must_use]
    pub fn registry(&self) -> Arc<ToolRegistry> {
        self.executor.registry()
    }

    /// The executor: permissions, hooks, middleware and limits in place.
    #[must_use]
    pub fn executor(&self) -> &ToolExecutor {
        &self.executor
    }

    /// Discovery, when some tool is deferred.
    #[must_use]
    pub fn discovery(&self) -> Option<&Arc<Discovery>> {
        self.discovery.as_ref()
    }

    /// Characters of tool results a request may carry before older
    /// observations are shortened (`context_policy.results_budget`).
    #[must_use]
    pub fn results_budget(&self) -> Option<usize> {
        self.results_budget
    }

    /// The file the agent was assembled from.
    #[must_use]
    pub fn origin(&self) -> &Path {
        &self.origin
    }

    /// A context for calls of run `run` in `workspace`, carrying what the
    /// agent's tools need: the file service for the built-in file tools (one
    /// per workspace, kept by the agent, so reads and edits of a run meet
    /// across steps), discovery for `tool_search`. Add more state to the
    /// builder before building it.
    ///
    /// # Errors
    /// [`RuntimeError`] when the workspace cannot be opened for the file
    /// tools.
    pub fn context_builder(
        &self,
        workspace: impl AsRef<Path>,
        run: RunId,
    ) -> Result<ToolContextBuilder, RuntimeError> {
        let workspace = workspace.as_ref();
        let mut builder = ToolContext::builder(workspace, run);
        if self.uses_files {
            builder = builder.shared_state(self.file_service(workspace)?);
        }
        if let Some(discovery) = &self.discovery {
            builder = builder.shared_state(Arc::clone(discovery));
        }
        Ok(builder)
    }

    fn file_service(&self, workspace: &Path) -> Result<Arc<FileService>, RuntimeError> {
        let mut files = self
            .files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, service)) = files.iter().find(|(root, _)| root == workspace) {
            return Ok(Arc::clone(service));
        }
        let service = Arc::new(FileService::open(workspace)?);
        files.push((workspace.to_path_buf(), Arc::clone(&service)));
        Ok(service)
    }
}
