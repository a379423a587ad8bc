//! What a run leaves behind: its outcome, and the state a paused run is
//! resumed from (in this process or another).

use iris_core::{CallPath, RunId, ToolName, ToolResult, ToolUseBlock};
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
/// - 3: each waiting item holds each fact once: the id of a call of the
///   history's last step and what that call does not say (the tool it
///   resolved to and the policy's reason; a question's expiry; a child's
///   run); the request a person is shown is derived from the call. States
///   of versions 1 and 2, whose items hold copies of the call and its
///   request, load only when the copies agree, and are written back in
///   their own shape.
pub const RUN_STATE_VERSION: u32 = 3;

/// The oldest version of [`RunState`] a runner still resumes.
pub const OLDEST_RUN_STATE_VERSION: u32 = 1;

/// A run, as it stands: enough to resume it with the same agent file, in
/// this process or another. Serializable (JSON round-trips).
///
/// Keep it as it was returned: the state of a run that waits is sealed
/// ([`RunState::seal`]) with the host's key by default (every state, with
/// the runner's [`StateKey`](crate::StateKey)), and a resume refuses any
/// edit. Beneath
/// the seal (and for a host that
/// [trusts unsealed states](crate::AgentRunner::trust_unsealed_states)) a
/// resume refuses a state whose waiting requests do not hash to their
/// approval or question ids, name another run, call or tool, or are not
/// calls of the history's last step; and in the process that paused the
/// run, any state but the one it returned (an edit, a state of another
/// run), and a second resume of the same pause, even after the first
/// finished the run.
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
    /// Skills activated so far, in activation order: activating one again
    /// returns a short note, here or in the process that resumes the run.
    pub skills: Vec<String>,
    /// Tokens used so far, those of the child agents it delegated to
    /// included.
    pub usage: Usage,
    /// The child agents' runs that ended, in the order they ended: kept
    /// apart from the history (the model read only their output), each
    /// with its own history, steps and usage.
    pub children: Vec<ChildRun>,
    /// The run's output, once its final answer fit the output the run asks
    /// for ([`Output`](crate::Output)): read it typed with
    /// [`RunOutcome::output`].
    pub output: Option<serde_json::Value>,
    /// The answers that did not fit the run's output so far, each sent back
    /// to the model with its faults.
    pub output_faults: u32,
    /// What the run's tree spent against its [`Budget`](crate::Budget)
    /// so far (kept by the root; a resume goes on from it).
    pub spent: crate::Spent,
    /// The runner's seal of everything above, when it has a
    /// [`StateKey`](crate::StateKey): a runner with the key resumes only a
    /// state whose seal verifies.
    pub seal: Option<String>,
}

/// A child agent's run that ended, kept beside the run that delegated to
/// it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildRun {
    /// The call that delegated.
    pub call_id: String,
    /// The child agent's name.
    pub agent: String,
    /// How deep it ran (1 for a child of the root).
    pub depth: u32,
    /// How it ended: `finished`, `max_steps`, `max_tokens`, `deadline` or
    /// `cancelled`.
    pub ending: String,
    /// Its run as it ended (its run id derived from the delegating run and
    /// call).
    pub state: RunState,
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
///
/// An item holds each fact once: the call is the history's (its last
/// step's call with this id), and what a person is shown (the approval
/// request, the questions) is derived from that call, so the two cannot
/// disagree, in memory or in a saved state (which keeps only the call id
/// and what the call does not say: the tool it resolved to, the policy's
/// reason, a question's expiry, a child's run).
#[derive(Debug, Clone, PartialEq)]
pub struct WaitingItem {
    call: ToolUseBlock,
    wait: Wait,
}

/// What a waiting item waits for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Wait {
    /// A person's approval of the call: reply with an
    /// [`ApprovalDecision`](iris_runtime::ApprovalDecision).
    Approval {
        /// What the person approves or denies, derived from the call.
        request: ApprovalRequest,
    },
    /// A person's answer to the model's questions: reply with a
    /// [`QuestionReply`](iris_runtime::QuestionReply).
    Question {
        /// What the person is asked, derived from the call.
        request: QuestionRequest,
    },
    /// A child agent the call delegated to, which waits itself: its own
    /// waiting items are listed with the rest by [`RunState::pending`] and
    /// replied to by their path (`call id/item id`).
    Child {
        /// The child agent's name, as the model called it.
        agent: String,
        /// How deep the child runs (1 for a child of the root).
        depth: u32,
        /// The child's run, as it stands.
        state: Box<RunState>,
    },
}

