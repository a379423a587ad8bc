//! Hooks: logic at fixed events of a run.
//!
//! | event | when | the hook may answer |
//! |---|---|---|
//! | `run.started` | [`ToolExecutor::start_run`](crate::ToolExecutor::start_run) | nothing (answers are ignored) |
//! | `run.finished` | [`ToolExecutor::finish_run`](crate::ToolExecutor::finish_run) | nothing |
//! | `tool.before` | after permission, before middleware and body | `{"decision": "deny", "reason": "..."}` |
//! | `tool.after` | after the body ran (never after a refusal or short-circuit) | `{"feedback": "..."}` |
//!
//! Every hook receives a [`HookInput`] as JSON:
//!
//! ```json
//! {"event": "tool.after", "run_id": "run-1", "call_id": "call_1", "tool": "square",
//!  "arguments": {"value": 4},
//!  "result": {"is_error": false, "error_kind": null, "text": "16", "data": 16}}
//! ```
//!
//! `call_id`, `tool` and `arguments` are present for tool events, `result`
//! for `tool.after` only. The answer is one JSON object: `{}` says nothing;
//! unknown keys are refused as malformed.
//!
//! Failures: a `tool.before` hook that fails, times out, exits non-zero or
//! answers malformed JSON denies the call, naming the hook (fail closed). A
//! `tool.after` failure is recorded in the result's `stats.hook_failures` and
//! adds no feedback. Run events log failures and go on.

mod command;
mod factory;

use rustc_hash::FxHashSet;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;

use iris_core::{BoxFuture, RunId, ToolErrorKind, ToolName, ToolResult};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use command::{CommandHook, MAX_STDERR_BYTES, MAX_STDOUT_BYTES};
pub use factory::HookFactories;

/// The events hooks attach to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookEvent {
    /// A run began.
    #[serde(rename = "run.started")]
    RunStarted,
    /// A run ended (not when it merely waits for a person).
    #[serde(rename = "run.finished")]
    RunFinished,
    /// A call is about to run.
    #[serde(rename = "tool.before")]
    ToolBefore,
    /// A call's body ran.
    #[serde(rename = "tool.after")]
    ToolAfter,
}

/// The result of a call, as `tool.after` hooks see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookResultView {
    /// Whether the call failed.
    pub is_error: bool,
    /// The failure kind, when it failed.
    pub error_kind: Option<ToolErrorKind>,
    /// The result's text blocks, joined.
    pub text: String,
    /// The result's host data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl HookResultView {
    pub(crate) fn of(result: &ToolResult) -> Self {
        Self {
            is_error: result.is_error(),
            error_kind: result.error_kind(),
            text: result.text_content(),
            data: result.data().cloned(),
        }
    }
}

/// What a hook receives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookInput {
    /// The event.
    pub event: HookEvent,
    /// The run.
    pub run_id: RunId,
    /// The call, for tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool's canonical name, for tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolName>,
    /// The call's arguments, for tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// The call's result, for `tool.after`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<HookResultView>,
}

/// A `tool.before` verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookDecision {
    /// Let the call go on (the same as saying nothing).
    Allow,
    /// Refuse the call.
    Deny,
}

/// What a hook answers; `{}` (the default) says nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookAnswer {
    /// `tool.before`: allow or deny.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<HookDecision>,
    /// Why, for a denial; the model reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `tool.after`: text the model reads after the real result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
}

impl HookAnswer {
    /// Nothing to say.
    #[must_use]
    pub fn nothing() -> Self {
        Self::default()
    }

    /// Deny the call, telling the model why.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self {
            decision: Some(HookDecision::Deny),
            reason: Some(reason.into()),
            feedback: None,
        }
    }

    /// Feedback the model reads after the result.
    pub fn feedback(text: impl Into<String>) -> Self {
        Self {
            feedback: Some(text.into()),
            ..Self::default()
        }
    }
}

