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
//! Here: the owner of the children's names (offer, gate, answer, resume);
//! [`child`]: a child's run (its runner, start, resume, take-over, and what
//! it came to); [`take_over`]: a delegation cut off by a crash;
//! [`journal`]: where a child's steps are kept on a durable root;
//! [`results`]: what a child's run comes to as the parent's result.

mod child;
mod journal;
mod results;
mod served;
mod take_over;

pub use served::AgentTool;

use futures_util::StreamExt as _;
use iris_core::{BoxFuture, ToolErrorKind, ToolResult, ToolSpec, ToolUseBlock};
use iris_runtime::{ApprovalDecision, Permission, PermissionRequest, Reply};
use serde_json::Value;

use super::{Answered, Control, ItemReplies, Turn};
use crate::run::AgentRunner;
use crate::{ChildAgent, RunError, Wait, WaitingItem};

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

/// The owner of the agent's children's names: each child is offered as a
/// tool of its name while the tree may grow deeper.
#[derive(Clone, Default)]
pub(in crate::run) struct Delegator {
    pub(in crate::run) delegation: Delegation,
}

impl Control for Delegator {
    fn claims(&self, turn: &Turn<'_>, call: &ToolUseBlock) -> bool {
        turn.runner.agent.child(&call.name).is_some()
    }

    fn offer(&self, turn: &Turn<'_>, specs: &mut Vec<ToolSpec>) -> Result<(), RunError> {
        // Never discovery candidates, never in the executor's offer.
        if self.delegates(turn.runner) {
            specs.extend(
                turn.runner
                    .agent
                    .children()
                    .filter_map(|child| child.spec()),
            );
        }
        Ok(())
    }

    fn answer<'a>(
        &'a self,
        turn: &'a Turn<'a>,
        calls: Vec<ToolUseBlock>,
    ) -> BoxFuture<'a, Vec<Answered>> {
        Box::pin(async move {
            // Delegations to concurrency-safe children run at once (as many
            // as the delegation allows), the rest one at a time, in call
            // order.
            let (together, alone): (Vec<_>, Vec<_>) = calls
                .into_iter()
                .enumerate()
                .partition(|(_, call)| is_concurrent(turn.runner, call));
            let mut done: Vec<(usize, Answered)> = futures_util::stream::iter(together)
                .map(|(at, call)| async move { (at, self.delegate(turn, &call).await) })
                .buffered(self.at_once(turn.runner))
                .collect()
                .await;
            for (at, call) in alone {
                done.push((at, self.delegate(turn, &call).await));
            }
            done.sort_by_key(|(at, _)| *at);
            done.into_iter().map(|(_, answered)| answered).collect()
        })
    }

    fn resume<'a>(
        &'a self,
        turn: &'a Turn<'a>,
        item: WaitingItem,
        replies: ItemReplies,
        now: u64,
    ) -> BoxFuture<'a, Result<Answered, RunError>> {
        Box::pin(async move {
            let (call, wait) = item.into_parts();
            match (wait, replies.own) {
                (
                    Wait::Child {
                        agent,
                        depth,
                        state: child,
                    },
                    _,
                ) => {
                    let untouched = replies.under.is_empty()
                        && !child.pending().iter().any(|p| super::expired(&p.item, now));
                    if untouched {
                        let wait = Wait::Child {
                            agent,
                            depth,
                            state: child,
                        };
                        return Ok(Answered::Waiting(Box::new(WaitingItem::from_parts(
                            call, wait,
                        ))));
                    }
                    self.resume_child(turn, &call, *child, replies.under).await
                }
                // A person's word on starting a child agent.
                (Wait::Approval { .. }, Some(Reply::Decision(decision))) => {
                    Ok(self.decided(turn, &call, decision).await)
                }
                (wait, _) => Ok(Answered::Waiting(Box::new(WaitingItem::from_parts(
                    call, wait,
                )))),
            }
        })
    }

    fn take_over<'a>(
        &'a self,
        turn: &'a Turn<'a>,
        call: ToolUseBlock,
        kept: Option<WaitingItem>,
        replies: ItemReplies,
    ) -> BoxFuture<'a, Answered> {
        Box::pin(self.taken_over(turn, call, kept, replies))
    }
}

impl Delegator {
    /// Whether `runner`'s model is offered its agent's children.
    fn delegates(&self, runner: &AgentRunner) -> bool {
        runner.place.depth < self.delegation.max_depth
    }

    /// Children that may run at once: one at a time on an engine, whose
    /// journal the children share and must meet in the same order on every
    /// replay (siblings side by side would interleave their entries as
    /// their models happened to answer).
    fn at_once(&self, runner: &AgentRunner) -> usize {
        if runner.engine.is_some() {
            1
        } else {
            self.delegation.max_at_once
        }
    }

    /// Run control's answer to a call of a child: its input checked, the
    /// parent's policy asked, and the child run (or the call made to wait
    /// for a person's approval first).
    async fn delegate(&self, turn: &Turn<'_>, call: &ToolUseBlock) -> Answered {
        let runner = turn.runner;
        let Some(child) = runner
            .agent
            .child(&call.name)
            .filter(|_| self.delegates(runner))
        else {
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
        match gate(runner, child, call, &turn.state.run_id) {
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
                return Answered::Waiting(Box::new(WaitingItem::approval(
                    &turn.state.run_id,
                    call.clone(),
                    tool,
                    reason,
                )));
            }
        }
        self.start_child(turn, child, call, input).await
    }

    /// Starts a child that a person approved: its input as the call gave
    /// it.
    async fn start_approved(&self, turn: &Turn<'_>, call: &ToolUseBlock) -> Answered {
        let Some(child) = turn.runner.agent.child(&call.name) else {
            return refused(
                ToolErrorKind::ToolNotAvailable,
                format!("`{}` is not a child agent of this agent", call.name),
            );
        };
        match child_input(child, &call.input) {
            Ok(input) => self.start_child(turn, child, call, input).await,
            Err(why) => refused(ToolErrorKind::InvalidArguments, why),
        }
    }

    /// A person's `decision` on starting the child `call` delegates to.
    async fn decided(
        &self,
        turn: &Turn<'_>,
        call: &ToolUseBlock,
        decision: ApprovalDecision,
    ) -> Answered {
        match decision {
            ApprovalDecision::Approve { .. } => self.start_approved(turn, call).await,
            ApprovalDecision::Deny { reason } => refused(
                ToolErrorKind::PermissionDenied,
                format!("the user did not let `{}` start: {reason}", call.name),
            ),
        }
    }
}

/// Whether delegations of `call`'s child may run beside others.
fn is_concurrent(runner: &AgentRunner, call: &ToolUseBlock) -> bool {
    runner
        .agent
        .child(&call.name)
        .is_some_and(|child| child.is_concurrency_safe())
}

/// The policy of `runner`'s agent (and every ancestor's) on starting
/// `child` for `call` of `run`.
fn gate(
    runner: &AgentRunner,
    child: &ChildAgent,
    call: &ToolUseBlock,
    run: &iris_core::RunId,
) -> Permission {
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
    let own = runner.agent.executor().policy().check(&request);
    match &runner.place.ceiling {
        Some(ceiling) => ceiling.check(own, &request),
        None => own,
    }
}

/// A refusal the parent model reads; the child did not start.
fn refused(kind: ToolErrorKind, message: impl Into<String>) -> Answered {
    Answered::done(ToolResult::error(kind, message))
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
