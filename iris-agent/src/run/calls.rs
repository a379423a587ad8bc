//! A step's calls: run control's answered by their owners, the rest run by
//! the agent's executor, a call a person decided run as decided, and their
//! results as the history keeps them.

use iris_core::{RunId, ToolContext, ToolResult, ToolSpec, ToolUseBlock};
use rustc_hash::FxHashMap;

use iris_model::Message;
use iris_runtime::{ApprovalRequest, ToolOutcome};

use super::control::{Answered, Control, Turn};
use super::{AgentRunner, RunContext};
use crate::{ChildRun, FinishedCall, RunState, WaitingItem, history};

/// What a step's calls came to.
pub(super) struct StepCalls {
    /// The calls that finished, in call order.
    pub(super) finished: Vec<FinishedCall>,
    /// The calls that wait, in call order.
    pub(super) waiting: Vec<WaitingItem>,
    /// The runs of child agents that ended (boxed as delegation hands
    /// them over and the state keeps them).
    #[allow(clippy::vec_box, reason = "moved on boxed, never unboxed")]
    pub(super) children: Vec<Box<ChildRun>>,
    /// The skills active after the step, in activation order.
    pub(super) active_skills: Vec<String>,
}

impl AgentRunner {
    /// The last step's `calls`, unless the step repeats an id among them
    /// (then none runs, and each gets the refusal): see
    /// [`run_calls`](Self::run_calls).
    pub(super) async fn run_step(
        &self,
        state: &RunState,
        calls: Vec<ToolUseBlock>,
        narrowed: Option<&[ToolSpec]>,
        tools_cx: &ToolContext,
        cx: &RunContext,
    ) -> StepCalls {
        match super::identity::refused_step(&calls) {
            Some(refused) => StepCalls {
                finished: refused,
                waiting: Vec::new(),
                children: Vec::new(),
                active_skills: state.skills.clone(),
            },
            None => self.run_calls(state, calls, narrowed, tools_cx, cx).await,
        }
    }

    /// Runs `calls`, the last step's, in call order: the finished ones
    /// and those that wait, and the runs of child agents that ended. Each
    /// call run control claims goes to its owner (those that answer first
    /// before the executor runs the rest, the others after), so no hook,
    /// middleware or permission rule of this agent sees it.
    async fn run_calls(
        &self,
        state: &RunState,
        calls: Vec<ToolUseBlock>,
        narrowed: Option<&[ToolSpec]>,
        tools_cx: &ToolContext,
        cx: &RunContext,
    ) -> StepCalls {
        let turn = Turn::new(self, state, cx);
        let owners = self.control.all();
        let mut ends: Vec<Option<Answered>> = Vec::with_capacity(calls.len());
        let ids: Vec<String> = calls.iter().map(|call| call.id.clone()).collect();
        let mut claimed: Vec<Vec<(usize, ToolUseBlock)>> =
            owners.iter().map(|_| Vec::new()).collect();
        let mut ordinary = Vec::with_capacity(calls.len());
        for (at, call) in calls.into_iter().enumerate() {
            ends.push(None);
            match owners.iter().position(|owner| owner.claims(&turn, &call)) {
                // A hook chose this turn's tools, and not this one.
                Some(_) if narrowed.is_some_and(|offered| !offers(offered, &call.name)) => {
                    ends[at] = Some(Answered::done(ToolResult::error(
                        iris_core::ToolErrorKind::ToolNotAvailable,
                        format!(
                            "`{}` is not offered in this turn; use the tools offered",
                            iris_runtime::__wings::shorten(&call.name)
                        ),
                    )));
                }
                Some(owner) => claimed[owner].push((at, call)),
                None => ordinary.push((at, call)),
            }
        }
        let (first, after): (Vec<_>, Vec<_>) = owners
            .into_iter()
            .zip(claimed)
            .partition(|(owner, _)| owner.answers_first());
        for (owner, calls) in first {
            answer_into(&mut ends, owner, &turn, calls).await;
        }
        let (places, ordinary): (Vec<usize>, Vec<ToolUseBlock>) = ordinary.into_iter().unzip();
        if !ordinary.is_empty() {
            let outcomes = self
                .agent
                .executor()
                .execute_batch(ordinary, tools_cx)
                .await;
            let step = last_calls(state);
            for (at, outcome) in places.into_iter().zip(outcomes) {
                ends[at] = Some(match outcome {
                    ToolOutcome::Finished { result, .. } => Answered::done(result),
                    ToolOutcome::Waiting(request) => {
                        let skills = &self.control.skills;
                        match skills.pre_approved(&turn, &request, tools_cx).await {
                            Some(result) => Answered::done(result),
                            None => approval(&state.run_id, step.get(at), *request),
                        }
                    }
                });
            }
        }
        for (owner, calls) in after {
            answer_into(&mut ends, owner, &turn, calls).await;
        }
        let mut finished = Vec::with_capacity(ends.len());
        let mut waiting = Vec::new();
        let mut children = Vec::new();
        for (answered, call_id) in ends.into_iter().zip(ids) {
            match answered {
                Some(Answered::Finished(result, child)) => {
                    children.extend(child);
                    finished.push(FinishedCall { call_id, result });
                }
                Some(Answered::Waiting(item)) => waiting.push(*item),
                None => {}
            }
        }
        StepCalls {
            finished,
            waiting,
            children,
            active_skills: turn.active_skills(),
        }
    }

