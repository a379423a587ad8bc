//! Replies to a waiting run's items, applied: each item goes to the owner
//! that made it (a question, a child agent, a person's word on starting
//! one) or, for a call the executor paused, runs or is refused as decided;
//! and the calls of a step cut off by a crash that run control owns, taken
//! over by their owners. Items without a reply wait on.

use iris_core::{ToolContext, ToolResult, ToolUseBlock};
use rustc_hash::FxHashMap;

use iris_runtime::{ApprovalDecision, ApprovalRequest, Reply, RuntimeError, ToolOutcome};

use super::control::{Answered, ItemReplies, Turn};
use super::{AgentRunner, RunContext};
use crate::{RunError, RunState, Wait, WaitingItem, store};

impl AgentRunner {
    /// Applies `replies` to `state`'s waiting items, taking them and its
    /// finished calls out of it: the results of the step's calls so far,
    /// and the items that still wait.
    pub(super) async fn apply_replies(
        &self,
        state: &mut RunState,
        mut replies: FxHashMap<String, Reply>,
        now: u64,
        tools_cx: &ToolContext,
        cx: &RunContext,
    ) -> Result<(FxHashMap<String, ToolResult>, Vec<WaitingItem>), RunError> {
        let mut results: FxHashMap<String, ToolResult> = std::mem::take(&mut state.finished)
            .into_iter()
            .map(|f| (f.call_id, f.result))
            .collect();
        let mut still_waiting = Vec::new();
        for item in std::mem::take(&mut state.waiting) {
            let call_id = item.call().id.clone();
            let addressed = ItemReplies::take(&mut replies, &call_id);
            // One item at a time, each on the state as the items before it
            // left it (a child that ended rolls its usage up first).
            let answered = {
                let turn = Turn::new(self, state, cx);
                match self.control.resuming(&turn, &item) {
                    Some(owner) => owner.resume(&turn, item, addressed, now).await?,
                    None => self.decided(item, addressed.own, tools_cx).await?,
                }
            };
            answered.place(&call_id, state, &mut results, &mut still_waiting);
        }
        Ok((results, still_waiting))
    }

    /// The calls of a step cut off when its process died that run control
    /// owns (`control`, in call order), each taken over by its owner: `kept`
    /// holds the items they waited as, `replies` those recorded.
    pub(super) async fn take_over_control(
        &self,
        state: &mut RunState,
        control: Vec<ToolUseBlock>,
        mut kept: FxHashMap<String, WaitingItem>,
        replies: &mut FxHashMap<String, Reply>,
        results: &mut FxHashMap<String, ToolResult>,
        cx: &RunContext,
    ) {
        for call in control {
            let call_id = call.id.clone();
            let addressed = ItemReplies::take(replies, &call_id);
            let kept = kept.remove(&call_id);
            let (answered, skills) = {
                let turn = Turn::new(self, state, cx);
                let Some(owner) = self.control.claiming(&turn, &call) else {
                    continue;
                };
                let answered = owner.take_over(&turn, call, kept, addressed).await;
                // An activation taken over is active again.
                (answered, turn.active_skills())
            };
            state.skills = skills;
            let mut waiting = std::mem::take(&mut state.waiting);
            answered.place(&call_id, state, results, &mut waiting);
            state.waiting = waiting;
        }
    }

    /// What a call the executor paused (`item`) comes to with `reply`: run
    /// or refused as a person decided, or still waiting without one.
    async fn decided(
        &self,
        item: WaitingItem,
        reply: Option<Reply>,
        tools_cx: &ToolContext,
    ) -> Result<Answered, RunError> {
        Ok(match (item.into_parts(), reply) {
            ((call, Wait::Approval { request }), Some(Reply::Decision(decision))) => {
                let (_, result) = self
                    .run_decided(&call, &request, decision, tools_cx)
                    .await?;
                Answered::done(result)
            }
            ((call, wait), _) => Answered::Waiting(Box::new(WaitingItem::from_parts(call, wait))),
        })
    }

    /// The outcome of one waiting call under `decision`.
    pub(super) async fn run_decided(
        &self,
        call: &ToolUseBlock,
        request: &ApprovalRequest,
        decision: ApprovalDecision,
        cx: &ToolContext,
    ) -> Result<(String, ToolResult), RunError> {
        let executor = self.agent.executor();
        let call_id = call.id.clone();
        let outcome = match executor.resume(&call_id, decision.clone(), cx).await {
            Ok(outcome) => outcome,
            // Another process paused this run: the call runs with the
            // person's approval given there, its own request bound to the
            // one they decided on.
            Err(RuntimeError::NoPendingApproval { .. }) => match &decision {
                ApprovalDecision::Deny { reason } => {
                    let result = ToolResult::error(
                        iris_core::ToolErrorKind::PermissionDenied,
                        format!("the user denied this call: {reason}"),
                    );
                    return Ok((call_id, result));
                }
                ApprovalDecision::Approve { .. } => {
                    executor
                        .execute_approved(call.clone(), &request.approval_id, cx)
                        .await?
                }
            },
            Err(other) => return Err(other.into()),
        };
        match outcome {
            ToolOutcome::Finished { call_id, result } => Ok((call_id, result)),
            ToolOutcome::Waiting(request) => {
                Err(RunError::Runtime(RuntimeError::ApprovalMismatch {
                    call_id: request.call_id,
                }))
            }
        }
    }

    /// Whether run control owns `call` in `state`'s run.
    pub(super) fn is_run_control(
        &self,
        state: &RunState,
        cx: &RunContext,
        call: &ToolUseBlock,
    ) -> bool {
        self.control
            .claiming(&Turn::new(self, state, cx), call)
            .is_some()
    }
}

/// The replies by item id, each checked against its item: a decision for
/// an approval, an answer among the choices for a question.
pub(super) fn checked_replies(
    state: &RunState,
    replies: Vec<(String, Reply)>,
) -> Result<FxHashMap<String, Reply>, RunError> {
    let mut checked = FxHashMap::default();
    for (id, reply) in replies {
        let Some(item) = state.find_pending(&id) else {
            return Err(RunError::UnknownDecision {
                waiting: store::waiting_calls(state),
                call_id: id,
            });
        };
        item.fits(&reply).map_err(|why| RunError::WrongReply {
            item_id: id.clone(),
            why,
        })?;
        checked.insert(id, reply);
    }
    Ok(checked)
}
