//! A saved state comes back from the host, maybe edited: what a person is
//! shown in it must be what an approval runs, and it must resume the run
//! it was saved from and no other.
//!
//! Every state is checked on its own: what a waiting item shows is
//! derived from its call (see [`WaitingItem`]), and the call must be one
//! the history's last step made, in the state's run, naming what the agent
//! has. In the process that paused the
//! run, the ledger also keeps a fingerprint of the state handed out, and
//! only that state resumes the run: an edit anywhere, a state of another
//! run, or a second resume of the same pause is refused. Another process
//! has no fingerprint; the executor admits each call again there, and its
//! fresh request must carry the approved id.

use iris_core::{RunId, ToolUseBlock};
use iris_model::Message;
use iris_runtime::ToolRegistry;
use iris_runtime::ledger::RunLedger;
use sha2::{Digest, Sha256};

use crate::Agent;
use crate::children::child_run_id;
use crate::error::RunError;
use crate::seal::absorb_json;
use crate::state::{RunState, Wait, WaitingItem};

/// The fingerprint of the state a waiting run was handed out with.
#[derive(Default)]
struct PausedWith(Option<[u8; 32]>);

/// Remembers `state`, just handed out at a pause, as the one that resumes
/// its run in this process.
pub(crate) fn remember(ledger: &RunLedger, state: &RunState) {
    let print = fingerprint(state);
    ledger.with_slot(&state.run_id, |paused: &mut PausedWith| {
        paused.0 = Some(print);
    });
}

/// Checks `state` before it resumes the run `running` names, and ends the
/// pause it resumes (at once, so two resumes of one pause cannot both
/// pass). A refused state takes nothing: the right one still resumes.
pub(crate) fn check(agent: &Agent, state: &RunState, running: &RunId) -> Result<(), RunError> {
    let ledger = agent.ledger();
    let refuse = |why: String| RunError::StateMismatch {
        run_id: state.run_id.clone(),
        why,
    };
    if state.run_id != *running {
        return Err(refuse(format!(
            "the run context names run `{running}`; resume a state with the context of its own run"
        )));
    }
    check_items(agent, state).map_err(refuse)?;
    let print = fingerprint(state);
    let paused = ledger.update_slot(&state.run_id, |paused: &mut PausedWith| match paused.0 {
        Some(kept) if kept == print => {
            paused.0 = None;
            Pause::Resumed
        }
        Some(_) => Pause::Other,
        None => Pause::Over,
    });
    let Some(pause) = paused else {
        if ledger.contains(&state.run_id) {
            return Err(refuse(
                "the run is under way in this process and does not wait with this state (was it resumed already?)"
                    .to_owned(),
            ));
        }
        // Another process paused the run: the executor checks each call
        // as it admits it again.
        return Ok(());
    };
    match pause {
        Pause::Resumed => Ok(()),
        Pause::Other => Err(refuse(
            "it is not the state this run paused with: it was edited, or saved from another run"
                .to_owned(),
        )),
        Pause::Over => Err(refuse(
            "this pause was resumed already; a run resumes once from each pause".to_owned(),
        )),
    }
}

/// Checks every waiting item of `state` (and, inside a child agent's item,
/// the child's state with the child's agent, at any depth) and its
/// finished calls, before anything of the tree runs.
fn check_items(agent: &Agent, state: &RunState) -> Result<(), String> {
    let registry = &agent.registry();
    let step_calls: &[ToolUseBlock] = match state.messages.last() {
        Some(Message::Assistant { tool_calls, .. }) => tool_calls,
        _ => &[],
    };
    for item in &state.waiting {
        check_item(agent, registry, state, item, step_calls)?;
    }
    if let Some(finished) = state
        .finished
        .iter()
        .find(|f| !step_calls.iter().any(|c| c.id == f.call_id))
    {
        return Err(format!(
            "finished call `{}` is not one the history's last step made",
            echo(&finished.call_id)
        ));
    }
    Ok(())
}

/// Checks one waiting item of `state`. What it shows is derived from its
/// call (a saved state keeps only the call's id), so what is left to
/// check is what the item was derived with: the call is one the history's
/// last step made, in the state's run, and names what the agent has (the
/// tool an approval shows, `ask_question`, a declared child agent).
fn check_item(
    agent: &Agent,
    registry: &ToolRegistry,
    state: &RunState,
    item: &WaitingItem,
    step_calls: &[ToolUseBlock],
) -> Result<(), String> {
    let call = item.call();
    if !step_calls.contains(call) {
        return Err(format!(
            "waiting call `{}` is not one the history's last step made",
            echo(&call.id)
        ));
    }
    let fits = match item.wait() {
        Wait::Approval { request } => {
            // A tool's canonical name, or a child agent's (starting one
            // may wait for approval too).
            let resolved = registry
                .resolve(&call.name)
                .map(|tool| tool.definition_dyn().name().clone())
                .or_else(|| {
                    agent
                        .child(&call.name)
                        .and_then(|child| child.definition())
                        .map(|d| d.name().clone())
                });
            request.run_id == state.run_id && resolved.as_ref() == Some(&request.tool)
        }
        Wait::Question { request } => {
            request.run_id == state.run_id && call.name == iris_runtime::question::ASK_QUESTION
        }
        Wait::Child { state: child, .. } => {
            let Some(declared) = agent.child(&call.name) else {
                return Err(format!(
                    "call `{}` waits on child agent `{}`, which this agent does not have",
                    echo(&call.id),
                    echo(&call.name)
                ));
            };
            if child.run_id != child_run_id(&state.run_id, &call.id) {
                return Err(format!(
                    "the child run that call `{}` waits on is not the one the call delegated to",
                    echo(&call.id)
                ));
            }
            return check_items(declared.agent(), child).map_err(|why| {
                format!(
                    "in child agent `{}` (call `{}`): {why}",
                    echo(&call.name),
                    echo(&call.id)
                )
            });
        }
    };
    if fits {
        Ok(())
    } else {
        Err(format!(
            "waiting call `{}` is for another run, or names a tool this agent does not offer under that name",
            echo(&call.id)
        ))
    }
}

/// How a state met the pause its run waits in.
enum Pause {
    /// It is the state handed out: the pause ends.
    Resumed,
    /// Another state.
    Other,
    /// The pause ended already.
    Over,
}

/// SHA-256 of the state's JSON: equal for a state that went through JSON
/// and back unchanged, different for any edit.
fn fingerprint(state: &RunState) -> [u8; 32] {
    let mut hasher = Sha256::new();
    absorb_json(&mut hasher, state);
    hasher.finalize().into()
}

fn echo(text: &str) -> std::borrow::Cow<'_, str> {
    iris_runtime::__wings::shorten(text)
}