/// Why a hook could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HookFailure {
    /// The hook ran past its deadline.
    #[error("did not answer within {0:?}")]
    Timeout(std::time::Duration),
    /// The command could not be started.
    #[error("could not start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// Reading or writing the command's pipes failed.
    #[error("talking to the command failed: {0}")]
    Io(#[source] std::io::Error),
    /// The command exited unsuccessfully.
    #[error("exited with {status}{}", stderr_note(.stderr))]
    Exit {
        /// The exit status.
        status: String,
        /// What it wrote to stderr.
        stderr: String,
    },
    /// The command wrote more than it may to one of its streams.
    #[error("wrote more than {limit} bytes to {stream}, so it was killed")]
    OutputTooLarge {
        /// `stdout` or `stderr`.
        stream: &'static str,
        /// The limit in bytes.
        limit: usize,
    },
    /// A hook written in code panicked.
    #[error("panicked: {0}")]
    Panicked(String),
    /// The answer was not one JSON object of the documented shape.
    #[error(
        "answered malformed JSON ({source}); expected one object such as `{{}}`, `{{\"decision\": \"deny\", \"reason\": \"...\"}}` or `{{\"feedback\": \"...\"}}`"
    )]
    Malformed {
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// A hook written in code reported a failure.
    #[error("{0}")]
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

/// The text of a panic's payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

fn stderr_note(stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; stderr: {stderr}")
    }
}

/// A hook's code.
pub trait HookHandler: Send + Sync + 'static {
    /// Answers one event.
    ///
    /// # Errors
    /// [`HookFailure`] when the hook cannot answer.
    fn handle<'a>(&'a self, input: &'a HookInput)
    -> BoxFuture<'a, Result<HookAnswer, HookFailure>>;
}

/// A hook from an async closure that takes the input by value.
pub fn hook_fn<F, Fut>(f: F) -> Arc<dyn HookHandler>
where
    F: Fn(HookInput) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<HookAnswer, HookFailure>> + Send + 'static,
{
    Arc::new(FnHook(f))
}

struct FnHook<F>(F);

impl<F, Fut> HookHandler for FnHook<F>
where
    F: Fn(HookInput) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<HookAnswer, HookFailure>> + Send + 'static,
{
    fn handle<'a>(
        &'a self,
        input: &'a HookInput,
    ) -> BoxFuture<'a, Result<HookAnswer, HookFailure>> {
        Box::pin((self.0)(input.clone()))
    }
}

/// A hook: a name, the event, which tools it watches and its handler.
#[derive(Clone)]
pub struct HookRegistration {
    name: String,
    event: HookEvent,
    tools: Option<Vec<String>>,
    handler: Arc<dyn HookHandler>,
    timeout: Duration,
}

/// How long any hook may take unless its registration says otherwise.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(30);

impl HookRegistration {
    /// A hook on every tool (for tool events).
    pub fn new(name: impl Into<String>, event: HookEvent, handler: Arc<dyn HookHandler>) -> Self {
        Self {
            name: name.into(),
            event,
            tools: None,
            handler,
            timeout: DEFAULT_HOOK_TIMEOUT,
        }
    }

    /// Sets the hook's deadline (default [`DEFAULT_HOOK_TIMEOUT`]); past
    /// it the hook counts as failed. A command hook's own deadline, when
    /// shorter, ends it first.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Runs the handler within the deadline; a panic is a failure like any
    /// other, never the caller's.
    async fn answer(&self, input: &HookInput) -> Result<HookAnswer, HookFailure> {
        let handled = AssertUnwindSafe(self.handler.handle(input)).catch_unwind();
        match tokio::time::timeout(self.timeout, handled).await {
            Err(_) => Err(HookFailure::Timeout(self.timeout)),
            Ok(Err(panic)) => Err(HookFailure::Panicked(panic_message(panic.as_ref()))),
            Ok(Ok(answer)) => answer,
        }
    }

    /// Only for calls of these tools (canonical call names, such as `write_file`).
    #[must_use]
    pub fn for_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// The hook's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    fn matches(&self, event: HookEvent, tool: Option<&ToolName>) -> bool {
        self.event == event
            && match (&self.tools, tool) {
                (Some(filter), Some(tool)) => filter.iter().any(|t| tool == t.as_str()),
                _ => true,
            }
    }
}

impl fmt::Debug for HookRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookRegistration")
            .field("name", &self.name)
            .field("event", &self.event)
            .field("tools", &self.tools)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// A hook that denied a call, or failed and so denied it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Denial {
    pub(crate) hook: String,
    pub(crate) reason: String,
}

