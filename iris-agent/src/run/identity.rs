//! Call identity at a step's door. A model's call ids are untrusted: local
//! servers number every answer's calls from `call_1` again, some ids hold
//! `/`, a hostile model sends none or ten kilobytes. Every key, child run
//! and path is built from a call's id, so before a step's calls enter the
//! history the runtime makes each id the run's own:
//!
//! - an id an earlier step of the run made, an empty one, or one over
//!   [`CallId::MAX_LEN`] bytes is replaced by one the runtime mints (the
//!   history, and so the provider, carry the minted id from then on);
//! - a step whose calls repeat an id among themselves is refused whole
//!   before anything of it runs, whatever the calls are (tools, questions,
//!   skills, child agents): the model must say which result is whose.

use iris_core::{CallId, ToolErrorKind, ToolResult, ToolUseBlock};
use iris_model::Message;
use iris_runtime::ledger::RunLedger;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::{FinishedCall, RunState};

/// `calls`, the answer to step `state.step` (not yet in the history),
/// each with an id the run has not used: ids an earlier step made, empty
/// ids and over-long ones are replaced by minted ones (`call_1` of step 3
/// again becomes `call_1-3`). Ids repeated within the step are left as
/// they are, for [`refused_step`] to refuse. The same answer after the
/// same history always gets the same ids, so a replay mints alike.
pub(super) fn owned(
    ledger: &RunLedger,
    state: &RunState,
    mut calls: Vec<ToolUseBlock>,
) -> Vec<ToolUseBlock> {
    ledger.with_slot(&state.run_id, |used: &mut UsedIds| {
        used.cover(state);
        // Almost every step: ids of their own, none used before.
        let fresh = calls.iter().enumerate().all(|(at, call)| {
            CallId::check(&call.id).is_ok()
                && !used.ids.contains(&hash(&call.id))
                && !calls[..at].iter().any(|other| other.id == call.id)
        });
        if !fresh {
            calls = owned_against(&used.ids, state.step, std::mem::take(&mut calls));
        }
        used.ids.extend(calls.iter().map(|call| hash(&call.id)));
        used.steps = state.step;
    });
    calls
}

/// The ids of the calls a run's steps made, as hashes, kept in the run's
/// ledger slot so that a step looks its ids up instead of walking the
/// history (a hash shared by two ids only mints an id that was not needed).
#[derive(Default)]
struct UsedIds {
    ids: FxHashSet<u64>,
    /// The steps whose calls `ids` holds.
    steps: u32,
}

impl UsedIds {
    /// Holds the ids of every earlier step of `state` (the one being
    /// answered is `state.step`): read from the history when this process
    /// did not see them all (a resume elsewhere, a replay).
    fn cover(&mut self, state: &RunState) {
        if self.steps == state.step.saturating_sub(1) {
            return;
        }
        self.ids = earlier_ids(state).into_iter().map(hash).collect();
        self.steps = state.step.saturating_sub(1);
    }
}

fn hash(id: &str) -> u64 {
    use std::hash::BuildHasher as _;
    rustc_hash::FxBuildHasher.hash_one(id)
}

/// `calls` with ids the run has not used (see [`owned`]), `earlier` the
/// hashes of those it has.
fn owned_against(
    earlier: &FxHashSet<u64>,
    step: u32,
    mut calls: Vec<ToolUseBlock>,
) -> Vec<ToolUseBlock> {
    let mut in_step: FxHashMap<&str, usize> = FxHashMap::default();
    for call in &calls {
        *in_step.entry(call.id.as_str()).or_default() += 1;
    }
    let repeated: FxHashSet<String> = in_step
        .into_iter()
        .filter(|(id, count)| *count > 1 && !id.is_empty())
        .map(|(id, _)| id.to_owned())
        .collect();
    let mut taken: FxHashSet<String> = calls.iter().map(|c| c.id.clone()).collect();
    for (at, call) in calls.iter_mut().enumerate() {
        if repeated.contains(&call.id) {
            continue;
        }
        let usable = CallId::check(&call.id).is_ok();
        if usable && !earlier.contains(&hash(&call.id)) {
            continue;
        }
        let base = if usable {
            call.id.clone()
        } else {
            format!("call-{at}")
        };
        let minted = mint(&base, step, |id| {
            earlier.contains(&hash(id)) || taken.contains(id)
        });
        tracing::debug!(model_id = %iris_runtime::__wings::shorten(&call.id), minted = %minted, "a call id the run cannot use was replaced");
        taken.insert(minted.clone());
        call.id = minted;
    }
    calls
}

/// An id from `base` for a call of step `step` that `taken` says no other
/// call has, within [`CallId::MAX_LEN`] (a long base is cut, at a
/// character, to leave room for the step and a count).
fn mint(base: &str, step: u32, taken: impl Fn(&str) -> bool) -> String {
    const ROOM: usize = 24;
    let mut cut = base.len().min(CallId::MAX_LEN - ROOM);
    while !base.is_char_boundary(cut) {
        cut -= 1;
    }
    let first = format!("{}-{step}", &base[..cut]);
    if !taken(&first) {
        return first;
    }
    // Only as many ids as the run has can be taken: one of the first that
    // many more is free.
    (1..=u32::MAX)
        .map(|n| format!("{first}-{n}"))
        .find(|id| !taken(id))
        .unwrap_or(first)
}

/// The results of `calls`, a step's, when it is refused for repeating an
/// id: one error per call, in call order;
/// `None` when every id is its own.
pub(super) fn refused_step(calls: &[ToolUseBlock]) -> Option<Vec<FinishedCall>> {
    let repeated = repeated_id(calls)?;
    let message = format!(
        "none of this step's {} calls ran: call id `{}` is given to more than one call, and each result must go to one call; make the calls again, each with an id of its own",
        calls.len(),
        iris_runtime::__wings::shorten(&repeated.id)
    );
    Some(
        calls
            .iter()
            .map(|call| FinishedCall {
                call_id: call.id.clone(),
                result: ToolResult::error(ToolErrorKind::DuplicateCall, message.clone()),
            })
            .collect(),
    )
}

/// The first call of `calls` whose id an earlier call of them has.
fn repeated_id(calls: &[ToolUseBlock]) -> Option<&ToolUseBlock> {
    // A step holds a few calls: comparing each with those before it
    // allocates nothing; past a few dozen a set is quicker.
    const COMPARED: usize = 32;
    if calls.len() <= COMPARED {
        return calls
            .iter()
            .enumerate()
            .find(|(at, call)| calls[..*at].iter().any(|other| other.id == call.id))
            .map(|(_, call)| call);
    }
    let mut seen = FxHashSet::default();
    calls.iter().find(|call| !seen.insert(call.id.as_str()))
}

/// The ids of the calls the run's own earlier steps made (the step being
/// answered is not in the history yet). Each step left one answer; what a
/// child was handed of its parent's history came before them all.
fn earlier_ids(state: &RunState) -> FxHashSet<&str> {
    let earlier_steps = usize::try_from(state.step.saturating_sub(1)).unwrap_or(usize::MAX);
    state
        .messages
        .iter()
        .rev()
        .filter_map(|message| match message {
            Message::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .take(earlier_steps)
        .flatten()
        .map(|call| call.id.as_str())
        .collect()
}
