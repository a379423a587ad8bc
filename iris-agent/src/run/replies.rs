//! Replies to a waiting run's items, applied: a decision runs or refuses
//! an approved call (or starts a child agent), an answer settles a
//! question, and replies under a child agent's item resume that child where
//! it paused; items without a reply wait on.

use iris_core::{CallPath, ToolContext, ToolResult, ToolUseBlock};
use rustc_hash::FxHashMap;

use iris_runtime::{ApprovalDecision, Reply};

use super::checkpoints::Kept;
use super::children::Delegated;
use super::questions::Asked;
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
            let (call, wait) = item.into_parts();
            if let Wait::Child {
                agent,
                depth,
                state: child,
            } = wait
            {
                let replies = replies_under(&mut replies, &call.id);
                let untouched =
                    replies.is_empty() && !child.pending().iter().any(|p| expired(&p.item, now));
                if untouched {
                    let wait = Wait::Child {
                        agent,
                        depth,
                        state: child,
                    };
                    still_waiting.push(WaitingItem::from_parts(call, wait));
                    continue;
                }
                match self.resume_child(&call, *child, replies, state, cx).await? {
                    Delegated::Finished(result, child) => {
                        state.keep_child(child);
                        results.insert(call.id, result);
                    }
                    Delegated::Waiting(item) => still_waiting.push(*item),
                }
                continue;
            }
            let reply = replies.remove(&*CallPath::join(None, &call.id));
            match (wait, reply) {
                (Wait::Approval { .. }, Some(Reply::Decision(decision)))
                    if self.is_delegation(&call) =>
                {
                    // A person's word on starting a child agent.
                    match self.decided_child(&call, decision, state, cx).await {
                        Delegated::Finished(result, child) => {
                            state.keep_child(child);
                            results.insert(call.id, result);
                        }
                        Delegated::Waiting(item) => still_waiting.push(*item),
                    }
                }
                (Wait::Approval { request }, Some(Reply::Decision(decision))) => {
                    let (call_id, result) = self
                        .run_decided(&call, &request, decision, tools_cx)
                        .await?;
                    results.insert(call_id, result);
                }
                (Wait::Question { request }, Some(Reply::Answer(answer)))
                    if !request.expired_at(now) =>
                {
                    results.insert(call.id, self.settle(&request, Some(&answer)));
                }
                (Wait::Question { request }, _) if request.expired_at(now) => {
                    results.insert(call.id, self.settle(&request, None));
                }
                (wait, _) => still_waiting.push(WaitingItem::from_parts(call, wait)),
            }
        }
        Ok((results, still_waiting))
    }

    /// The run-control calls of a step cut off when its process died:
    /// questions asked again as shown (or answered by a recorded reply),
    /// skills activated (again: the same answer), delegations as
    /// [`taken_over_delegation`] says.
    pub(super) async fn take_over_control(
        &self,
        state: &mut RunState,
        control: Vec<ToolUseBlock>,
        mut kept: FxHashMap<String, WaitingItem>,
        replies: &mut FxHashMap<String, Reply>,
        results: &mut FxHashMap<String, ToolResult>,
        cx: &RunContext,
    ) {
        let mut active = state.skills.clone();
        for call in control {
            if self.is_skill_activation(&call) {
                let result = self.activate(&call, &state.run_id, &mut active);
                state.skills.clone_from(&active);
                results.insert(call.id.clone(), result);
                continue;
            }
            if self.is_delegation(&call) {
                let kept_child = kept.remove(&call.id);
                let mut under = replies_under(replies, &call.id);
                // A child that waited and was resumed before the process
                // died kept steps since its pause: it goes on from the last
                // of them, never from the pause again.
                if kept_child
                    .as_ref()
                    .is_some_and(|item| matches!(item.wait(), Wait::Child { .. }))
                    && let Kept::Step(child) = self.kept_step(&call, state).await
                {
                    let taken = self
                        .take_over_child(&call, *child, std::mem::take(&mut under), state, cx)
                        .await
                        .unwrap_or_else(|error| {
                            tracing::warn!(%error, call = %call.id, "a resumed child agent cut off by a crash could not be taken over");
                            Delegated::Finished(interrupted(&call), None)
                        });
                    place(taken, &call.id, state, results);
                    continue;
                }
                // A child that waited, with replies recorded for it: it
                // resumes where it paused, and the root's journal answers
                // for the calls it ran before the process died.
                if let Some(child) = kept_child.as_ref().and_then(WaitingItem::child_state)
                    && !under.is_empty()
                {
                    match self
                        .resume_child(&call, child.clone(), std::mem::take(&mut under), state, cx)
                        .await
                    {
                        Ok(delegated) => {
                            place(delegated, &call.id, state, results);
                            continue;
                        }
                        Err(error) => {
                            tracing::warn!(%error, call = %call.id, "a child agent taken over could not resume; it waits on");
                        }
                    }
                }
                let reply = replies.remove(&*CallPath::join(None, &call.id));
                let delegated = match taken_over_delegation(&call, kept_child, reply) {
                    TakenOver::Settled(result) => Delegated::Finished(result, None),
                    TakenOver::Waits(item) => Delegated::Waiting(item),
                    TakenOver::Cut { approved } => {
                        self.cut_child(&call, approved, under, state, cx).await
                    }
                };
                place(delegated, &call.id, state, results);
                continue;
            }
            let Some(request) = kept.get(&call.id).and_then(WaitingItem::question_request) else {
                // Cut off before it was asked: ask it now.
                match self.ask(&call, state, cx).await {
                    Asked::Finished(result) => {
                        results.insert(call.id.clone(), result);
                    }
                    Asked::Waiting(request) => {
                        state.waiting.push(WaitingItem::asked(call, request));
                    }
                }
                continue;
            };
            match replies.remove(&*CallPath::join(None, &call.id)) {
                Some(Reply::Answer(answer)) if request.check(&answer).is_ok() => {
                    results.insert(call.id.clone(), self.settle(request, Some(&answer)));
                }
                _ if request.expired_at(store::now_ms()) => {
                    results.insert(call.id.clone(), self.settle(request, None));
                }
                _ => state
                    .waiting
                    .push(WaitingItem::asked(call, request.clone())),
            }
        }
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

/// Whether `item` is a question that expired at `now`.
pub(super) fn expired(item: &WaitingItem, now: u64) -> bool {
    item.question_request()
        .is_some_and(|request| request.expired_at(now))
}

/// The replies under item `id` (a child agent's call id, as the model
/// wrote it), taken out of `replies` and keyed by the child's own item
/// paths.
fn replies_under(replies: &mut FxHashMap<String, Reply>, id: &str) -> Vec<(String, Reply)> {
    let prefix = format!("{}/", CallPath::join(None, id));
    let keys: Vec<String> = replies
        .keys()
        .filter(|key| key.starts_with(&prefix))
        .cloned()
        .collect();
    keys.into_iter()
        .filter_map(|key| {
            let reply = replies.remove(&key)?;
            Some((key[prefix.len()..].to_owned(), reply))
        })
        .collect()
}

/// What a run taken over after its process died makes of one delegation.
enum TakenOver {
    /// Its result, without running anything.
    Settled(ToolResult),
    /// It waits on.
    Waits(Box<WaitingItem>),
    /// The child may have been running when the process died (`approved`:
    /// after a person let it start).
    Cut { approved: bool },
}

/// What a run taken over after its process died makes of its delegation
/// `call`: a child that waited (`kept`) waits on; one waiting for a
/// person's word on starting it waits on unless it was denied or
/// approved; any other may have been running.
fn taken_over_delegation(
    call: &ToolUseBlock,
    kept: Option<WaitingItem>,
    reply: Option<Reply>,
) -> TakenOver {
    match (kept, reply) {
        (Some(item), _) if matches!(item.wait(), Wait::Child { .. }) => {
            TakenOver::Waits(Box::new(item))
        }
        (Some(item), Some(Reply::Decision(ApprovalDecision::Deny { reason })))
            if item.approval_request().is_some() =>
        {
            TakenOver::Settled(ToolResult::error(
                iris_core::ToolErrorKind::PermissionDenied,
                format!("the user did not let `{}` start: {reason}", call.name),
            ))
        }
        (Some(item), None) if item.approval_request().is_some() => TakenOver::Waits(Box::new(item)),
        (_, Some(Reply::Decision(ApprovalDecision::Approve { .. }))) => {
            TakenOver::Cut { approved: true }
        }
        _ => TakenOver::Cut { approved: false },
    }
}

impl AgentRunner {
    /// A child of `parent` that may have been running when the process
    /// died: taken over from the last step it kept on the store (its
    /// recorded calls answered by the root's journal, a call cut off in its
    /// body reported interrupted to it), started afresh when it kept none
    /// (none of its calls ran), and reported interrupted as a whole only
    /// when the store keeps no children's states or cannot say.
    async fn cut_child(
        &self,
        call: &ToolUseBlock,
        approved: bool,
        replies: Vec<(String, Reply)>,
        parent: &RunState,
        cx: &RunContext,
    ) -> Delegated {
        match self.kept_step(call, parent).await {
            Kept::Step(child) => {
                match self
                    .take_over_child(call, *child, replies, parent, cx)
                    .await
                {
                    Ok(delegated) => delegated,
                    Err(error) => {
                        tracing::warn!(%error, call = %call.id, "a child agent cut off by a crash could not be taken over");
                        Delegated::Finished(interrupted(call), None)
                    }
                }
            }
            Kept::Nothing if approved => self.start_approved_child(call, parent, cx).await,
            Kept::Nothing => self.delegate(call, parent, cx).await,
            Kept::Unknown => Delegated::Finished(interrupted(call), None),
        }
    }
}

impl AgentRunner {
    /// What the store kept of the child `call` of `parent` delegated to.
    async fn kept_step(&self, call: &ToolUseBlock, parent: &RunState) -> Kept {
        match self.child_checkpoints(&self.root_of(parent)) {
            Some(checkpoints) => {
                checkpoints
                    .kept(&crate::children::child_run_id(&parent.run_id, &call.id))
                    .await
            }
            None => Kept::Unknown,
        }
    }
}

/// Puts what a taken-over delegation `call_id` came to where it belongs:
/// its result (and the child's run) with the finished, or its item with
/// those that wait.
fn place(
    delegated: Delegated,
    call_id: &str,
    state: &mut RunState,
    results: &mut FxHashMap<String, ToolResult>,
) {
    match delegated {
        Delegated::Finished(result, run) => {
            state.keep_child(run);
            results.insert(call_id.to_owned(), result);
        }
        Delegated::Waiting(item) => state.waiting.push(*item),
    }
}

/// A child cut off by a crash where nothing says how far it got.
fn interrupted(call: &ToolUseBlock) -> ToolResult {
    ToolResult::error(
        iris_core::ToolErrorKind::Interrupted,
        format!(
            "child agent `{}` was cut off when the process running it stopped; what it did is not known, so it was not started again: check before delegating the task again",
            call.name
        ),
    )
}
