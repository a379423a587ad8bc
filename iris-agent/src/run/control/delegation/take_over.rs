//! A delegation cut off when the process running its run died: a child
//! that waited waits on (or resumes with the replies recorded for it), one
//! that kept steps goes on from the last of them, one that kept none starts
//! afresh, and one nothing can be said of is reported interrupted.

use iris_core::{ToolResult, ToolUseBlock};
use iris_runtime::{ApprovalDecision, Reply};

use super::child::{Continue, checkpoints};
use super::{Delegator, Turn};
use crate::run::checkpoints::Kept;
use crate::run::control::{Answered, ItemReplies};
use crate::{Wait, WaitingItem};

/// What a run taken over makes of one delegation, from what it kept.
enum TakenOver {
    /// Its result, without running anything.
    Settled(ToolResult),
    /// It waits on.
    Waits(Box<WaitingItem>),
    /// The child may have been running when the process died (`approved`:
    /// after a person let it start).
    Cut { approved: bool },
}

impl Delegator {
    /// What a run taken over makes of its delegation `call`, `kept` the
    /// item it waited as (if it did) and `replies` those recorded for it.
    pub(super) async fn taken_over(
        &self,
        turn: &Turn<'_>,
        call: ToolUseBlock,
        kept: Option<WaitingItem>,
        replies: ItemReplies,
    ) -> Answered {
        let ItemReplies { own, mut under } = replies;
        // A child that waited and was resumed before the process died kept
        // steps since its pause: it goes on from the last of them, never
        // from the pause again.
        if kept
            .as_ref()
            .is_some_and(|item| matches!(item.wait(), Wait::Child { .. }))
            && let Kept::Step(child) = self.kept_step(turn, &call).await
        {
            return self
                .continue_child(turn, &call, *child, under, Continue::TakeOver)
                .await
                .unwrap_or_else(|error| {
                    tracing::warn!(%error, call = %call.id, "a resumed child agent cut off by a crash could not be taken over");
                    Answered::done(interrupted(&call))
                });
        }
        // A child that waited, with replies recorded for it: it resumes
        // where it paused, and the root's journal answers for the calls it
        // ran before the process died.
        if let Some(child) = kept.as_ref().and_then(WaitingItem::child_state)
            && !under.is_empty()
        {
            match self
                .resume_child(turn, &call, child.clone(), std::mem::take(&mut under))
                .await
            {
                Ok(answered) => return answered,
                Err(error) => {
                    tracing::warn!(%error, call = %call.id, "a child agent taken over could not resume; it waits on");
                }
            }
        }
        match taken_over(&call, kept, own) {
            TakenOver::Settled(result) => Answered::done(result),
            TakenOver::Waits(item) => Answered::Waiting(item),
            TakenOver::Cut { approved } => self.cut_child(turn, &call, approved, under).await,
        }
    }

    /// A child that may have been running when the process died: taken
    /// over from the last step it kept on the store (its recorded calls
    /// answered by the root's journal, a call cut off in its body reported
    /// interrupted to it), started afresh when it kept none (none of its
    /// calls ran), and reported interrupted as a whole only when the store
    /// keeps no children's states or cannot say.
    async fn cut_child(
        &self,
        turn: &Turn<'_>,
        call: &ToolUseBlock,
        approved: bool,
        replies: Vec<(String, Reply)>,
    ) -> Answered {
        match self.kept_step(turn, call).await {
            Kept::Step(child) => self
                .continue_child(turn, call, *child, replies, Continue::TakeOver)
                .await
                .unwrap_or_else(|error| {
                    tracing::warn!(%error, call = %call.id, "a child agent cut off by a crash could not be taken over");
                    Answered::done(interrupted(call))
                }),
            Kept::Nothing if approved => self.start_approved(turn, call).await,
            Kept::Nothing => self.delegate(turn, call).await,
            Kept::Unknown => Answered::done(interrupted(call)),
        }
    }

    /// What the store kept of the child `call` of the turn's run delegated
    /// to.
    async fn kept_step(&self, turn: &Turn<'_>, call: &ToolUseBlock) -> Kept {
        let parent = &turn.state.run_id;
        match checkpoints(turn.runner, &turn.runner.place.root_of(parent)) {
            Some(checkpoints) => {
                checkpoints
                    .kept(&crate::children::child_run_id(parent, &call.id))
                    .await
            }
            None => Kept::Unknown,
        }
    }
}

/// What a run taken over makes of its delegation `call`: a child that
/// waited (`kept`) waits on; one waiting for a person's word on starting it
/// waits on unless it was denied or approved; any other may have been
/// running.
fn taken_over(call: &ToolUseBlock, kept: Option<WaitingItem>, reply: Option<Reply>) -> TakenOver {
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
