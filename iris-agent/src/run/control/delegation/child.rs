//! A child's run: its runner (held to what the parent has left and to every
//! policy above it), its start, its resume from a pause, its take-over
//! after a crash, and what it came to as the parent's result.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use iris_core::{BoxFuture, RunId, ToolUseBlock};
use iris_model::Message;
use iris_runtime::journal::Journaled;
use iris_runtime::telemetry::{execute_tool_span, tool_ended};
use iris_runtime::{Reply, RunEvent};
use serde_json::json;
use tracing::Instrument as _;

use super::journal::{Nested, UnderRoot};
use super::results::{Ending, ending, output_result};
use super::{Delegator, Turn};
use crate::children::child_run_id;
use crate::engine::Engine;
use crate::run::checkpoints::Checkpoints;
use crate::run::control::Answered;
use crate::run::place::Place;
use crate::run::{AgentRunner, RunContext, Sealing};
use crate::{ChildAgent, ChildRun, RunError, RunOutcome, RunState};

/// How a child that ran before goes on.
#[derive(Clone, Copy)]
pub(super) enum Continue {
    /// From a pause, with a person's replies.
    Resume,
    /// From its last kept step, after a crash.
    TakeOver,
}

impl Delegator {
    /// Starts `child` on `input` for `call` of the turn's run: after the
    /// parent's policy allowed it, or a person approved.
    ///
    /// Boxed, with its `Send` said outright: a child's loop is this same
    /// loop one level down, and the compiler cannot see through the cycle.
    pub(super) fn start_child<'a>(
        &'a self,
        turn: &'a Turn<'a>,
        child: &'a ChildAgent,
        call: &'a ToolUseBlock,
        input: String,
    ) -> BoxFuture<'a, Answered> {
        Box::pin(self.start_child_now(turn, child, call, input))
    }

    async fn start_child_now(
        &self,
        turn: &Turn<'_>,
        child: &ChildAgent,
        call: &ToolUseBlock,
        input: String,
    ) -> Answered {
        let parent = turn.state;
        let runner = self.child_runner(turn, child);
        let child_cx = child_context(turn.cx, &parent.run_id, &call.id);
        announce(turn, child, call, None);
        let mut messages = Vec::new();
        if child.sees_history() {
            // The history before the step that delegated.
            let before = parent.messages.len().saturating_sub(1);
            messages.extend_from_slice(&parent.messages[..before]);
        }
        messages.push(Message::User { text: input });
        let preloaded = turn.runner.control.skills.preload(
            turn.runner,
            child,
            &runner,
            &mut messages,
            &child_cx.run_id,
        );
        let timer = Deadline::start(child, &child_cx);
        // The child's run nests under the delegating call's span.
        let span = execute_tool_span(&call.id, &call.name, &call.input);
        let outcome = runner
            .start(messages, preloaded, &child_cx)
            .instrument(span.clone())
            .await;
        let ran_out = timer.stop();
        let answered = settle(turn, child, call, &runner, outcome, ran_out);
        if let Answered::Finished(result, _) = &answered {
            tool_ended(&span, result);
        }
        answered
    }

    /// Continues the child of `call` (a call of the turn's run that waits
    /// on it) from `child_state`, with `replies` keyed by the child's own
    /// item paths: from its pause, or (`how`) from its last kept step after
    /// a crash, where the root's journal answers for the calls that ran or
    /// were cut off.
    /// Boxed as [`Delegator::start_child`] is.
    pub(super) fn continue_child<'a>(
        &'a self,
        turn: &'a Turn<'a>,
        call: &'a ToolUseBlock,
        child_state: RunState,
        replies: Vec<(String, Reply)>,
        how: Continue,
    ) -> BoxFuture<'a, Result<Answered, RunError>> {
        Box::pin(self.continue_child_now(turn, call, child_state, replies, how))
    }

    /// [`Delegator::continue_child`] from a pause.
    pub(super) async fn resume_child(
        &self,
        turn: &Turn<'_>,
        call: &ToolUseBlock,
        child_state: RunState,
        replies: Vec<(String, Reply)>,
    ) -> Result<Answered, RunError> {
        self.continue_child(turn, call, child_state, replies, Continue::Resume)
            .await
    }

    async fn continue_child_now(
        &self,
        turn: &Turn<'_>,
        call: &ToolUseBlock,
        child_state: RunState,
        replies: Vec<(String, Reply)>,
        how: Continue,
    ) -> Result<Answered, RunError> {
        let parent = turn.state;
        let Some(child) = turn.runner.agent.child(&call.name) else {
            return Err(RunError::StateMismatch {
                run_id: parent.run_id.clone(),
                why: format!(
                    "call `{}` waits on child agent `{}`, which this agent does not have",
                    call.id, call.name
                ),
            });
        };
        let runner = self.child_runner(turn, child);
        let child_cx = child_context(turn.cx, &parent.run_id, &call.id);
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
                // The child's last kept step knew more of the tree's spend
                // than its root's state, kept before the child ran on.
                if let Some(ledger) = &child_cx.budget {
                    ledger.raise_to(&child_state.spent);
                }
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
        let answered = settle(turn, child, call, &runner, outcome, ran_out);
        if let Answered::Finished(result, _) = &answered {
            tool_ended(&span, result);
        }
        Ok(answered)
    }

    /// The runner of one delegation to `child` from the turn's run.
    fn child_runner(&self, turn: &Turn<'_>, child: &ChildAgent) -> AgentRunner {
        let (parent_runner, parent) = (turn.runner, turn.state);
        let model = child
            .own_model()
            .map_or_else(|| Arc::clone(&parent_runner.model), Arc::clone);
        let mut runner = AgentRunner::from_parts(Arc::clone(child.agent()), model);
        if runner.model_config.is_none() {
            runner.model_config.clone_from(&parent_runner.model_config);
        }
        runner
            .control
            .questions
            .questions
            .clone_from(&parent_runner.control.questions.questions);
        runner.control.delegation = self.clone();
        runner.output = child.typed_output().cloned();
        // A child's money counts at its own prices, else its parent's.
        runner.spending = runner.spending().or(&parent_runner.spending());
        // A child's state travels inside its root's, sealed there.
        runner.sealing = Sealing::Trusted;
        runner.engine = parent_runner
            .engine
            .as_ref()
            .map(|engine| Arc::new(Nested(Arc::clone(engine))) as Arc<dyn Engine>);
        let place = &parent_runner.place;
        let parent_left = place
            .max_steps(&parent_runner.agent)
            .saturating_sub(parent.step);
        let tokens_left = place.tokens_left(&parent.usage);
        let ceiling = place
            .ceiling
            .clone()
            .unwrap_or_default()
            .with(parent_runner.agent.executor().policy(), child.reach());
        let root = place.root_of(&parent.run_id);
        // On an engine the nested engine journals; on a store the child's
        // calls are claimed under the root's run, so that a process taking
        // the run over finds what they did.
        let journal = match (&parent_runner.engine, &parent_runner.durable) {
            (Some(_), _) => None,
            (None, Some(durable)) => Some(Journaled(Arc::new(UnderRoot {
                inner: durable.keyed_journal(),
                root: root.clone(),
            }))),
            (None, None) => place.journal.clone(),
        };
        let checkpoints = checkpoints(parent_runner, &root);
        let guards = match parent_runner.agent.executor().tree_guards() {
            Some(own) => Some(place.guards.clone().unwrap_or_default().with(own)),
            None => place.guards.clone(),
        };
        runner.place = Place {
            root: Some(root),
            journal,
            checkpoints,
            guards,
            depth: place.depth + 1,
            ceiling: Some(ceiling),
            max_steps: Some(child.steps().min(parent_left)),
            max_tokens: match (child.tokens(), tokens_left) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        };
        runner
    }
}

