//! Delegation to child agents, run control beside the executor: the
//! parent's call of a child never reaches the parent's executor (no hook or
//! middleware of the parent wraps it); the parent's policy, judging the
//! child by its name, lets it start, asks a person first, or refuses; the
//! child runs its own loop (its executor, hooks and middleware) under a run
//! id derived from the call, held to the policies of every agent above it,
//! to its limits capped by what the parent has left, and to the parent's
//! cancellation. A child that waits for a person makes the call a waiting
//! item holding the child's state; a resume continues the child where it
//! paused.
//!
//! Here: the delegation itself (gate, start, resume, take-over, settle);
//! [`journal`]: where a child's steps are kept on a durable root;
//! [`results`]: what a child's run comes to as the parent's result.

mod journal;
mod results;

use iris_runtime::telemetry::{execute_tool_span, tool_ended};
use journal::{Nested, UnderRoot};
use results::{cut_off, limit, output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tracing::Instrument as _;

use iris_core::{BoxFuture, RunId, ToolErrorKind, ToolResult, ToolSpec, ToolUseBlock};
use iris_model::{Message, Usage};
use iris_runtime::InheritedGuards;
use iris_runtime::journal::Journaled;
use iris_runtime::{
    ApprovalDecision, Permission, PermissionRequest, PolicyCeiling, Reply, RunEvent,
};
use serde_json::{Value, json};

use super::checkpoints::Checkpoints;
use super::{AgentRunner, RunContext};
use crate::children::child_run_id;
use crate::engine::Engine;
use crate::{ChildAgent, ChildRun, RunError, RunOutcome, RunState, WaitingItem};

/// How far a runner's runs delegate to child agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delegation {
    max_depth: u32,
    max_at_once: usize,
}

impl Default for Delegation {
    fn default() -> Self {
        Self::new()
    }
}

impl Delegation {
    /// How deep delegation goes unless set: the root's children run, and
    /// delegate no further.
    pub const DEFAULT_MAX_DEPTH: u32 = 1;
    /// Children of one run that run at once unless set.
    pub const DEFAULT_MAX_AT_ONCE: usize = 4;

    /// [`Self::DEFAULT_MAX_DEPTH`] levels, [`Self::DEFAULT_MAX_AT_ONCE`] at once.
    #[must_use]
    pub fn new() -> Self {
        Self {
            max_depth: Self::DEFAULT_MAX_DEPTH,
            max_at_once: Self::DEFAULT_MAX_AT_ONCE,
        }
    }

    /// Children nest at most `depth` levels under the root (0: the model is
    /// never offered a child). A child at the last level is offered no
    /// children of its own.
    #[must_use]
    pub fn max_depth(mut self, depth: u32) -> Self {
        self.max_depth = depth;
        self
    }

    /// At most `count` concurrency-safe delegations of one step run at
    /// once (at least one).
    #[must_use]
    pub fn max_at_once(mut self, count: usize) -> Self {
        self.max_at_once = count.max(1);
        self
    }
}

/// Where a runner runs in a tree of agents, and what a child's runner is
/// held to.
#[derive(Clone, Default)]
pub(super) struct Place {
    /// The run at the root of the tree; `None` for a root runner.
    root: Option<RunId>,
    /// 0 for a root.
    depth: u32,
    /// The policies of the agents above.
    pub(super) ceiling: Option<PolicyCeiling>,
    /// The guards the agents above hold over the whole tree.
    pub(super) guards: Option<InheritedGuards>,
    /// A child's step limit, over its agent's.
    pub(super) max_steps: Option<u32>,
    /// A child's token budget.
    max_tokens: Option<u64>,
    /// Where a child's calls are claimed and recorded on a root with a
    /// store: the root's journal, under the root's run.
    pub(super) journal: Option<Journaled>,
    /// Where a child on a root with a store keeps its state at each step
    /// boundary.
    pub(super) checkpoints: Option<Checkpoints>,
}

