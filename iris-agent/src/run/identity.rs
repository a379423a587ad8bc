//! Call identity at a step's door. A model's call ids are untrusted: a
//! step whose calls repeat an id, reuse one an earlier step of the run
//! made, or give one that is not an id at all (empty, over
//! [`CallId::MAX_LEN`]) is refused whole before anything of it runs,
//! whatever the calls are (tools, questions, skills, child agents): every
//! key, child run and path is built from the id, and two calls under one
//! id would share them.

use iris_core::{CallId, ToolErrorKind, ToolResult, ToolUseBlock};
use iris_model::Message;
use rustc_hash::FxHashSet;

use crate::{FinishedCall, RunState};

/// The results of `calls` (the step `state`'s history ends with) when the
/// step is refused for its ids: one error per call, in call order; `None`
/// when every id is its own.
pub(super) fn refused_step(state: &RunState, calls: &[ToolUseBlock]) -> Option<Vec<FinishedCall>> {
    let why = fault(state, calls)?;
    let message = format!(
        "none of this step's {} calls ran: {why}; make the calls again, each with an id of its own",
        calls.len()
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

/// What is wrong with the ids of `calls`, if anything.
fn fault(state: &RunState, calls: &[ToolUseBlock]) -> Option<String> {
    let mut seen = FxHashSet::default();
    for call in calls {
        if let Err(err) = CallId::new(call.id.as_str()) {
            return Some(err.to_string());
        }
        if !seen.insert(call.id.as_str()) {
            return Some(format!(
                "call id `{}` is given to more than one call",
                iris_runtime::__wings::shorten(&call.id)
            ));
        }
    }
    // The run's own steps before this one: each left one answer, and the
    // history's last is this step's (what a child was handed of its
    // parent's history came before them all).
    let earlier_steps = usize::try_from(state.step.saturating_sub(1)).unwrap_or(usize::MAX);
    state
        .messages
        .iter()
        .rev()
        .skip(1)
        .filter_map(|message| match message {
            Message::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .take(earlier_steps)
        .flatten()
        .find(|earlier| seen.contains(earlier.id.as_str()))
        .map(|earlier| {
            format!(
                "call id `{}` was used by an earlier call of this run, and an id names one call",
                iris_runtime::__wings::shorten(&earlier.id)
            )
        })
}
