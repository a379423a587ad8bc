//! Hooks: logic at fixed events of a run.
//!
//! | event | when | the hook may answer |
//! |---|---|---|
//! | `run.started` | [`ToolExecutor::start_run`](crate::ToolExecutor::start_run) | `{"decision": "deny", "reason": "..."}` refuses the task (an input guardrail; it sees `request.messages`, the run's first messages) |
//! | `run.finished` | [`ToolExecutor::finish_run`](crate::ToolExecutor::finish_run) | nothing |
//! | `model.before` | before each request is sent (it sees instructions, messages, tools offered, settings) | `{"decision": "refuse", "reason": "..."}`, or a steer for this turn: `tools` (offer exactly these of the agent's), `instructions` (added), `temperature`, `max_tokens` |
//! | `model.after` | after each answer, before anything in it is acted on or recorded | `{"decision": "refuse", "reason": "..."}`, `{"decision": "retry", "feedback": "..."}`, `{"redact": "text kept"}` |
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
//! for `tool.after` only, `request` (`instructions`, `messages`, `tools`,
//! `settings`) for `model.before` and `answer` (`text`, `calls`) for
//! `model.after`. The answer is one JSON object: `{}` says nothing;
//! unknown keys are refused as malformed.
//!
//! Failures: a `tool.before` hook that fails, times out, exits non-zero or
//! answers malformed JSON denies the call, naming the hook (fail closed); a
//! `model.before` or `model.after` hook, or a `run.started` guard (or
//! command), that fails refuses its turn or run the same way. A `tool.after` failure is recorded in the result's
//! `stats.hook_failures` and adds no feedback. Run events log failures and
//! go on.
//!
//! In code, each event has its own answer type, so a wrong answer does not
//! compile: a `tool.before` hook answers [`BeforeAnswer`], a `tool.after`
//! hook [`AfterAnswer`], a run hook `()`. A hook is a type implementing
//! [`BeforeHook`], [`AfterHook`] or [`RunHook`], an `async fn` taking
//! `&HookInput`, or a closure; any of them may return the answer itself or
//! a `Result` of it:
//!
//! ```
//! use iris_runtime::hooks::{AfterAnswer, BeforeAnswer, HookInput, HookRegistration};
//!
//! async fn no_deletes(input: &HookInput) -> BeforeAnswer {
//!     match input.tool.as_ref().map(|t| t.as_str()) {
//!         Some("delete_file") => BeforeAnswer::deny("deleting is not allowed here"),
//!         _ => BeforeAnswer::Allow,
//!     }
//! }
//!
//! let text = String::from("Check the units.");
//! let hooks = [
//!     HookRegistration::before("no-deletes", no_deletes),
//!     HookRegistration::after("remind", move |_: &HookInput| AfterAnswer::feedback(&text)),
//! ];
//! ```

pub(crate) mod answer;
mod command;
mod handler;

use rustc_hash::FxHashSet;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;

use iris_core::{RunId, ToolErrorKind, ToolName, ToolResult};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub(crate) use answer::panic_message;
pub use answer::{
    AfterAnswer, BeforeAnswer, HookFailure, HookOutcome, IntoHookAnswer, ModelAfterAnswer,
    ModelBeforeAnswer, Steer,
};
pub use command::{CommandHook, MAX_HOOK_STDERR_BYTES, MAX_HOOK_STDOUT_BYTES};
use handler::Handler;

pub use handler::{AfterHook, BeforeHook, Hook, HookCode, IntoHook, RunHook};
#[doc(hidden)]
pub use handler::{
    AnswerLater, AnswerNow, Answering, ByFn, ByTrait, ErasedHook, HookFn, HookReturn, Made,
};

/// The events hooks attach to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// A request is about to be sent to the model.
    #[serde(rename = "model.before")]
    ModelBefore,
    /// The model answered; nothing in the answer was acted on yet.
    #[serde(rename = "model.after")]
    ModelAfter,
}