impl Place {
    /// Whether the runner runs the root of its tree.
    pub(super) fn is_root(&self) -> bool {
        self.root.is_none()
    }
}

/// How a child that ran before goes on.
#[derive(Clone, Copy)]
enum Continue {
    /// From a pause, with a person's replies.
    Resume,
    /// From its last kept step, after a crash.
    TakeOver,
}

/// What run control made of one delegation.
pub(super) enum Delegated {
    /// The call's result, and the child's run when one ran (its usage to
    /// roll up, its history to keep apart).
    Finished(ToolResult, Option<Box<ChildRun>>),
    /// The child (or the person asked before it starts) waits.
    Waiting(Box<WaitingItem>),
}

impl AgentRunner {
    /// Whether this runner's model is offered its agent's children.
    pub(super) fn delegates(&self) -> bool {
        self.place.depth < self.delegation.max_depth
    }

    /// The specs of the children this runner's model is offered.
    pub(super) fn child_specs(&self) -> impl Iterator<Item = ToolSpec> + '_ {
        self.agent
            .children()
            .filter(|_| self.delegates())
            .filter_map(|child| child.spec())
    }

    /// Whether `call` delegates to a child of the agent.
    pub(super) fn is_delegation(&self, call: &ToolUseBlock) -> bool {
        self.agent.child(&call.name).is_some()
    }

    /// Children that may run at once: one at a time on an engine, whose
    /// journal the children share and must meet in the same order on every
    /// replay (siblings side by side would interleave their entries as
    /// their models happened to answer).
    pub(super) fn children_at_once(&self) -> usize {
        if self.engine.is_some() {
            1
        } else {
            self.delegation.max_at_once
        }
    }

    /// Whether delegations of `call`'s child may run beside others.
    pub(super) fn is_concurrent_delegation(&self, call: &ToolUseBlock) -> bool {
        self.agent
            .child(&call.name)
            .is_some_and(|child| child.is_concurrency_safe())
    }

    /// Run control's answer to a call of a child: its input checked, the
    /// parent's policy asked, and the child run (or the call made to wait
    /// for a person's approval first).
    pub(super) async fn delegate(
        &self,
        call: &ToolUseBlock,
        parent: &RunState,
        cx: &RunContext,
    ) -> Delegated {
        let Some(child) = self.agent.child(&call.name).filter(|_| self.delegates()) else {
            return refused(
                ToolErrorKind::ToolNotAvailable,
                format!(
                    "`{}` is not offered at this depth: child agents here delegate no further; do the task with your own tools",
                    call.name
                ),
            );
        };
        let input = match child_input(child, &call.input) {
            Ok(input) => input,
            Err(why) => {
                return refused(
                    ToolErrorKind::InvalidArguments,
                    format!("{why}; the child agent did not start"),
                );
            }
        };
        match self.gate(child, call, &parent.run_id) {
            Permission::Allow => {}
            Permission::Deny { reason } => {
                return refused(ToolErrorKind::PermissionDenied, reason);
            }
            Permission::Ask { reason } => {
                let Some(tool) = child.definition().map(|d| d.name().clone()) else {
                    return refused(
                        ToolErrorKind::ToolNotAvailable,
                        format!("`{}` cannot be offered to a model", call.name),
                    );
                };
                return Delegated::Waiting(Box::new(WaitingItem::approval(
                    &parent.run_id,
                    call.clone(),
                    tool,
                    reason,
                )));
            }
        }
        self.start_child(child, call, input, parent, cx).await
    }

    /// Starts `child` on `input` for `call`: after the parent's policy
    /// allowed it, or a person approved.
    ///
    /// Boxed, with its `Send` said outright: a child's loop is this same
    /// loop one level down, and the compiler cannot see through the cycle.
    pub(super) fn start_child<'a>(
        &'a self,
        child: &'a ChildAgent,
        call: &'a ToolUseBlock,
        input: String,
        parent: &'a RunState,
        cx: &'a RunContext,
    ) -> BoxFuture<'a, Delegated> {
        Box::pin(self.start_child_now(child, call, input, parent, cx))
    }

    async fn start_child_now(
        &self,
        child: &ChildAgent,
        call: &ToolUseBlock,
        input: String,
        parent: &RunState,
        cx: &RunContext,
    ) -> Delegated {
        let runner = self.child_runner(child, parent);
        let child_cx = child_context(cx, &parent.run_id, &call.id);
        self.announce(child, call, parent, None);
        let mut messages = Vec::new();
        if child.sees_history() {
            // The history before the step that delegated.
            let before = parent.messages.len().saturating_sub(1);
            messages.extend_from_slice(&parent.messages[..before]);
        }
        messages.push(Message::User { text: input });
        let preloaded = self.preload(child, &runner, &mut messages, &child_cx.run_id);
        let timer = Deadline::start(child, &child_cx);
        // The child's run nests under the delegating call's span.
        let span = execute_tool_span(&call.id, &call.name, &call.input);
        let outcome = runner
            .start(messages, preloaded, &child_cx)
            .instrument(span.clone())
            .await;
        let ran_out = timer.stop();
        let delegated = self.settle_child(child, call, parent, &runner, outcome, ran_out);
        if let Delegated::Finished(result, _) = &delegated {
            tool_ended(&span, result);
        }
        delegated
    }

    /// Continues the child of `item` (a call of `parent` that waits on it)
    /// with `replies` keyed by the child's own item ids.
    /// Boxed as [`AgentRunner::start_child`] is.
    pub(super) fn resume_child<'a>(
        &'a self,
        call: &'a ToolUseBlock,
        child_state: RunState,
        replies: Vec<(String, Reply)>,
        parent: &'a RunState,
        cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<Delegated, RunError>> {
        Box::pin(self.continue_child(call, child_state, replies, parent, cx, Continue::Resume))
    }

    /// Takes over the child of `call`, cut off by a crash after it kept
    /// `child_state` at a step boundary: the calls of its last step go
    /// through its executor again, where the root's journal answers for
    /// those that ran or were cut off, and the child goes on.
    /// Boxed as [`AgentRunner::start_child`] is.
    pub(super) fn take_over_child<'a>(
        &'a self,
        call: &'a ToolUseBlock,
        child_state: RunState,
        replies: Vec<(String, Reply)>,
        parent: &'a RunState,
        cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<Delegated, RunError>> {
        Box::pin(self.continue_child(call, child_state, replies, parent, cx, Continue::TakeOver))
    }

    async fn continue_child(
        &self,
        call: &ToolUseBlock,
        child_state: RunState,
        replies: Vec<(String, Reply)>,
        parent: &RunState,
        cx: &RunContext,
        how: Continue,
    ) -> Result<Delegated, RunError> {
        let Some(child) = self.agent.child(&call.name) else {
            return Err(RunError::StateMismatch {
                run_id: parent.run_id.clone(),
                why: format!(
                    "call `{}` waits on child agent `{}`, which this agent does not have",
                    call.id, call.name
                ),
            });
        };
        let runner = self.child_runner(child, parent);
        let child_cx = child_context(cx, &parent.run_id, &call.id);
        let timer = Deadline::start(child, &child_cx);
        let span = execute_tool_span(&call.id, &call.name, &call.input);
        let outcome = match how {
            Continue::Resume => {
                runner
                    .resume(child_state, replies, &child_cx)
                    .instrument(span.clone())
                    .await
            }
            Continue::TakeOver => {
                async {
                    let outcome = runner
                        .take_over(child_state, replies, &child_cx, &mut None)
                        .await?;
                    runner.hand_out(outcome, &mut None).await
                }
                .instrument(span.clone())
                .await
            }
        };
        let ran_out = timer.stop();
        let outcome = match outcome {
            Err(err) if err.refused_before_running() => return Err(err),
            other => other,
        };
        let delegated = self.settle_child(child, call, parent, &runner, outcome, ran_out);
        if let Delegated::Finished(result, _) = &delegated {
            tool_ended(&span, result);
        }
        Ok(delegated)
    }

    /// Starts a child that a person approved: its input as the call gave
    /// it.
    pub(super) async fn start_approved_child(
        &self,
        call: &ToolUseBlock,
        parent: &RunState,
        cx: &RunContext,
    ) -> Delegated {
        let Some(child) = self.agent.child(&call.name) else {
            return refused(
                ToolErrorKind::ToolNotAvailable,
                format!("`{}` is not a child agent of this agent", call.name),
            );
        };
        match child_input(child, &call.input) {
            Ok(input) => self.start_child(child, call, input, parent, cx).await,
            Err(why) => refused(ToolErrorKind::InvalidArguments, why),
        }
    }

    /// A person's `decision` on starting the child `call` delegates to.
    pub(super) async fn decided_child(
        &self,
        call: &ToolUseBlock,
        decision: ApprovalDecision,
        parent: &RunState,
        cx: &RunContext,
    ) -> Delegated {
        match decision {
            ApprovalDecision::Approve { .. } => self.start_approved_child(call, parent, cx).await,
            ApprovalDecision::Deny { reason } => refused(
                ToolErrorKind::PermissionDenied,
                format!("the user did not let `{}` start: {reason}", call.name),
            ),
        }
    }

    /// The parent's policy (and every ancestor's) on starting `child`.
    fn gate(&self, child: &ChildAgent, call: &ToolUseBlock, run: &RunId) -> Permission {
        let Some(definition) = child.definition() else {
            return Permission::Deny {
                reason: format!("`{}` cannot be offered to a model", call.name),
            };
        };
        let request = PermissionRequest {
            definition: &definition,
            arguments: &call.input,
            read_only: false,
            run_id: run,
        };
        let own = self.agent.executor().policy().check(&request);
        match &self.place.ceiling {
            Some(ceiling) => ceiling.check(own, &request),
            None => own,
        }
    }

    /// The runner of one delegation to `child` from `parent`.
    fn child_runner(&self, child: &ChildAgent, parent: &RunState) -> AgentRunner {
        let model = child
            .own_model()
            .map_or_else(|| Arc::clone(&self.model), Arc::clone);
        let mut runner = AgentRunner::from_parts(Arc::clone(child.agent()), model);
        if runner.model_config.is_none() {
            runner.model_config.clone_from(&self.model_config);
        }
        runner.questions.clone_from(&self.questions);
        runner.delegation = self.delegation;
        // A child's state travels inside its root's, sealed there.
        runner.sealing = super::Sealing::Trusted;
        runner.engine = self
            .engine
            .as_ref()
            .map(|engine| Arc::new(Nested(Arc::clone(engine))) as Arc<dyn Engine>);
        let parent_left = self.max_steps().saturating_sub(parent.step);
        let tokens_left = self
            .place
            .max_tokens
            .map(|max| max.saturating_sub(total(&parent.usage)));
        let ceiling = self
            .place
            .ceiling
            .clone()
            .unwrap_or_default()
            .with(self.agent.executor().policy(), child.reach());
        let root = self.root_of(parent);
        // On an engine the nested engine journals; on a store the child's
        // calls are claimed under the root's run, so that a process taking
        // the run over finds what they did.
        let journal = match (&self.engine, &self.durable) {
            (Some(_), _) => None,
            (None, Some(durable)) => Some(Journaled(Arc::new(UnderRoot {
                inner: durable.keyed_journal(),
                root: root.clone(),
            }))),
            (None, None) => self.place.journal.clone(),
        };
        let checkpoints = self.child_checkpoints(&root);
        let guards = match self.agent.executor().tree_guards() {
            Some(own) => Some(self.place.guards.clone().unwrap_or_default().with(own)),
            None => self.place.guards.clone(),
        };
        runner.place = Place {
            root: Some(root),
            journal,
            checkpoints,
            guards,
            depth: self.place.depth + 1,
            ceiling: Some(ceiling),
            max_steps: Some(child.steps().min(parent_left)),
            max_tokens: match (child.tokens(), tokens_left) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        };
        runner
    }

    /// The step limit of this runner's runs.
    pub(super) fn max_steps(&self) -> u32 {
        self.place
            .max_steps
            .or(self.agent.max_steps())
            .unwrap_or(crate::Agent::DEFAULT_MAX_STEPS)
    }

    /// Whether a run that used `usage` has spent its token budget.
    pub(super) fn out_of_tokens(&self, usage: &Usage) -> bool {
        self.place.max_tokens.is_some_and(|max| total(usage) >= max)
    }

    pub(super) fn root_of(&self, parent: &RunState) -> RunId {
        self.place
            .root
            .clone()
            .unwrap_or_else(|| parent.run_id.clone())
    }

    /// Tells observers a child started (`ending` `None`) or ended.
    fn announce(
        &self,
        child: &ChildAgent,
        call: &ToolUseBlock,
        parent: &RunState,
        ending: Option<&str>,
    ) {
        let root_run_id = self.root_of(parent);
        let run_id = child_run_id(&parent.run_id, &call.id);
        let (parent_run_id, parent_call_id) = (parent.run_id.clone(), call.id.clone());
        let (agent, depth) = (child.name().to_owned(), self.place.depth + 1);
        self.agent.executor().emit_event(match ending {
            None => RunEvent::ChildStarted {
                root_run_id,
                run_id,
                parent_run_id,
                parent_call_id,
                agent,
                depth,
            },
            Some(ending) => RunEvent::ChildEnded {
                root_run_id,
                run_id,
                parent_run_id,
                parent_call_id,
                agent,
                depth,
                ending: ending.to_owned(),
            },
        });
    }

    /// What the parent's call gets of the child's `outcome`.
    fn settle_child(
        &self,
        child: &ChildAgent,
        call: &ToolUseBlock,
        parent: &RunState,
        runner: &AgentRunner,
        outcome: Result<RunOutcome, RunError>,
        ran_out: bool,
    ) -> Delegated {
        let name = child.name();
        let (ending, result, state) = match outcome {
            Ok(RunOutcome::Waiting(state)) => {
                return Delegated::Waiting(Box::new(WaitingItem::child(
                    call.clone(),
                    self.place.depth + 1,
                    state,
                )));
            }
            Ok(RunOutcome::Finished { text, state }) => {
                let result = output(child, &text).map(|result| {
                    let output = result
                        .data()
                        .cloned()
                        .unwrap_or_else(|| Value::String(text.clone()));
                    result.with_data(json!({
                        "agent": name,
                        "run_id": state.run_id,
                        "steps": state.step,
                        "usage": state.usage,
                        "output": output,
                    }))
                });
                let result = result.unwrap_or_else(|err| err);
                ("finished", result, Some(state))
            }
            Ok(RunOutcome::CutOff { text, state }) => {
                ("cut_off", cut_off(name, text, &state), Some(state))
            }
            Ok(RunOutcome::MaxSteps(state)) => {
                let (ending, what) = if runner.out_of_tokens(&state.usage) {
                    (
                        "max_tokens",
                        format!("its token budget ({} used)", total(&state.usage)),
                    )
                } else {
                    ("max_steps", format!("its {} steps", state.step))
                };
                let result = limit(
                    name,
                    ending,
                    &format!(
                        "child agent `{name}` used {what} without finishing; give it a narrower task, or do the rest yourself"
                    ),
                    &state,
                );
                (ending, result, Some(state))
            }
            Ok(RunOutcome::Cancelled(state)) if ran_out => {
                let result = limit(
                    name,
                    "deadline",
                    &format!(
                        "child agent `{name}` ran out of time before it finished; give it a narrower task, or do the rest yourself"
                    ),
                    &state,
                );
                ("deadline", result, Some(state))
            }
            Ok(RunOutcome::Cancelled(state)) => {
                let result = ToolResult::error(
                    ToolErrorKind::Cancelled,
                    format!("child agent `{name}` was cancelled with the run"),
                )
                .with_data(json!({"status": "cancelled", "agent": name}));
                ("cancelled", result, Some(state))
            }
            Err(err) => {
                let result = ToolResult::error(
                    ToolErrorKind::Execution,
                    format!("child agent `{name}` failed: {err}"),
                )
                .with_data(json!({"status": "failed", "agent": name}));
                ("failed", result, None)
            }
        };
        self.announce(child, call, parent, Some(ending));
        let run = state.map(|state| {
            Box::new(ChildRun {
                call_id: call.id.clone(),
                agent: name.to_owned(),
                depth: self.place.depth + 1,
                ending: ending.to_owned(),
                state,
            })
        });
        Delegated::Finished(result, run)
    }
}