impl WaitingItem {
    /// An item for `call` of run `run_id`, which waits for a person's
    /// approval to call `tool` (the tool the call's name resolves to),
    /// because of `reason`: the request shown is derived from the call.
    #[must_use]
    pub fn approval(
        run_id: &RunId,
        call: ToolUseBlock,
        tool: ToolName,
        reason: Option<String>,
    ) -> Self {
        let request = ApprovalRequest::for_call(run_id.clone(), &call, tool, reason);
        Self {
            call,
            wait: Wait::Approval { request },
        }
    }

    /// An item for `call` of run `run_id`, an `ask_question` call whose
    /// questions wait for an answer until `expires_at_ms` (milliseconds
    /// since the Unix epoch), derived from the call.
    ///
    /// # Errors
    /// Why the call's arguments are not questions.
    pub fn question(
        run_id: &RunId,
        call: ToolUseBlock,
        expires_at_ms: Option<u64>,
    ) -> Result<Self, String> {
        let questions = iris_runtime::question::parse_questions(&call.input)?;
        let request =
            QuestionRequest::new(run_id.clone(), call.id.clone(), questions, expires_at_ms);
        Ok(Self {
            call,
            wait: Wait::Question { request },
        })
    }

    /// An item for `call`, whose questions `request` (parsed from the
    /// call by run control) wait.
    pub(crate) fn asked(call: ToolUseBlock, request: QuestionRequest) -> Self {
        debug_assert_eq!(request.call_id, call.id, "a question is its call's");
        Self {
            call,
            wait: Wait::Question { request },
        }
    }

    /// An item for `call`, which delegated to a child agent (the one the
    /// call names) at `depth`, whose run waits as `state`.
    #[must_use]
    pub fn child(call: ToolUseBlock, depth: u32, state: RunState) -> Self {
        Self {
            wait: Wait::Child {
                agent: call.name.clone(),
                depth,
                state: Box::new(state),
            },
            call,
        }
    }