impl HookEvent {
    /// The event's name, as configuration and command hooks spell it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::RunStarted => "run.started",
            HookEvent::RunFinished => "run.finished",
            HookEvent::ToolBefore => "tool.before",
            HookEvent::ToolAfter => "tool.after",
            HookEvent::ModelBefore => "model.before",
            HookEvent::ModelAfter => "model.after",
        }
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
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
    /// The request about to be sent, for `model.before`: `instructions`,
    /// `messages` (the history as the model will read it), `tools` (the
    /// names offered) and `settings` (`temperature`, `max_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Value>,
    /// The model's answer, for `model.after`: `text`, and `calls` (each
    /// `id`, `tool`, `arguments`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Value>,
}

impl HookInput {
    /// The input of `event` for run `run_id`, with nothing else in it.
    #[must_use]
    pub fn of_run(event: HookEvent, run_id: RunId) -> Self {
        Self {
            event,
            run_id,
            call_id: None,
            tool: None,
            arguments: None,
            result: None,
            request: None,
            answer: None,
        }
    }
}

/// A hook: a name, the event, which tools it watches and its code.
#[derive(Clone)]
pub struct HookRegistration {
    name: String,
    event: HookEvent,
    tools: Option<Vec<String>>,
    hook: Hook,
    timeout: Duration,
    tree_wide: bool,
}

/// How long any hook may take unless its registration says otherwise.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(30);

impl HookRegistration {
    /// A hook on `event`, for every tool (for tool events). The executor's
    /// `build()` refuses a hook whose code cannot answer `event`.
    pub fn new(name: impl Into<String>, event: HookEvent, hook: Hook) -> Self {
        Self {
            name: name.into(),
            event,
            tools: None,
            hook,
            timeout: DEFAULT_HOOK_TIMEOUT,
            tree_wide: false,
        }
    }

    /// A `tool.before` hook, which may deny a call: code, or a [`Hook`]
    /// made already (as a factory makes them).
    pub fn before<M>(name: impl Into<String>, hook: impl HookCode<BeforeAnswer, M>) -> Self {
        Self::new(name, HookEvent::ToolBefore, hook.into_hook())
    }

    /// A `tool.after` hook, which may add feedback to a result: code, or a
    /// [`Hook`] made already.
    pub fn after<M>(name: impl Into<String>, hook: impl HookCode<AfterAnswer, M>) -> Self {
        Self::new(name, HookEvent::ToolAfter, hook.into_hook())
    }

    /// A `run.started` hook: code, or a [`Hook`] made already.
    pub fn run_started<M>(name: impl Into<String>, hook: impl HookCode<(), M>) -> Self {
        Self::new(name, HookEvent::RunStarted, hook.into_hook())
    }

    /// A `run.started` guard, which may refuse the task (its
    /// [`BeforeAnswer::Deny`] ends the run as refused before the model is
    /// asked): code, or a [`Hook`] made already.
    pub fn guard_start<M>(name: impl Into<String>, hook: impl HookCode<BeforeAnswer, M>) -> Self {
        Self::new(name, HookEvent::RunStarted, hook.into_hook())
    }

    /// A `model.before` hook, which may refuse or steer each turn: code, or
    /// a [`Hook`] made already.
    pub fn model_before<M>(
        name: impl Into<String>,
        hook: impl HookCode<ModelBeforeAnswer, M>,
    ) -> Self {
        Self::new(name, HookEvent::ModelBefore, hook.into_hook())
    }

    /// A `model.after` hook, which may refuse, retry or redact each
    /// answer: code, or a [`Hook`] made already.
    pub fn model_after<M>(
        name: impl Into<String>,
        hook: impl HookCode<ModelAfterAnswer, M>,
    ) -> Self {
        Self::new(name, HookEvent::ModelAfter, hook.into_hook())
    }

    /// A `run.finished` hook: code, or a [`Hook`] made already.
    pub fn run_finished<M>(name: impl Into<String>, hook: impl HookCode<(), M>) -> Self {
        Self::new(name, HookEvent::RunFinished, hook.into_hook())
    }

