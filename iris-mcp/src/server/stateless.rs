//! Asking the person behind a stateless client (protocol 2026-07-28): an
//! approval or the model's questions go out as an input request in the
//! call's own answer, with a sealed `requestState` (see `rounds`), and the
//! client's second call carries the person's answer. Nothing waits on the
//! server in between: a call the policy asks about is withdrawn in the
//! first round and runs in the second, once the state proves the person
//! answered this very call.

use iris_core::{ToolErrorKind, ToolResult};
use iris_runtime::question::{ASK_QUESTION, QuestionEnding};
use iris_runtime::{ApprovalDecision, ApprovalRequest, ToolOutcome};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ElicitRequest, ElicitRequestParams, ElicitResult,
    InputRequest, InputRequests, InputRequiredResult, InputResponses,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::approval::PolicySaid;
use super::auth::Principal;
use super::rounds::Asking;
use super::{McpConnection, approval, is_stateless, questions};

/// The input request that asks for an approval.
const APPROVAL: &str = "approval";

/// The input request that asks the model's questions.
const QUESTIONS: &str = "questions";

/// What one round of a call ends in: a question for the person (the
/// client calls again with the answer), or the call's outcome.
pub(super) enum Round<T> {
    Ask(InputRequiredResult),
    Done(T),
}

/// A stateless client's call: whether it can ask a person, and what it
/// sent back from the round before.
pub(super) struct Rounds {
    answered: Option<(String, InputResponses)>,
    can_elicit: bool,
}

impl Rounds {
    /// The rounds of `request`, when its client is stateless.
    pub(super) fn of(
        context: &RequestContext<RoleServer>,
        request: &CallToolRequestParams,
    ) -> Option<Self> {
        if !is_stateless(context) {
            return None;
        }
        let answered = match (&request.request_state, &request.input_responses) {
            (Some(state), Some(responses)) => Some((state.clone(), responses.clone())),
            _ => None,
        };
        Some(Self {
            answered,
            can_elicit: questions::can_elicit(context),
        })
    }
}

impl McpConnection {
    /// `ask_question` from a stateless client: the form in the first
    /// round, the result of the person's answer in the second.
    pub(super) fn questions_in_rounds(
        &self,
        arguments: &Value,
        call_id: &str,
        principal: Option<&Principal>,
        rounds: &Rounds,
    ) -> Round<ToolResult> {
        if !rounds.can_elicit {
            return Round::Done(questions::cannot_ask());
        }
        let (request, asked) = match questions::put(arguments, call_id, &self.run_id) {
            Ok(put) => put,
            Err(result) => return Round::Done(result),
        };
        let Some(sealer) = &self.shared.rounds else {
            return Round::Done(no_sealer());
        };
        let key = principal.map(|p| p.key().as_str());
        match &rounds.answered {
            None => match sealer.seal(Asking::Questions, key, ASK_QUESTION, arguments) {
                Ok(state) => Round::Ask(input_required(QUESTIONS, asked, state)),
                Err(why) => Round::Done(ToolResult::error(ToolErrorKind::Internal, why)),
            },
            Some((state, responses)) => {
                if let Err(why) =
                    sealer.open(state, Asking::Questions, key, ASK_QUESTION, arguments)
                {
                    return Round::Done(ToolResult::error(ToolErrorKind::InvalidArguments, why));
                }
                Round::Done(match answer_in(responses, QUESTIONS) {
                    Some(answer) => questions::answered(&request, &answer),
                    None => request.result(QuestionEnding::Cancelled, None),
                })
            }
        }
    }

    /// A call the policy asks about, from a stateless client: withdrawn
    /// and put to the person in the first round; in the second, run when
    /// the echoed state proves the person approved this very call.
    pub(super) async fn approve_in_rounds(
        &self,
        call_id: &str,
        approval: &ApprovalRequest,
        principal: Option<&Principal>,
        rounds: &Rounds,
        cx: &iris_core::ToolContext,
    ) -> Result<Round<(ToolResult, PolicySaid)>, ErrorData> {
        let key = principal.map(|p| p.key().as_str());
        let tool = approval.tool.as_str();
        let decision = match (&rounds.answered, &self.shared.rounds) {
            (_, None) => ApprovalDecision::deny(no_sealer().text_content()),
            (None, Some(sealer)) => {
                let withdrawn = ApprovalDecision::deny(
                    "asked the person through the client's input request; the call runs when the client sends their answer",
                );
                let _ = self.executor.resume(call_id, withdrawn, cx).await;
                if !rounds.can_elicit {
                    // The revision's rule: a request that needs a capability
                    // the client did not declare is refused as a protocol
                    // error naming it (HTTP 400), not run or answered.
                    return Err(needs_elicitation(approval));
                }
                let asked = approval::form(approval).and_then(|form| {
                    Ok((
                        form,
                        sealer.seal(Asking::Approval, key, tool, &approval.arguments)?,
                    ))
                });
                return Ok(match asked {
                    Ok((form, state)) => Round::Ask(input_required(APPROVAL, form, state)),
                    Err(why) => Round::Done((
                        ToolResult::error(ToolErrorKind::PermissionDenied, why),
                        PolicySaid::AskDeclined,
                    )),
                });
            }
            (Some((state, responses)), Some(sealer)) => {
                match sealer.open(state, Asking::Approval, key, tool, &approval.arguments) {
                    Ok(()) => match answer_in(responses, APPROVAL) {
                        Some(answer) => approval::decision(approval, &answer),
                        None => ApprovalDecision::deny(
                            "the client's answer holds no `approval` response; the call did not run",
                        ),
                    },
                    Err(why) => ApprovalDecision::deny(format!("approval required: {why}")),
                }
            }
        };
        let said = if matches!(decision, ApprovalDecision::Approve { .. }) {
            PolicySaid::AskApproved
        } else {
            PolicySaid::AskDeclined
        };
        match self.executor.resume(call_id, decision, cx).await {
            Ok(ToolOutcome::Finished { result, .. }) => Ok(Round::Done((result, said))),
            Ok(ToolOutcome::Waiting(_)) => Err(ErrorData::internal_error(
                "the call still waits for approval after it was answered",
                None,
            )),
            Err(error) => Err(ErrorData::internal_error(error.to_string(), None)),
        }
    }
}

/// One elicitation as the input request `key`, with the sealed `state`.
fn input_required(key: &str, form: ElicitRequestParams, state: String) -> InputRequiredResult {
    let mut requests = InputRequests::new();
    requests.insert(
        key.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(form)),
    );
    InputRequiredResult::new(Some(requests), Some(state))
}

/// The client's answer to the input request `key`.
fn answer_in(responses: &InputResponses, key: &str) -> Option<ElicitResult> {
    serde_json::from_value(responses.get(key)?.clone()).ok()
}

/// -32021: the call needs a person's approval, asked through an input
/// request, and the client declared no elicitation.
fn needs_elicitation(approval: &ApprovalRequest) -> ErrorData {
    let mut error = ErrorData::missing_required_client_capability(
        ClientCapabilities::builder().enable_elicitation().build(),
    );
    error.message = approval::cannot_ask(approval).into();
    error
}

fn no_sealer() -> ToolResult {
    ToolResult::error(
        ToolErrorKind::Internal,
        "this server could not make a key to seal its questions, so a stateless client cannot be asked; connect with a session (protocol 2025-11-25) instead",
    )
}