/// Where the children of the tree rooted at `root` keep their states, seen
/// from `runner`: the root's store (when it keeps children's states);
/// nowhere on an engine, which journals a child's steps itself.
pub(super) fn checkpoints(runner: &AgentRunner, root: &RunId) -> Option<Checkpoints> {
    match (&runner.engine, &runner.durable) {
        (Some(_), _) => None,
        (None, Some(durable)) => Checkpoints::of(durable, root),
        (None, None) => runner.place.checkpoints.clone(),
    }
}

/// Tells observers a child started (`ending` `None`) or ended.
fn announce(turn: &Turn<'_>, child: &ChildAgent, call: &ToolUseBlock, ending: Option<&str>) {
    let (runner, parent) = (turn.runner, turn.state);
    let root_run_id = runner.place.root_of(&parent.run_id);
    let run_id = child_run_id(&parent.run_id, &call.id);
    let (parent_run_id, parent_call_id) = (parent.run_id.clone(), call.id.clone());
    let (agent, depth) = (child.name().to_owned(), runner.place.depth + 1);
    runner.agent.executor().emit_event(match ending {
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

/// What the parent's call gets of the child's `outcome` (`ran_out`: its
/// deadline passed).
fn settle(
    turn: &Turn<'_>,
    child: &ChildAgent,
    call: &ToolUseBlock,
    runner: &AgentRunner,
    outcome: Result<RunOutcome, RunError>,
    ran_out: bool,
) -> Answered {
    let depth = turn.runner.place.depth + 1;
    let name = child.name();
    let (ending, result, state) = match ending(name, runner, outcome, ran_out) {
        Ending::Waiting(state) => {
            return Answered::Waiting(Box::new(crate::WaitingItem::child(
                call.clone(),
                depth,
                state,
            )));
        }
        Ending::Finished { output, state } => {
            // A typed output reaches the parent as structured content.
            let result = output_result(output.clone()).with_data(json!({
                "agent": name,
                "run_id": state.run_id,
                "steps": state.step,
                "usage": state.usage,
                "output": output,
            }));
            ("finished", result, Some(state))
        }
        Ending::Other(ending, result, state) => (ending, result, state),
    };
    announce(turn, child, call, Some(ending));
    let run = state.map(|state| {
        Box::new(ChildRun {
            call_id: call.id.clone(),
            agent: name.to_owned(),
            depth,
            ending: ending.to_owned(),
            state,
        })
    });
    Answered::Finished(result, run)
}

/// A child run's context: its derived run id, the parent's cancellation
/// (cancelling the parent cancels every descendant) and the tree's count
/// of questions.
fn child_context(cx: &RunContext, parent: &RunId, call_id: &str) -> RunContext {
    let mut child = RunContext::new(cx.workspace.clone(), child_run_id(parent, call_id))
        .with_cancellation(cx.cancel.child_token());
    // A child's questions count toward its root's cap.
    child.questions.clone_from(&cx.questions);
    // And its spend toward its root's budget.
    child.budget.clone_from(&cx.budget);
    child
}

/// A child's deadline while it runs: cancels its run when it passes.
pub(super) struct Deadline {
    timer: Option<tokio::task::JoinHandle<()>>,
    passed: Arc<AtomicBool>,
}

impl Deadline {
    pub(super) fn start(child: &ChildAgent, cx: &RunContext) -> Self {
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
    pub(super) fn stop(self) -> bool {
        if let Some(timer) = self.timer {
            timer.abort();
        }
        self.passed.load(Ordering::Acquire)
    }
}