    /// Sets the hook's deadline (default [`DEFAULT_HOOK_TIMEOUT`]); past
    /// it the hook counts as failed, and a command hook's process (with
    /// everything it started) is killed.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Only for calls of these tools (names or aliases; the executor's
    /// `build()` refuses a name no tool answers to).
    #[must_use]
    pub fn for_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Makes a `tool.before`, `model.before` or `model.after` hook a guard
    /// over the whole tree of agents: it also judges every call (or model
    /// turn) of every child agent below this executor's agent, at any
    /// depth, beside the child's own hooks. A host's choice; a child's
    /// definition cannot drop it. (Other events are the agent's own:
    /// marking one refuses the executor's `build()`.)
    #[must_use]
    pub fn tree_wide(mut self) -> Self {
        self.tree_wide = true;
        self
    }

    /// The hook's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The event it is registered for.
    #[must_use]
    pub fn event(&self) -> HookEvent {
        self.event
    }
}

impl fmt::Debug for HookRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookRegistration")
            .field("name", &self.name)
            .field("event", &self.event)
            .field("tools", &self.tools)
            .field("hook", &self.hook)
            .field("timeout", &self.timeout)
            .field("tree_wide", &self.tree_wide)
            .finish()
    }
}

/// A hook as the dispatcher runs it: its code for its one event, its tool
/// filter in canonical names.
#[derive(Clone)]
struct Registered {
    name: String,
    event: HookEvent,
    tools: Option<Vec<String>>,
    handler: Handler,
    timeout: Duration,
    tree_wide: bool,
}

impl Registered {
    fn matches(&self, event: HookEvent, tool: Option<&ToolName>) -> bool {
        self.event == event
            && match (&self.tools, tool) {
                (Some(filter), Some(tool)) => filter.iter().any(|t| tool == t.as_str()),
                _ => true,
            }
    }

    /// Runs the hook's answer within the deadline; a panic, while the
    /// answer is made (a closure answering at once) or while it is awaited,
    /// is a failure like any other, never the caller's.
    async fn guarded<'a, A>(
        &self,
        answer: impl FnOnce() -> handler::Answering<'a, A>,
    ) -> Result<A, HookFailure> {
        let answer = match std::panic::catch_unwind(AssertUnwindSafe(answer)) {
            // A hook that answered at once: no future, no timer.
            Ok(handler::Answering::Now(answer)) => return answer,
            Ok(handler::Answering::Later(answer)) => answer,
            Err(panic) => return Err(HookFailure::Panicked(panic_message(panic.as_ref()))),
        };
        let mut handled = AssertUnwindSafe(answer).catch_unwind();
        // A hook that answers at once (most code hooks) needs no timer.
        if let Some(now) = std::pin::Pin::new(&mut handled).now_or_never() {
            return match now {
                Err(panic) => Err(HookFailure::Panicked(panic_message(panic.as_ref()))),
                Ok(answer) => answer,
            };
        }
        match tokio::time::timeout(self.timeout, handled).await {
            Err(_) => Err(HookFailure::Timeout(self.timeout)),
            Ok(Err(panic)) => Err(HookFailure::Panicked(panic_message(panic.as_ref()))),
            Ok(Ok(answer)) => answer,
        }
    }
}

/// The `tool.before` guards an agent holds over every agent below it
/// ([`HookRegistration::tree_wide`]), as its executor hands them down
/// ([`ToolExecutor::tree_guards`](crate::ToolExecutor::tree_guards)).
#[derive(Clone)]
pub struct TreeGuards(Arc<HookDispatcher>);

impl fmt::Debug for TreeGuards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.hooks.iter().map(|h| h.name.as_str()).collect();
        f.debug_tuple("TreeGuards").field(&names).finish()
    }
}

impl TreeGuards {
    pub(crate) fn dispatcher(&self) -> &HookDispatcher {
        &self.0
    }
}

/// The guards of every agent above the one a context's calls belong to: a
/// context extension
/// ([`ToolContextBuilder::extension`](iris_core::ToolContextBuilder::extension))
/// the runner gives a child agent's calls. Each guard judges the call
/// after the executor's own `tool.before` hooks; a denial refuses it.
#[derive(Clone, Debug, Default)]
pub struct InheritedGuards(Vec<TreeGuards>);

