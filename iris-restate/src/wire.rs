//! What the workflow's handlers take and answer, as JSON over Restate's
//! ingress.

use iris_agent::{PendingItem, RunOutcome, RunState, RunStatus};
use iris_runtime::Reply;
use serde::{Deserialize, Serialize};

/// The input of `run`: the person's task. The run id is the workflow key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartRun {
    /// What the person asks of the agent.
    pub task: String,
}

/// The input of `decide`: a person's reply to one waiting item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decide {
    /// The waiting item (for a call of the run, its call id; `call_id` is
    /// read as well).
    #[serde(alias = "call_id")]
    pub item_id: String,
    /// The reply: for an approval a decision, whose approval names the
    /// `approval_id` of the request that was shown (which binds it to the
    /// run, the call, the tool and the arguments' hash); for a question an
    /// answer naming its `question_id`. `decision` is read as well.
    #[serde(alias = "decision")]
    pub reply: Reply,
}

/// How a run ended: the answer of `run`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// `finished`, `cut_off`, `max_steps`, `cancelled`, `output_invalid` or
    /// `refused`.
    pub ended: Ended,
    /// The model's last text (empty unless it finished).
    pub text: String,
    /// The whole run.
    pub state: RunState,
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// The model answered without calling tools.
    Finished,
    /// The model's answer was cut off by its token limit.
    CutOff,
    /// The run took its step limit.
    MaxSteps,
    /// The run was cancelled.
    Cancelled,
    /// The model's last answer did not fit the run's output.
    OutputInvalid,
    /// A hook refused the run (its task, a request or an answer); `text`
    /// names the hook and why.
    Refused,
    /// The run met a bound of its budget; `text` says which and what was
    /// left.
    OverBudget,
}

impl RunReport {
    /// The report of an outcome that is not a wait.
    pub(crate) fn of(outcome: RunOutcome) -> Option<Self> {
        let (ended, text, state) = match outcome {
            RunOutcome::Finished { text, state } => (Ended::Finished, text, state),
            RunOutcome::CutOff { text, state } => (Ended::CutOff, text, state),
            RunOutcome::MaxSteps(state) => (Ended::MaxSteps, String::new(), state),
            RunOutcome::Cancelled(state) => (Ended::Cancelled, String::new(), state),
            RunOutcome::OutputInvalid { text, state, .. } => (Ended::OutputInvalid, text, state),
            RunOutcome::Refused {
                hook,
                reason,
                state,
            } => (Ended::Refused, format!("{hook}: {reason}"), state),
            RunOutcome::OverBudget { over, state } => (Ended::OverBudget, over.to_string(), state),
            RunOutcome::Waiting(_) => return None,
        };
        Some(Self { ended, text, state })
    }
}

/// Where a run stands: the answer of `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunView {
    /// `running`, `waiting` or `finished`; `None` before its first step.
    pub status: Option<RunStatus>,
    /// The items that wait for a person (approvals and questions, those of
    /// child agents too), each with the id a reply names and what to show.
    pub waiting: Vec<PendingItem>,
    /// The run as of its last step boundary.
    pub state: Option<RunState>,
}