    /// What a reply names: for a call of this run, its call id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.call.id
    }

    /// The call as the model made it (the history's last step holds it).
    #[must_use]
    pub fn call(&self) -> &ToolUseBlock {
        &self.call
    }

    /// What it waits for.
    #[must_use]
    pub fn wait(&self) -> &Wait {
        &self.wait
    }

    /// The item's parts, to take apart.
    pub(crate) fn into_parts(self) -> (ToolUseBlock, Wait) {
        (self.call, self.wait)
    }

    /// An item put back together from the parts
    /// [`into_parts`](Self::into_parts) took apart.
    pub(crate) fn from_parts(call: ToolUseBlock, wait: Wait) -> Self {
        Self { call, wait }
    }

    /// The approval request, when the item waits for one.
    #[must_use]
    pub fn approval_request(&self) -> Option<&ApprovalRequest> {
        match &self.wait {
            Wait::Approval { request } => Some(request),
            _ => None,
        }
    }

    /// The questions, when the item asks some.
    #[must_use]
    pub fn question_request(&self) -> Option<&QuestionRequest> {
        match &self.wait {
            Wait::Question { request } => Some(request),
            _ => None,
        }
    }

    /// The child's run, when the item is a child agent that waits.
    #[must_use]
    pub fn child_state(&self) -> Option<&RunState> {
        match &self.wait {
            Wait::Child { state, .. } => Some(state),
            _ => None,
        }
    }

    /// The id the person's reply is bound to: the approval id, or the
    /// question id.
    #[must_use]
    pub fn request_id(&self) -> &str {
        match &self.wait {
            Wait::Approval { request } => &request.approval_id,
            Wait::Question { request } => &request.question_id,
            Wait::Child { state, .. } => state.run_id.as_str(),
        }
    }

    /// Whether `reply` fits the item: a decision for an approval (an
    /// approval naming the request shown), an answer among the choices (or
    /// in words) for a question.
    ///
    /// # Errors
    /// Why it does not, for the person who gave it.
    pub fn fits(&self, reply: &Reply) -> Result<(), ReplyMismatch> {
        match (&self.wait, reply) {
            (
                Wait::Approval { request },
                Reply::Decision(ApprovalDecision::Approve { approval_id }),
            ) if *approval_id != request.approval_id => Err(ReplyMismatch::OtherRequest {
                named: iris_runtime::__wings::shorten(approval_id).into_owned(),
                waits: request.approval_id.clone(),
                tool: request.tool.to_string(),
                arguments_hash: request.arguments_hash.clone(),
            }),
            (Wait::Approval { .. }, Reply::Decision(_)) => Ok(()),
            (Wait::Question { request }, Reply::Answer(answer)) => {
                request.check(answer).map_err(ReplyMismatch::Answer)
            }
            (Wait::Approval { .. }, Reply::Answer(_)) => Err(ReplyMismatch::AnswerForApproval),
            (Wait::Question { .. }, Reply::Decision(_)) => Err(ReplyMismatch::DecisionForQuestion),
            (Wait::Child { state, .. }, _) => Err(ReplyMismatch::ChildItem {
                items: state
                    .pending()
                    .iter()
                    .map(|p| format!("`{}/{}`", CallPath::join(None, self.id()), p.id))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// The kind of wait, in a word: `approval`, `question` or `child`.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match &self.wait {
            Wait::Approval { .. } => "approval",
            Wait::Question { .. } => "question",
            Wait::Child { .. } => "child",
        }
    }
}

impl RunState {
    /// The approval requests of the run's own calls that wait, in call
    /// order (see [`RunState::pending`] for those of its child agents too).
    pub fn approvals(&self) -> impl Iterator<Item = &ApprovalRequest> {
        self.waiting
            .iter()
            .filter_map(WaitingItem::approval_request)
    }

    /// The questions of the run's own calls that wait, in call order (see
    /// [`RunState::pending`] for those of its child agents too).
    pub fn questions(&self) -> impl Iterator<Item = &QuestionRequest> {
        self.waiting
            .iter()
            .filter_map(WaitingItem::question_request)
    }

    /// Everything a person must reply to before the run goes on: the
    /// approvals and questions of the run and of every child agent that
    /// waits in it, at any depth, flat, in call order, each with the id a
    /// reply names.
    #[must_use]
    pub fn pending(&self) -> Vec<PendingItem> {
        let mut flat = Vec::new();
        collect_pending(self, None, &[], &mut flat);
        flat
    }

    /// Keeps `child`, a child agent's run that ended, beside this run: its
    /// tokens count as this run's.
    pub(crate) fn keep_child(&mut self, child: Option<Box<ChildRun>>) {
        if let Some(child) = child {
            self.usage += child.state.usage;
            self.children.push(*child);
        }
    }

    /// The run of the child agent `run_id` names, ended or waiting, at any
    /// depth below this run.
    #[must_use]
    pub fn child_run(&self, run_id: &RunId) -> Option<&RunState> {
        let ended = self.children.iter().map(|child| &child.state);
        let waiting = self.waiting.iter().filter_map(WaitingItem::child_state);
        for state in ended.chain(waiting) {
            if state.run_id == *run_id {
                return Some(state);
            }
            if let Some(found) = state.child_run(run_id) {
                return Some(found);
            }
        }
        None
    }

    /// The item `id` names ([`RunState::pending`]'s ids), at any depth.
    #[must_use]
    pub fn find_pending(&self, id: &str) -> Option<&WaitingItem> {
        let (head, rest) = CallPath::split_first(id)?;
        let item = self.waiting.iter().find(|item| item.id() == head)?;
        match (rest, &item.wait) {
            (None, Wait::Child { .. })
            | (Some(_), Wait::Approval { .. } | Wait::Question { .. }) => None,
            (None, _) => Some(item),
            (Some(rest), Wait::Child { state, .. }) => state.find_pending(rest),
        }
    }
}

/// One item a run waits on, anywhere in its tree, as
/// [`RunState::pending`] lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingItem {
    /// What a reply names: the item's [`CallPath`], the ids of the calls
    /// that delegated to the child agents it waits in first (`c3/c1`; an
    /// id holding `/` or `%` is escaped, so `a/b` of the root is `a%2Fb`).
    pub id: String,
    /// The run the item waits in (the root's, or a child's).
    pub run_id: RunId,
    /// The child agents it waits in, outermost first (empty for the run's
    /// own items).
    pub agents: Vec<String>,
    /// The item, with what to show.
    pub item: WaitingItem,
}

