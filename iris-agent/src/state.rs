//! What a run leaves behind: its outcome, and the state a paused run is
//! resumed from (in this process or another).

use iris_core::{RunId, ToolName, ToolResult, ToolUseBlock};
use serde::{Deserialize, Serialize};

use iris_model::{Message, Usage};
use iris_runtime::ApprovalRequest;

/// The version of [`RunState`]'s shape, checked when a state is resumed.
pub const RUN_STATE_VERSION: u32 = 1;

/// A run, as it stands: enough to resume it with the same agent file, in
/// this process or another. Serializable (JSON round-trips).
///
/// Keep it as it was returned: a resume refuses a state whose waiting
/// requests do not hash to their approval ids, name another run, call or
/// tool, or are not calls of the history's last step; and in the process
/// that paused the run, any state but the one it returned (an edit, a
/// state of another run, a second resume of the same pause). A state kept
/// where others could edit it, and resumed by other processes, is sealed
/// by giving every runner the same [`StateKey`](crate::StateKey): any edit
/// is then refused everywhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// The shape's version ([`RUN_STATE_VERSION`]).
    pub version: u32,
    /// The agent's name, checked on resume.
    pub agent: String,
    /// The run.
    pub run_id: RunId,
    /// Model steps taken.
    pub step: u32,
    /// The history, oldest first.
    pub messages: Vec<Message>,
    /// Results of the last step's calls that finished before the pause, by
    /// call id: they never run again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finished: Vec<FinishedCall>,
    /// Calls of the last step that wait for a person.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingCall>,
    /// Deferred tools disclosed so far, in disclosure order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disclosed: Vec<ToolName>,
    /// Tokens used so far.
    pub usage: Usage,
    /// The runner's seal of everything above, when it has a
    /// [`StateKey`](crate::StateKey): a runner with the key resumes only a
    /// state whose seal verifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal: Option<String>,
}

/// A call of the paused step that has its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinishedCall {
    /// The call's id.
    pub call_id: String,
    /// Its result.
    pub result: ToolResult,
}

/// A call that waits for a person, with what to show them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call as the model made it.
    pub call: ToolUseBlock,
    /// What the person approves or denies.
    pub request: ApprovalRequest,
}

/// How a run ended, or that it waits.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    /// The model answered without calling tools.
    Finished {
        /// Its final text.
        text: String,
        /// The whole run.
        state: RunState,
    },
    /// Some calls wait for approval: show [`RunState::pending`], then
    /// [`AgentRunner::resume`](super::AgentRunner::resume) with a decision
    /// for each.
    Waiting(RunState),
    /// The run took `max_steps` steps without finishing.
    MaxSteps(RunState),
    /// The run's cancellation token was triggered.
    Cancelled(RunState),
}

impl RunOutcome {
    /// The run's state, however it ended.
    #[must_use]
    pub fn state(&self) -> &RunState {
        match self {
            RunOutcome::Finished { state, .. }
            | RunOutcome::Waiting(state)
            | RunOutcome::MaxSteps(state)
            | RunOutcome::Cancelled(state) => state,
        }
    }

    /// The run's state, to hand out.
    pub(crate) fn state_mut(&mut self) -> &mut RunState {
        match self {
            RunOutcome::Finished { state, .. }
            | RunOutcome::Waiting(state)
            | RunOutcome::MaxSteps(state)
            | RunOutcome::Cancelled(state) => state,
        }
    }
}
