//! Run control as owners. Each kind of run control ([`questions`],
//! [`skills`], [`delegation`]) owns a set of tool names: it offers their
//! specs, answers their calls (finished, or an item that waits), resumes its
//! items with a person's replies and takes its calls over after a crash.
//! The runner asks each owner in turn and hands every call none claims to
//! the agent's executor, so no hook, middleware or permission rule of the
//! agent ever sees run control's calls. A new kind of run control is one
//! file here and one field of [`Controls`].

pub(super) mod delegation;
pub(super) mod questions;
pub(super) mod skills;

use std::sync::{Mutex, PoisonError};

use iris_core::{BoxFuture, CallPath, ToolResult, ToolSpec, ToolUseBlock};
use iris_runtime::Reply;
use rustc_hash::FxHashMap;

use super::{AgentRunner, RunContext};
use crate::{ChildRun, RunError, RunState, WaitingItem};

/// One kind of run control: the names it owns and what it does with their
/// calls.
pub(super) trait Control: Send + Sync {
    /// Whether this owner answers `call` in `turn` (by its name).
    fn claims(&self, turn: &Turn<'_>, call: &ToolUseBlock) -> bool;

    /// Whether this owner goes on with `item` when a run resumes: by
    /// default, the items of the calls it claims.
    fn resumes(&self, turn: &Turn<'_>, item: &WaitingItem) -> bool {
        self.claims(turn, item.call())
    }

    /// Adds the specs this owner offers in `turn`'s step to `specs`.
    ///
    /// # Errors
    /// [`RunError::NameTaken`] when a tool of the agent holds a name the
    /// owner offers.
    fn offer(&self, turn: &Turn<'_>, specs: &mut Vec<ToolSpec>) -> Result<(), RunError>;

    /// Whether this owner's calls of a step are answered before the
    /// executor runs the step's other calls (by default, after them).
    fn answers_first(&self) -> bool {
        false
    }

    /// Answers `calls`, the step's calls this owner claimed, in call
    /// order: one answer each, in the same order.
    fn answer<'a>(
        &'a self,
        turn: &'a Turn<'a>,
        calls: Vec<ToolUseBlock>,
    ) -> BoxFuture<'a, Vec<Answered>>;

    /// Goes on with `item`, one of this owner's that waited, with the
    /// `replies` addressed to it, at `now` (epoch milliseconds): its answer,
    /// or the item again when it still waits.
    fn resume<'a>(
        &'a self,
        turn: &'a Turn<'a>,
        item: WaitingItem,
        replies: ItemReplies,
        now: u64,
    ) -> BoxFuture<'a, Result<Answered, RunError>>;

    /// Takes over `call`, one of this owner's cut off when the process
    /// running the run died: `kept` is the item it waited as, if it did, and
    /// `replies` those recorded for it.
    fn take_over<'a>(
        &'a self,
        turn: &'a Turn<'a>,
        call: ToolUseBlock,
        kept: Option<WaitingItem>,
        replies: ItemReplies,
    ) -> BoxFuture<'a, Answered>;
}

/// The owners of a runner's run control, asked in this order.
#[derive(Clone, Default)]
pub(super) struct Controls {
    pub(super) questions: questions::Asker,
    pub(super) skills: skills::Activator,
    pub(super) delegation: delegation::Delegator,
}

impl Controls {
    /// Every owner, in the order they are asked.
    pub(super) fn all(&self) -> [&dyn Control; 3] {
        [&self.questions, &self.skills, &self.delegation]
    }

    /// The owner that claims `call` in `turn`, if any.
    pub(super) fn claiming(&self, turn: &Turn<'_>, call: &ToolUseBlock) -> Option<&dyn Control> {
        self.all()
            .into_iter()
            .find(|owner| owner.claims(turn, call))
    }

    /// The owner that goes on with `item` in `turn`, if any.
    pub(super) fn resuming(&self, turn: &Turn<'_>, item: &WaitingItem) -> Option<&dyn Control> {
        self.all()
            .into_iter()
            .find(|owner| owner.resumes(turn, item))
    }
}

/// What one step (or one item of a resume) of a run offers run control:
/// the runner, the run's state so far and its context.
pub(super) struct Turn<'a> {
    pub(super) runner: &'a AgentRunner,
    pub(super) state: &'a RunState,
    pub(super) cx: &'a RunContext,
    /// The skills active so far, in activation order: activations answered
    /// in call order add to it, and the step's other calls read it.
    active_skills: Mutex<Vec<String>>,
}

impl<'a> Turn<'a> {
    /// A turn of `runner` on `state`, its skills active as `state` says.
    pub(super) fn new(runner: &'a AgentRunner, state: &'a RunState, cx: &'a RunContext) -> Self {
        Self {
            runner,
            state,
            cx,
            active_skills: Mutex::new(state.skills.clone()),
        }
    }

    /// The skills active now.
    pub(super) fn active_skills(&self) -> Vec<String> {
        self.active_skills
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Changes the skills active now with `change`.
    fn change_skills<T>(&self, change: impl FnOnce(&mut Vec<String>) -> T) -> T {
        change(
            &mut self
                .active_skills
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}

/// What run control made of one call.
pub(super) enum Answered {
    /// Its result, with the run of a child agent that ended for it (its
    /// usage to roll up, its history to keep apart).
    Finished(ToolResult, Option<Box<ChildRun>>),
    /// It waits for a person (or a child agent does).
    Waiting(Box<WaitingItem>),
}

impl Answered {
    /// A result, without a child's run.
    pub(super) fn done(result: ToolResult) -> Self {
        Self::Finished(result, None)
    }

    /// Puts this answer to call `call_id` where it belongs: its result with
    /// `results` (and a child's run into `state`), or its item with
    /// `waiting`.
    pub(super) fn place(
        self,
        call_id: &str,
        state: &mut RunState,
        results: &mut FxHashMap<String, ToolResult>,
        waiting: &mut Vec<WaitingItem>,
    ) {
        match self {
            Self::Finished(result, run) => {
                state.keep_child(run);
                results.insert(call_id.to_owned(), result);
            }
            Self::Waiting(item) => waiting.push(*item),
        }
    }
}

/// The replies addressed to one item: its own, and those under it (a child
/// agent's items, keyed by their paths inside the child).
#[derive(Default)]
pub(super) struct ItemReplies {
    pub(super) own: Option<Reply>,
    pub(super) under: Vec<(String, Reply)>,
}

impl ItemReplies {
    /// The replies to the item of call `id` (as the model wrote it), taken
    /// out of `replies`.
    pub(super) fn take(replies: &mut FxHashMap<String, Reply>, id: &str) -> Self {
        let own_key = CallPath::join(None, id);
        let prefix = format!("{own_key}/");
        let keys: Vec<String> = replies
            .keys()
            .filter(|key| key.starts_with(&prefix))
            .cloned()
            .collect();
        let under = keys
            .into_iter()
            .filter_map(|key| {
                let reply = replies.remove(&key)?;
                Some((key[prefix.len()..].to_owned(), reply))
            })
            .collect();
        Self {
            own: replies.remove(&*own_key),
            under,
        }
    }
}

/// Whether `item` is a question that expired at `now`.
pub(super) fn expired(item: &WaitingItem, now: u64) -> bool {
    item.question_request()
        .is_some_and(|request| request.expired_at(now))
}