    /// Appends the results of `calls` and keeps their full text for
    /// `read_history` when old ones may be shortened.
    pub(super) fn append(&self, state: &mut RunState, answers: Vec<Message>) {
        let first = state.messages.len();
        state.messages.extend(answers);
        if self.agent.results_budget().is_some() {
            history::record_all(self.agent.ledger(), &state.run_id, &state.messages[first..]);
        }
    }
}

/// Whether `offered` holds a tool named `name`.
fn offers(offered: &[ToolSpec], name: &str) -> bool {
    offered.iter().any(|tool| tool.name().as_str() == name)
}

/// The calls of the history's last step (none when it ends otherwise).
pub(super) fn last_calls(state: &RunState) -> &[ToolUseBlock] {
    match state.messages.last() {
        Some(Message::Assistant { tool_calls, .. }) => tool_calls,
        _ => &[],
    }
}

/// One `Tool` message per call, in call order; a call without a result
/// (which the executor never leaves) still gets one, so the model never
/// sees a call without an output.
pub(super) fn tool_messages(
    calls: &[ToolUseBlock],
    results: &mut FxHashMap<String, ToolResult>,
) -> Vec<Message> {
    calls
        .iter()
        .map(|call| {
            let result = results.remove(&call.id).unwrap_or_else(no_result);
            Message::Tool {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                result,
            }
        })
        .collect()
}

/// One `Tool` message per call of `calls`, in call order, each with the
/// result of its own id from `finished` (a step refused for repeating an
/// id has one result per call all the same, taken in order); a call
/// without a result still gets one, so the model never sees a call
/// without an output.
pub(super) fn paired(calls: &[ToolUseBlock], finished: Vec<FinishedCall>) -> Vec<Message> {
    let mut finished: std::collections::VecDeque<FinishedCall> = finished.into();
    calls
        .iter()
        .map(|call| {
            // In call order already: the first result is the call's.
            let result = finished
                .iter()
                .position(|f| f.call_id == call.id)
                .and_then(|at| finished.remove(at))
                .map_or_else(no_result, |f| f.result);
            Message::Tool {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                result,
            }
        })
        .collect()
}

/// The result of a call that got none (which the executor never leaves).
fn no_result() -> ToolResult {
    ToolResult::error(
        iris_core::ToolErrorKind::Internal,
        "this call got no result; try it again",
    )
}

/// `call` of run `run_id`, which the executor paused with `request`, as
/// an item that waits: it keeps what the call does not say (the tool, the
/// reason).
fn approval(run_id: &RunId, call: Option<&ToolUseBlock>, request: ApprovalRequest) -> Answered {
    let ApprovalRequest {
        call_id,
        tool,
        arguments,
        reason,
        ..
    } = request;
    let call = call
        .cloned()
        .unwrap_or_else(|| ToolUseBlock::new(call_id, tool.as_str(), arguments));
    Answered::Waiting(Box::new(WaitingItem::approval(run_id, call, tool, reason)))
}

/// Puts `owner`'s answers to `calls` (with their places in the step) into
/// `ends`.
async fn answer_into(
    ends: &mut [Option<Answered>],
    owner: &dyn Control,
    turn: &Turn<'_>,
    calls: Vec<(usize, ToolUseBlock)>,
) {
    if calls.is_empty() {
        return;
    }
    let (places, calls): (Vec<usize>, Vec<ToolUseBlock>) = calls.into_iter().unzip();
    for (at, answered) in places.into_iter().zip(owner.answer(turn, calls).await) {
        ends[at] = Some(answered);
    }
}