impl InheritedGuards {
    /// These guards, and `guards` below them.
    #[must_use]
    pub fn with(mut self, guards: TreeGuards) -> Self {
        self.0.push(guards);
        self
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &HookDispatcher> {
        self.0.iter().map(TreeGuards::dispatcher)
    }
}

/// Hears each hook that ran (its name) and how it answered.
pub(crate) type Fired<'a> = &'a (dyn Fn(&str, HookOutcome) + Send + Sync);

/// A hook that denied a call (or refused a task, a turn or an answer), or
/// failed and so refused it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// The hook's name.
    pub hook: String,
    /// Why.
    pub reason: String,
}

/// What the `model.before` hooks made of a turn: the steers merged, and
/// the hooks that steered it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Steered {
    /// The changes, merged in registration order.
    pub steer: Steer,
    /// The hooks that made them.
    pub by: Vec<String>,
}

/// What the `model.after` hooks made of an answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AfterVerdict {
    /// The text kept in place of the model's, and the last hook that
    /// changed it.
    pub redacted: Option<(String, String)>,
    /// A hook that sent the answer back, and its feedback.
    pub retry: Option<(String, String)>,
}

/// A hook that refused (a task, a turn or an answer): heard, and the
/// refusal naming it.
fn denied(hook: &Registered, reason: String, fired: Fired<'_>) -> Denial {
    fired(
        &hook.name,
        HookOutcome::Denied {
            reason: reason.clone(),
        },
    );
    Denial {
        hook: hook.name.clone(),
        reason,
    }
}

/// A model-turn hook that failed: logged, heard, and a refusal naming it.
fn failed(hook: &Registered, failure: &HookFailure, fired: Fired<'_>, what: &str) -> Denial {
    tracing::warn!(hook = %hook.name, %failure, "{} hook failed; refusing the {what}", hook.event);
    fired(
        &hook.name,
        HookOutcome::Failed {
            reason: failure.summary(),
        },
    );
    Denial {
        hook: hook.name.clone(),
        reason: format!(
            "the hook failed ({}), so the {what} is refused",
            failure.summary()
        ),
    }
}

/// Runs the registered hooks of each event, in registration order.
#[derive(Default)]
pub(crate) struct HookDispatcher {
    hooks: Vec<Registered>,
}