/// A refusal the parent model reads; the child did not start.
fn refused(kind: ToolErrorKind, message: impl Into<String>) -> Delegated {
    Delegated::Finished(ToolResult::error(kind, message), None)
}

/// The child's first message from the parent model's arguments: the
/// `task`, or a typed input as JSON.
fn child_input(child: &ChildAgent, input: &Value) -> Result<String, String> {
    let Some(object) = input.as_object() else {
        return Err("the arguments must be an object".to_owned());
    };
    if child.takes_task() {
        if let Some(extra) = object.keys().find(|k| k.as_str() != "task") {
            return Err(format!(
                "unknown argument `{}`; a child agent takes only `task`",
                iris_runtime::__wings::shorten(extra)
            ));
        }
        return match object.get("task").and_then(Value::as_str) {
            Some(task) if !task.trim().is_empty() => Ok(task.to_owned()),
            _ => Err("`task` must be text saying what to do".to_owned()),
        };
    }
    let schema = child.parameters();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    if let Some(missing) = required
        .iter()
        .filter_map(Value::as_str)
        .find(|key| !object.contains_key(*key))
    {
        return Err(format!("`{missing}` is missing"));
    }
    Ok(input.to_string())
}

/// A child run's context: its derived run id, the parent's cancellation
/// (cancelling the parent cancels every descendant) and the tree's count
/// of questions.
fn child_context(cx: &RunContext, parent: &RunId, call_id: &str) -> RunContext {
    let mut child = RunContext::new(cx.workspace.clone(), child_run_id(parent, call_id))
        .with_cancellation(cx.cancel.child_token());
    // A child's questions count toward its root's cap.
    child.questions.clone_from(&cx.questions);
    child
}

/// A child's deadline while it runs: cancels its run when it passes.
struct Deadline {
    timer: Option<tokio::task::JoinHandle<()>>,
    passed: Arc<AtomicBool>,
}

impl Deadline {
    fn start(child: &ChildAgent, cx: &RunContext) -> Self {
        let passed = Arc::new(AtomicBool::new(false));
        let timer = child.time().map(|time| {
            let (cancel, passed) = (cx.cancel.clone(), Arc::clone(&passed));
            tokio::spawn(async move {
                tokio::time::sleep(time).await;
                passed.store(true, Ordering::Release);
                cancel.cancel();
            })
        });
        Self { timer, passed }
    }

    /// Stops the timer; whether the deadline passed.
    fn stop(self) -> bool {
        if let Some(timer) = self.timer {
            timer.abort();
        }
        self.passed.load(Ordering::Acquire)
    }
}

/// Tokens a run used, read and written.
fn total(usage: &Usage) -> u64 {
    usage.total()
}
