//! A step's calls: run control's (questions) answered by the runner, the
//! rest run by the agent's executor, and their results as the history
//! keeps them.

use iris_core::{RunId, ToolContext, ToolResult, ToolUseBlock};
use rustc_hash::FxHashMap;

use futures_util::StreamExt as _;
use iris_model::Message;
use iris_runtime::{ApprovalRequest, ToolOutcome};

use super::children::Delegated;
use super::questions::Asked;
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
            None => self.run_calls(state, calls, tools_cx, cx).await,
        }
    }

    /// Runs `calls`, the last step's, in call order: the finished ones
    /// and those that wait, and the runs of child agents that ended. Run
    /// control's calls (questions, delegations) never reach the executor,
    /// so no hook, middleware or permission rule of this agent sees them.
    async fn run_calls(
        &self,
        state: &RunState,
        calls: Vec<ToolUseBlock>,
        tools_cx: &ToolContext,
        cx: &RunContext,
    ) -> StepCalls {
        let mut ends: Vec<Option<End>> = Vec::with_capacity(calls.len());
        let mut ordinary = Vec::with_capacity(calls.len());
        let mut asked = Vec::new();
        let mut delegated = Vec::new();
        let mut active = state.skills.clone();
        for (at, call) in calls.into_iter().enumerate() {
            ends.push(None);
            if self.is_skill_activation(&call) {
                // Answered at once, in call order: a second activation of
                // the same skill in one step reads as already active.
                let result = self.activate(&call, &state.run_id, &mut active);
                ends[at] = Some(End::Finished(FinishedCall {
                    call_id: call.id,
                    result,
                }));
            } else if self.is_question(&call) {
                asked.push((at, call));
            } else if self.is_delegation(&call) {
                delegated.push((at, call));
            } else {
                ordinary.push((at, call));
            }
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
                    ToolOutcome::Finished { call_id, result } => {
                        End::Finished(FinishedCall { call_id, result })
                    }
                    ToolOutcome::Waiting(request) => {
                        if let Some(result) = self.pre_approved(&request, &active, tools_cx).await {
                            End::Finished(FinishedCall {
                                call_id: request.call_id.clone(),
                                result,
                            })
                        } else {
                            End::approval(&state.run_id, step.get(at), *request)
                        }
                    }
                });
            }
        }
        for (at, call) in asked {
            ends[at] = Some(match self.ask(&call, state, cx).await {
                Asked::Finished(result) => End::Finished(FinishedCall {
                    call_id: call.id,
                    result,
                }),
                Asked::Waiting(request) => {
                    End::Waiting(Box::new(WaitingItem::asked(call, request)))
                }
            });
        }
        let mut children = Vec::new();
        let delegated = if delegated.is_empty() {
            Vec::new()
        } else {
            self.run_delegations(delegated, state, cx).await
        };
        for (at, call, delegated) in delegated {
            ends[at] = Some(match delegated {
                Delegated::Finished(result, child) => {
                    children.extend(child);
                    End::Finished(FinishedCall {
                        call_id: call.id,
                        result,
                    })
                }
                Delegated::Waiting(item) => End::Waiting(item),
            });
        }
        let mut finished = Vec::with_capacity(ends.len());
        let mut waiting = Vec::new();
        for end in ends.into_iter().flatten() {
            match end {
                End::Finished(call) => finished.push(call),
                End::Waiting(item) => waiting.push(*item),
            }
        }
        StepCalls {
            finished,
            waiting,
            children,
            active_skills: active,
        }
    }

    /// Runs the step's delegations: those to concurrency-safe children at
    /// once (as many as the delegation allows), the rest one at a time, in
    /// call order.
    async fn run_delegations(
        &self,
        calls: Vec<(usize, ToolUseBlock)>,
        state: &RunState,
        cx: &RunContext,
    ) -> Vec<(usize, ToolUseBlock, Delegated)> {
        let (together, alone): (Vec<_>, Vec<_>) = calls
            .into_iter()
            .partition(|(_, call)| self.is_concurrent_delegation(call));
        let mut done: Vec<(usize, ToolUseBlock, Delegated)> = futures_util::stream::iter(together)
            .map(|(at, call)| async move {
                let delegated = self.delegate(&call, state, cx).await;
                (at, call, delegated)
            })
            .buffered(self.children_at_once())
            .collect()
            .await;
        for (at, call) in alone {
            let delegated = self.delegate(&call, state, cx).await;
            done.push((at, call, delegated));
        }
        done
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

/// How one call of a step ended.
enum End {
    Finished(FinishedCall),
    Waiting(Box<WaitingItem>),
}

impl End {
    /// `call` of run `run_id`, which the executor paused with `request`:
    /// the item keeps what the call does not say (the tool, the reason).
    fn approval(run_id: &RunId, call: Option<&ToolUseBlock>, request: ApprovalRequest) -> Self {
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
        End::Waiting(Box::new(WaitingItem::approval(run_id, call, tool, reason)))
    }
}