impl HookDispatcher {
    /// The hooks as they will run, every tool filter rewritten to canonical
    /// names (an alias becomes its tool's name) so that a filter never
    /// silently matches nothing.
    ///
    /// # Errors
    /// [`RuntimeError::UnknownToolName`](crate::RuntimeError::UnknownToolName)
    /// for a name no registered tool answers to, with the closest names;
    /// [`RuntimeError::HookEventMismatch`](crate::RuntimeError::HookEventMismatch)
    /// for a hook whose code cannot answer its event.
    pub(crate) fn new(
        registrations: Vec<HookRegistration>,
        registry: &crate::ToolRegistry,
    ) -> Result<Self, crate::RuntimeError> {
        let mut hooks = Vec::with_capacity(registrations.len());
        for registration in registrations {
            let HookRegistration {
                name,
                event,
                tools,
                hook,
                timeout,
                tree_wide,
            } = registration;
            if tree_wide
                && !matches!(
                    event,
                    HookEvent::ToolBefore | HookEvent::ModelBefore | HookEvent::ModelAfter
                )
            {
                return Err(crate::RuntimeError::TreeWideNotBefore {
                    hook: name,
                    event: event.as_str().to_owned(),
                });
            }
            let hook = hook.with_deadline(timeout);
            let Some(handler) = hook.for_event(event) else {
                return Err(crate::RuntimeError::HookEventMismatch {
                    hook: name,
                    event: event.as_str().to_owned(),
                    answers: hook.answers(),
                });
            };
            let tools = match tools {
                None => None,
                Some(tools) => Some(
                    tools
                        .iter()
                        .map(|tool| {
                            registry.canonical_name(tool, || {
                                format!("the tool filter of hook `{name}`")
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                ),
            };
            hooks.push(Registered {
                name,
                event,
                tools,
                handler,
                timeout,
                tree_wide,
            });
        }
        Ok(Self { hooks })
    }

    /// The guards marked tree-wide, for the agents below this one; `None`
    /// when there is none.
    pub(crate) fn tree_guards(&self) -> Option<TreeGuards> {
        let hooks: Vec<Registered> = self.hooks.iter().filter(|h| h.tree_wide).cloned().collect();
        (!hooks.is_empty()).then(|| TreeGuards(Arc::new(Self { hooks })))
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

    /// The names of the hooks of `event` that watch `tool`, in the order
    /// they run.
    pub(crate) fn names_watching(&self, event: HookEvent, tool: &ToolName) -> Vec<String> {
        self.hooks
            .iter()
            .filter(|h| h.matches(event, Some(tool)))
            .map(|h| h.name.clone())
            .collect()
    }

    /// Whether a hook of `event` watches `tool`.
    pub(crate) fn watches(&self, event: HookEvent, tool: &ToolName) -> bool {
        self.hooks.iter().any(|h| h.matches(event, Some(tool)))
    }

    fn matching<'a>(&'a self, input: &'a HookInput) -> impl Iterator<Item = &'a Registered> {
        self.hooks
            .iter()
            .filter(|h| h.matches(input.event, input.tool.as_ref()))
    }

    /// `tool.before`: every matching hook runs; every denial is kept.
    /// `fired` hears each hook's answer.
    pub(crate) async fn before(&self, input: &HookInput, fired: Fired<'_>) -> Vec<Denial> {
        let mut denials = Vec::new();
        for hook in self.matching(input) {
            let Handler::Before(handler) = &hook.handler else {
                continue;
            };
            match hook.guarded(|| handler.answer(input)).await {
                Ok(BeforeAnswer::Allow) => fired(&hook.name, HookOutcome::Allowed),
                Ok(BeforeAnswer::Deny { reason }) => {
                    fired(
                        &hook.name,
                        HookOutcome::Denied {
                            reason: reason.clone(),
                        },
                    );
                    denials.push(Denial {
                        hook: hook.name.clone(),
                        reason,
                    });
                }
                Err(failure) => {
                    tracing::warn!(hook = %hook.name, %failure, "tool.before hook failed; denying the call");
                    fired(
                        &hook.name,
                        HookOutcome::Failed {
                            reason: failure.summary(),
                        },
                    );
                    denials.push(Denial {
                        hook: hook.name.clone(),
                        reason: format!(
                            "the hook failed ({}), so the call is refused",
                            failure.summary()
                        ),
                    });
                }
            }
        }
        denials
    }

    /// `tool.after`: feedback in registration order, and failures. `fired`
    /// hears each hook's answer.
    pub(crate) async fn after(
        &self,
        input: &HookInput,
        fired: Fired<'_>,
    ) -> (Vec<String>, Vec<String>) {
        let mut feedback = Vec::new();
        let mut failures = Vec::new();
        for hook in self.matching(input) {
            let Handler::After(handler) = &hook.handler else {
                continue;
            };
            match hook.guarded(|| handler.answer(input)).await {
                Ok(AfterAnswer::Feedback(text)) if !text.trim().is_empty() => {
                    fired(&hook.name, HookOutcome::Feedback { text: text.clone() });
                    feedback.push(text);
                }
                Ok(_) => fired(&hook.name, HookOutcome::Allowed),
                Err(failure) => {
                    tracing::warn!(hook = %hook.name, %failure, "tool.after hook failed");
                    fired(
                        &hook.name,
                        HookOutcome::Failed {
                            reason: failure.summary(),
                        },
                    );
                    failures.push(format!("{}: {}", hook.name, failure.summary()));
                }
            }
        }
        (feedback, failures)
    }

    /// `run.started`: the run hooks are told, and the guards judge the
    /// task; the first refusal, if any. A guard that fails refuses the run
    /// (fail closed, as a `tool.before` hook refuses its call). `fired`
    /// hears each hook's answer.
    pub(crate) async fn start(&self, input: &HookInput, fired: Fired<'_>) -> Option<Denial> {
        let mut refused = None;
        for hook in self.matching(input) {
            let Handler::Before(handler) = &hook.handler else {
                continue;
            };
            match hook.guarded(|| handler.answer(input)).await {
                Ok(BeforeAnswer::Allow) => fired(&hook.name, HookOutcome::Allowed),
                Ok(BeforeAnswer::Deny { reason }) => {
                    let refusal = denied(hook, reason, fired);
                    refused.get_or_insert(refusal);
                }
                Err(failure) => {
                    let refusal = failed(hook, &failure, fired, "run");
                    refused.get_or_insert(refusal);
                }
            }
        }
        self.notify(input, fired).await;
        refused
    }

    /// `model.before`: every matching hook runs in registration order,
    /// each seeing the request as the hooks before it steered it; the first
    /// refusal (a failure refuses), else the steers merged.
    pub(crate) async fn model_before(
        &self,
        input: &mut HookInput,
        fired: Fired<'_>,
    ) -> Result<Steered, Denial> {
        let mut steered = Steered::default();
        for hook in self.hooks.iter().filter(|h| h.matches(input.event, None)) {
            let Handler::ModelBefore(handler) = &hook.handler else {
                continue;
            };
            let seen: &HookInput = input;
            match hook.guarded(|| handler.answer(seen)).await {
                Ok(ModelBeforeAnswer::Send) => fired(&hook.name, HookOutcome::Allowed),
                Ok(ModelBeforeAnswer::Steer(steer)) => {
                    fired(
                        &hook.name,
                        HookOutcome::Steered {
                            changed: steer.changed(),
                        },
                    );
                    if let Some(request) = input.request.as_mut() {
                        steer.apply_to(request);
                    }
                    steered.by.push(hook.name.clone());
                    steered.steer = std::mem::take(&mut steered.steer).then(steer);
                }
                Ok(ModelBeforeAnswer::Refuse { reason }) => {
                    return Err(denied(hook, reason, fired));
                }
                Err(failure) => return Err(failed(hook, &failure, fired, "turn")),
            }
        }
        Ok(steered)
    }

    /// `model.after`: every matching hook runs in registration order; the
    /// first refusal (a failure refuses) or retry ends the round, and
    /// redactions apply in order (each hook sees the text as the ones
    /// before it left it).
    pub(crate) async fn model_after(
        &self,
        input: &mut HookInput,
        fired: Fired<'_>,
    ) -> Result<AfterVerdict, Denial> {
        let mut answered = AfterVerdict::default();
        for hook in self.hooks.iter().filter(|h| h.matches(input.event, None)) {
            let Handler::ModelAfter(handler) = &hook.handler else {
                continue;
            };
            let seen: &HookInput = input;
            match hook.guarded(|| handler.answer(seen)).await {
                Ok(ModelAfterAnswer::Accept) => fired(&hook.name, HookOutcome::Allowed),
                Ok(ModelAfterAnswer::Redact { text }) => {
                    fired(&hook.name, HookOutcome::Redacted);
                    if let Some(answer) = input.answer.as_mut() {
                        answer["text"] = Value::String(text.clone());
                    }
                    answered.redacted = Some((hook.name.clone(), text));
                }
                Ok(ModelAfterAnswer::Retry { feedback }) => {
                    fired(
                        &hook.name,
                        HookOutcome::Retried {
                            feedback: feedback.clone(),
                        },
                    );
                    answered.retry = Some((hook.name.clone(), feedback));
                    return Ok(answered);
                }
                Ok(ModelAfterAnswer::Refuse { reason }) => return Err(denied(hook, reason, fired)),
                Err(failure) => return Err(failed(hook, &failure, fired, "answer")),
            }
        }
        Ok(answered)
    }

    /// Run events: failures logged. `fired` hears each hook's answer.
    pub(crate) async fn notify(&self, input: &HookInput, fired: Fired<'_>) {
        for hook in self.matching(input) {
            let Handler::Run(handler) = &hook.handler else {
                continue;
            };
            match hook.guarded(|| handler.answer(input)).await {
                Ok(()) => fired(&hook.name, HookOutcome::Allowed),
                Err(failure) => {
                    tracing::warn!(hook = %hook.name, event = ?input.event, %failure, "run hook failed");
                    fired(
                        &hook.name,
                        HookOutcome::Failed {
                            reason: failure.summary(),
                        },
                    );
                }
            }
        }
    }
}

impl fmt::Debug for HookDispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.hooks.iter().map(|h| (&h.name, h.event)))
            .finish()
    }
}
