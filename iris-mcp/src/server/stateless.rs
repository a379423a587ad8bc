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
use super::rounds::{Asking, Opened};
use super::{McpConnection, approval, is_stateless, questions};
use crate::upstream_input::Handover;

/// The input request that asks for an approval.
const APPROVAL: &str = "approval";

/// The input request that asks the model's questions.
const QUESTIONS: &str = "questions";

/// Said of a state sent back that answers another kind of question.
const ANOTHER_KIND: &str =
    "the requestState sent back answers another kind of question; call again without it";

/// What one round of a call ends in: a question for the person (the
/// client calls again with the answer), or the call's outcome.
pub(super) enum Round<T> {
    Ask(InputRequiredResult),
    /// What a server behind this one asked, handed to the client.
    Relay(InputRequiredResult),
    Done(T),
}

/// A stateless client's call: whether it can ask a person, and what it
/// sent back from the round before (its state opened once, here).
pub(super) struct Rounds {
    answered: Option<Answered>,
    can_elicit: bool,
    /// What the client said it can answer, this call.
    can: ClientCapabilities,
    /// The principal calling, for its share of calls waiting on it.
    owner: Option<String>,
}

/// What a client's call brought back from the round before.
enum Answered {
    /// A state sealed here for this very call, and the client's answers.
    Opened(Opened, InputResponses),
    /// A state that does not open for this call, and why.
    Refused(String),
}

impl Rounds {
    /// The rounds of `request` (of `tool` with `arguments`, by
    /// `principal`), when its client is stateless: a state sent back is
    /// opened (and so used up) here, whatever the call turns out to be.
    pub(super) fn of(
        context: &RequestContext<RoleServer>,
        request: &CallToolRequestParams,
        sealer: Option<&super::rounds::Rounds>,
        principal: Option<&Principal>,
        arguments: &Value,
    ) -> Option<Self> {
        if !is_stateless(context) {
            return None;
        }
        let answered = match (&request.request_state, &request.input_responses) {
            (Some(state), Some(responses)) => Some(match sealer {
                Some(sealer) => match sealer.open_any(
                    state,
                    principal.map(|p| p.key().as_str()),
                    &request.name,
                    arguments,
                ) {
                    Ok(opened) => Answered::Opened(opened, responses.clone()),
                    Err(why) => Answered::Refused(why),
                },
                None => Answered::Refused(no_sealer().text_content()),
            }),
            _ => None,
        };
        Some(Self {
            answered,
            can_elicit: questions::can_elicit(context),
            can: context.client_capabilities().unwrap_or_default(),
            owner: principal.map(|p| p.key().as_str().to_owned()),
        })
    }

    /// Why the state the client sent back does not open for this call
    /// (forged, altered, used already, or another call's), if it does not.
    pub(super) fn refused(&self) -> Option<&str> {
        match &self.answered {
            Some(Answered::Refused(why)) => Some(why),
            _ => None,
        }
    }

    /// What the call carries for an upstream server behind it: the
    /// client's answers to what that server asked in the round before, or
    /// nothing yet.
    pub(super) fn handover(&self) -> Handover {
        match &self.answered {
            Some(Answered::Opened(
                Opened {
                    asking: Asking::Upstream,
                    upstream: Some(pending),
                },
                responses,
            )) => Handover::answering(
                self.can.clone(),
                self.owner.clone(),
                pending,
                responses.clone(),
            ),
            _ => Handover::first(self.can.clone(), self.owner.clone()),
        }
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
            Some(Answered::Refused(why)) => Round::Done(ToolResult::error(
                ToolErrorKind::InvalidArguments,
                why.clone(),
            )),
            Some(Answered::Opened(opened, _)) if opened.asking != Asking::Questions => Round::Done(
                ToolResult::error(ToolErrorKind::InvalidArguments, ANOTHER_KIND),
            ),
            Some(Answered::Opened(_, responses)) => {
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
            (Some(Answered::Refused(why)), _) => {
                ApprovalDecision::deny(format!("approval required: {why}"))
            }
            // The client answers what a server behind this one asked while
            // this very call ran: it was let through in a round before.
            (Some(Answered::Opened(opened, _)), Some(_)) if opened.asking == Asking::Upstream => {
                ApprovalDecision::approve(approval)
            }
            (Some(Answered::Opened(opened, _)), Some(_)) if opened.asking != Asking::Approval => {
                ApprovalDecision::deny(format!("approval required: {ANOTHER_KIND}"))
            }
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
            (Some(Answered::Opened(_, responses)), Some(_)) => match answer_in(responses, APPROVAL)
            {
                Some(answer) => approval::decision(approval, &answer),
                None => ApprovalDecision::deny(
                    "the client's answer holds no `approval` response; the call did not run",
                ),
            },
        };
        let continued = matches!(
            &rounds.answered,
            Some(Answered::Opened(opened, _)) if opened.asking == Asking::Upstream
        );
        let said = match &decision {
            ApprovalDecision::Approve { .. } if continued => PolicySaid::Continued,
            ApprovalDecision::Approve { .. } => PolicySaid::AskApproved,
            ApprovalDecision::Deny { .. } => PolicySaid::AskDeclined,
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