fn collect_pending(
    state: &RunState,
    prefix: Option<&str>,
    agents: &[String],
    flat: &mut Vec<PendingItem>,
) {
    for item in &state.waiting {
        let id = CallPath::join(prefix, item.id());
        match &item.wait {
            Wait::Child { agent, state, .. } => {
                let mut inner = agents.to_vec();
                inner.push(agent.clone());
                collect_pending(state, Some(&id), &inner, flat);
            }
            _ => flat.push(PendingItem {
                id,
                run_id: state.run_id.clone(),
                agents: agents.to_vec(),
                item: item.clone(),
            }),
        }
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
    /// The model's last answer was cut off by its token limit
    /// (`max_tokens`) before it finished, with no calls: `text` is what it
    /// wrote. Raise the limit, or resume the conversation from `state`.
    CutOff {
        /// The text written before the limit.
        text: String,
        /// The whole run.
        state: RunState,
    },
    /// The run took `max_steps` steps without finishing.
    MaxSteps(RunState),
    /// The run's cancellation token was triggered.
    Cancelled(RunState),
    /// A hook refused the run: its task (`run.started`), a request
    /// (`model.before`) or an answer (`model.after`). Nothing of the
    /// refused turn was acted on or recorded.
    Refused {
        /// The hook that refused.
        hook: String,
        /// Why.
        reason: String,
        /// The run as it stood.
        state: RunState,
    },
    /// The run's tree met a bound of its [`Budget`](crate::Budget): the
    /// request or calls that would have passed it were not made.
    OverBudget {
        /// The bound, and what was left of it.
        over: crate::OverBudget,
        /// The run as it stood, its spend in [`RunState::spent`].
        state: RunState,
    },
    /// The model's final answer did not fit the output the run asks for,
    /// after it was sent back with its faults as many times as the output
    /// allows: `text` is the last answer, `error` what is wrong with it.
    OutputInvalid {
        /// The last answer.
        text: String,
        /// Why it is not the output.
        error: crate::OutputError,
        /// The whole run.
        state: RunState,
    },
}

impl RunOutcome {
    /// The run's state, however it ended.
    #[must_use]
    pub fn state(&self) -> &RunState {
        match self {
            RunOutcome::Finished { state, .. }
            | RunOutcome::CutOff { state, .. }
            | RunOutcome::OutputInvalid { state, .. }
            | RunOutcome::OverBudget { state, .. }
            | RunOutcome::Refused { state, .. }
            | RunOutcome::Waiting(state)
            | RunOutcome::MaxSteps(state)
            | RunOutcome::Cancelled(state) => state,
        }
    }

    /// The run's output read as `T`: the value its final answer carried,
    /// when the run asked for an output ([`Output`](crate::Output)) and
    /// finished with one.
    ///
    /// # Errors
    /// [`OutputError::Mismatch`](crate::OutputError::Mismatch) when the
    /// value is not a `T` (located), the run's own error when its last
    /// answer did not fit, and [`OutputError::Missing`](crate::OutputError::Missing)
    /// when it ended otherwise (it waits, ran out of steps, was cancelled,
    /// or asked for no output).
    pub fn output<T: serde::de::DeserializeOwned>(&self) -> Result<T, crate::OutputError> {
        let why = match self {
            RunOutcome::Finished { state, .. } => match &state.output {
                Some(value) => {
                    return iris_core::schema::parse_arguments::<T>(value)
                        .map_err(crate::OutputError::Mismatch);
                }
                None => "it finished in text: give its agent or runner an `Output`",
            },
            RunOutcome::OutputInvalid { error, .. } => return Err(error.clone()),
            RunOutcome::Waiting(_) => "it waits for a person; resume it",
            RunOutcome::CutOff { .. } => "its answer was cut off by its token limit",
            RunOutcome::MaxSteps(_) => "it used its steps without answering",
            RunOutcome::Cancelled(_) => "it was cancelled",
            RunOutcome::Refused { .. } => "a hook refused it",
            RunOutcome::OverBudget { .. } => "it met a bound of its budget",
        };
        Err(crate::OutputError::Missing(why.to_owned()))
    }

    /// The run's state, to hand out.
    pub(crate) fn state_mut(&mut self) -> &mut RunState {
        match self {
            RunOutcome::Finished { state, .. }
            | RunOutcome::CutOff { state, .. }
            | RunOutcome::OutputInvalid { state, .. }
            | RunOutcome::OverBudget { state, .. }
            | RunOutcome::Refused { state, .. }
            | RunOutcome::Waiting(state)
            | RunOutcome::MaxSteps(state)
            | RunOutcome::Cancelled(state) => state,
        }
    }
}

/// Why a reply does not fit the item it names; nothing ran and nothing was
/// recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplyMismatch {
    /// An approval of another request than the one the call waits under
    /// (another call, or the same call with other arguments).
    #[error(
        "the approval names request `{named}`, but the call waits under request `{waits}` (tool `{tool}`, arguments hash {arguments_hash}); approve the request that is shown"
    )]
    OtherRequest {
        /// The request the approval names (shortened).
        named: String,
        /// The request the call waits under.
        waits: String,
        /// The call's tool.
        tool: String,
        /// The hash of the call's arguments.
        arguments_hash: String,
    },
    /// An answer sent to a call that waits for approval.
    #[error("it waits for approval, and an answer is never an approval; approve or deny it")]
    AnswerForApproval,
    /// A decision sent to a question.
    #[error("it is a question, and a decision does not answer it; reply with a `QuestionReply`")]
    DecisionForQuestion,
    /// An answer the question does not take (not among its choices, too
    /// long, another question set), as the question says.
    #[error("{0}")]
    Answer(String),
    /// A reply to a child agent, which waits on its own items.
    #[error(
        "it is a child agent that waits on its own items ({items}); reply to those, by their ids"
    )]
    ChildItem {
        /// The child's items, by the ids a reply names.
        items: String,
    },
}
