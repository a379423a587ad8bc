//! What a run leaves behind: its outcome, and the state a paused run is
//! resumed from (in this process or another).

use iris_core::{RunId, ToolName, ToolResult, ToolUseBlock};
use serde::{Deserialize, Serialize};

use iris_model::{Message, Usage};
use iris_runtime::{ApprovalDecision, ApprovalRequest, QuestionRequest, Reply};

mod wire;

/// The version of [`RunState`]'s shape that runs write, checked when a
/// state is resumed. Each version, and what it changed:
///
/// - 1: the calls of the last step that wait for approval (`pending`).
/// - 2: the waiting part is a list of waiting items (`waiting`), each an
///   approval or a question, with the id a reply names. States of version
///   1 still load and resume (their calls wait for approval), and a sealed
///   one still verifies.
pub const RUN_STATE_VERSION: u32 = 2;

/// The oldest version of [`RunState`] a runner still resumes.
pub const OLDEST_RUN_STATE_VERSION: u32 = 1;

/// A run, as it stands: enough to resume it with the same agent file, in
/// this process or another. Serializable (JSON round-trips).
///
/// Keep it as it was returned: a resume refuses a state whose waiting
/// requests do not hash to their approval or question ids, name another run, call or
/// tool, or are not calls of the history's last step; and in the process
/// that paused the run, any state but the one it returned (an edit, a
/// state of another run, a second resume of the same pause). A state kept
/// where others could edit it, and resumed by other processes, is sealed
/// by giving every runner the same [`StateKey`](crate::StateKey): any edit
/// is then refused everywhere.
#[derive(Debug, Clone, PartialEq)]
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
    pub finished: Vec<FinishedCall>,
    /// What the run waits on: calls of the last step that wait for a
    /// person's approval or answer, in call order.
    pub waiting: Vec<WaitingItem>,
    /// Deferred tools disclosed so far, in disclosure order.
    pub disclosed: Vec<ToolName>,
    /// Tokens used so far.
    pub usage: Usage,
    /// The runner's seal of everything above, when it has a
    /// [`StateKey`](crate::StateKey): a runner with the key resumes only a
    /// state whose seal verifies.
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

/// One thing a run waits on, with what to show the person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitingItem {
    /// What a reply names (for a call of this run, its call id).
    pub id: String,
    /// The call as the model made it.
    pub call: ToolUseBlock,
    /// What it waits for.
    #[serde(flatten)]
    pub wait: Wait,
}

/// What a waiting item waits for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Wait {
    /// A person's approval of the call: reply with an
    /// [`ApprovalDecision`](iris_runtime::ApprovalDecision).
    Approval {
        /// What the person approves or denies.
        request: ApprovalRequest,
    },
    /// A person's answer to the model's questions: reply with a
    /// [`QuestionReply`](iris_runtime::QuestionReply).
    Question {
        /// What the person is asked.
        request: QuestionRequest,
    },
}

impl WaitingItem {
    /// An item for `call`, which waits for approval of `request`.
    #[must_use]
    pub fn approval(call: ToolUseBlock, request: ApprovalRequest) -> Self {
        Self {
            id: call.id.clone(),
            call,
            wait: Wait::Approval { request },
        }
    }

    /// An item for `call`, which asks `request`.
    #[must_use]
    pub fn question(call: ToolUseBlock, request: QuestionRequest) -> Self {
        Self {
            id: call.id.clone(),
            call,
            wait: Wait::Question { request },
        }
    }

    /// The approval request, when the item waits for one.
    #[must_use]
    pub fn approval_request(&self) -> Option<&ApprovalRequest> {
        match &self.wait {
            Wait::Approval { request } => Some(request),
            Wait::Question { .. } => None,
        }
    }

    /// The questions, when the item asks some.
    #[must_use]
    pub fn question_request(&self) -> Option<&QuestionRequest> {
        match &self.wait {
            Wait::Question { request } => Some(request),
            Wait::Approval { .. } => None,
        }
    }

    /// The id the person's reply is bound to: the approval id, or the
    /// question id.
    #[must_use]
    pub fn request_id(&self) -> &str {
        match &self.wait {
            Wait::Approval { request } => &request.approval_id,
            Wait::Question { request } => &request.question_id,
        }
    }

    /// Whether `reply` fits the item: a decision for an approval (an
    /// approval naming the request shown), an answer among the choices (or
    /// in words) for a question.
    ///
    /// # Errors
    /// Why it does not, for the person who gave it.
    pub fn fits(&self, reply: &Reply) -> Result<(), String> {
        match (&self.wait, reply) {
            (
                Wait::Approval { request },
                Reply::Decision(ApprovalDecision::Approve { approval_id }),
            ) if *approval_id != request.approval_id => Err(format!(
                "the approval names request `{}`, but the call waits under request `{}` (tool `{}`, arguments hash {}); approve the request that is shown",
                iris_runtime::__wings::shorten(approval_id),
                request.approval_id,
                request.tool,
                request.arguments_hash
            )),
            (Wait::Approval { .. }, Reply::Decision(_)) => Ok(()),
            (Wait::Question { request }, Reply::Answer(answer)) => request.check(answer),
            (Wait::Approval { .. }, Reply::Answer(_)) => Err(
                "it waits for approval, and an answer is never an approval; approve or deny it"
                    .to_owned(),
            ),
            (Wait::Question { .. }, Reply::Decision(_)) => Err(
                "it is a question, and a decision does not answer it; reply with a `QuestionReply`"
                    .to_owned(),
            ),
        }
    }

    /// The kind of wait, in a word: `approval` or `question`.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match &self.wait {
            Wait::Approval { .. } => "approval",
            Wait::Question { .. } => "question",
        }
    }
}

impl RunState {
    /// The approval requests the run waits on, in call order.
    pub fn approvals(&self) -> impl Iterator<Item = &ApprovalRequest> {
        self.waiting
            .iter()
            .filter_map(WaitingItem::approval_request)
    }

    /// The questions the run waits on, in call order.
    pub fn questions(&self) -> impl Iterator<Item = &QuestionRequest> {
        self.waiting
            .iter()
            .filter_map(WaitingItem::question_request)
    }
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
    /// Some calls wait for a person: show [`RunState::waiting`], then
    /// [`AgentRunner::resume`](super::AgentRunner::resume) with a reply
    /// for each (or some: the run then waits on the rest).
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