/// Runs the registered hooks of each event, in registration order.
#[derive(Debug, Clone, Default)]
pub struct HookDispatcher {
    hooks: Vec<HookRegistration>,
}

impl HookDispatcher {
    /// Adds a hook after the ones already registered.
    pub fn register(&mut self, hook: HookRegistration) {
        self.hooks.push(hook);
    }

    /// Rewrites every tool filter to canonical names (an alias becomes its
    /// tool's name), so that a filter never silently matches nothing.
    ///
    /// # Errors
    /// [`RuntimeError::UnknownToolName`](crate::RuntimeError::UnknownToolName)
    /// for a name no registered tool answers to, with the closest names.
    pub(crate) fn resolve_tools(
        &mut self,
        registry: &crate::ToolRegistry,
    ) -> Result<(), crate::RuntimeError> {
        for hook in &mut self.hooks {
            if let Some(tools) = &mut hook.tools {
                for tool in tools.iter_mut() {
                    *tool = registry.canonical_name(tool, || {
                        format!("the tool filter of hook `{}`", hook.name)
                    })?;
                }
            }
        }
        Ok(())
    }

    pub(crate) fn has(&self, event: HookEvent) -> bool {
        self.hooks.iter().any(|h| h.event == event)
    }

    /// The tools that `tool.before`/`tool.after` hooks watch: `None` when
    /// one of them watches every tool, else the names in their filters
    /// (empty when there is no tool hook).
    pub(crate) fn watched_tools(&self) -> Option<FxHashSet<String>> {
        let mut names = FxHashSet::default();
        for hook in &self.hooks {
            if matches!(hook.event, HookEvent::ToolBefore | HookEvent::ToolAfter) {
                names.extend(hook.tools.as_ref()?.iter().cloned());
            }
        }
        Some(names)
    }

    /// Whether a hook of `event` watches `tool`.
    pub(crate) fn watches(&self, event: HookEvent, tool: &ToolName) -> bool {
        self.hooks.iter().any(|h| h.matches(event, Some(tool)))
    }

    fn matching<'a>(&'a self, input: &'a HookInput) -> impl Iterator<Item = &'a HookRegistration> {
        self.hooks
            .iter()
            .filter(|h| h.matches(input.event, input.tool.as_ref()))
    }

    /// `tool.before`: every matching hook runs; every denial is kept.
    pub(crate) async fn before(&self, input: &HookInput) -> Vec<Denial> {
        let mut denials = Vec::new();
        for hook in self.matching(input) {
            match hook.answer(input).await {
                Ok(answer) if answer.decision == Some(HookDecision::Deny) => denials.push(Denial {
                    hook: hook.name.clone(),
                    reason: answer
                        .reason
                        .unwrap_or_else(|| "no reason given".to_owned()),
                }),
                Ok(_) => {}
                Err(failure) => {
                    tracing::warn!(hook = %hook.name, %failure, "tool.before hook failed; denying the call");
                    denials.push(Denial {
                        hook: hook.name.clone(),
                        reason: format!("the hook failed ({failure}), so the call is refused"),
                    });
                }
            }
        }
        denials
    }

    /// `tool.after`: feedback in registration order, and failures.
    pub(crate) async fn after(&self, input: &HookInput) -> (Vec<String>, Vec<String>) {
        let mut feedback = Vec::new();
        let mut failures = Vec::new();
        for hook in self.matching(input) {
            match hook.answer(input).await {
                Ok(answer) => feedback.extend(answer.feedback.filter(|f| !f.trim().is_empty())),
                Err(failure) => {
                    tracing::warn!(hook = %hook.name, %failure, "tool.after hook failed");
                    failures.push(format!("{}: {failure}", hook.name));
                }
            }
        }
        (feedback, failures)
    }

    /// Run events: answers are ignored, failures logged.
    pub(crate) async fn notify(&self, input: &HookInput) {
        for hook in self.matching(input) {
            if let Err(failure) = hook.answer(input).await {
                tracing::warn!(hook = %hook.name, event = ?input.event, %failure, "run hook failed");
            }
        }
    }
}
