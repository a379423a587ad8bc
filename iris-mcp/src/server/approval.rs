//! A call the policy asks about, put to the person behind the client: as
//! an elicitation request the server sends in the session (protocols with
//! sessions), or as an input request of the call's own answer (2026-07-28,
//! stateless). Either way the person sees the tool and its arguments,
//! bounded and with hidden characters shown, and only an explicit
//! approval runs the call.

use iris_runtime::__wings::for_person;
use iris_runtime::{ApprovalDecision, ApprovalRequest};
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::{McpConnection, questions};

/// Characters of a call's arguments a person is shown when asked.
const MAX_SHOWN_ARGUMENTS: usize = 2_000;

/// Characters of a policy's reason a person is shown when asked.
const MAX_SHOWN_REASON: usize = 500;

/// The form that asks a person about `request`.
pub(super) fn form(request: &ApprovalRequest) -> Result<ElicitRequestParams, String> {
    let schema = ElicitationSchema::builder()
        .required_bool("approve")
        .build()
        .map_err(|error| {
            format!(
                "approval required: the question for the person could not be built ({error}); \
                 the call did not run"
            )
        })?;
    let message = format!(
        "Allow `{}` to run with {}?{}",
        request.tool,
        for_person(&request.arguments.to_string(), MAX_SHOWN_ARGUMENTS),
        request
            .reason
            .as_deref()
            .map(|r| format!(" ({})", for_person(r, MAX_SHOWN_REASON)))
            .unwrap_or_default()
    );
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    })
}

/// The decision a person's answer to [`form`] makes: only an accepted
/// form with `approve: true` approves.
pub(super) fn decision(request: &ApprovalRequest, answer: &ElicitResult) -> ApprovalDecision {
    let approved = answer.action == ElicitationAction::Accept
        && answer
            .content
            .as_ref()
            .and_then(|c| c.get("approve"))
            .and_then(Value::as_bool)
            == Some(true);
    if approved {
        ApprovalDecision::approve(request)
    } else {
        ApprovalDecision::deny(format!(
            "the person declined to run `{}`; the call did not run",
            request.tool
        ))
    }
}

/// Why nobody can be asked through a client without elicitation.
pub(super) fn cannot_ask(request: &ApprovalRequest) -> String {
    format!(
        "approval required: `{}` needs a person's approval before it runs, and this \
         MCP client cannot ask one (it does not support elicitation); the call did not run",
        request.tool
    )
}

impl McpConnection {
    /// Puts `request` to the person behind the client in its session,
    /// when the client can ask one: their decision, or (as the error) why
    /// no person could be asked.
    pub(super) async fn ask(
        &self,
        request: &ApprovalRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<ApprovalDecision, String> {
        if !questions::can_elicit(context) {
            return Err(cannot_ask(request));
        }
        let asked = context
            .peer
            .create_elicitation(form(request)?)
            .into_future();
        // An ask nobody answers ends: the call is refused, nothing waits.
        let timeout = self.options.approval_timeout;
        let Ok(asked) = tokio::time::timeout(timeout, asked).await else {
            return Err(format!(
                "approval required: nobody answered within {timeout:?}; the call did not run"
            ));
        };
        match asked {
            Ok(answer) => Ok(decision(request, &answer)),
            Err(error) => Err(format!(
                "approval required: asking the person failed ({error}); the call did not run"
            )),
        }
    }
}

/// What the executor's permission policy said of a call, for the audit
/// log.
#[derive(Clone, Copy)]
pub(super) enum PolicySaid {
    Allow,
    Deny,
    AskApproved,
    AskDeclined,
    /// Asked through a stateless client's input request; the call runs
    /// when the client answers.
    AskPending,
    /// Handed the client what a server behind this one asked during the
    /// call; the call goes on when the client answers.
    Relayed,
    /// The client answered what a server behind this one asked: the call
    /// goes on, let through in the round before.
    Continued,
}

impl PolicySaid {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::AskApproved => "ask_approved",
            Self::AskDeclined => "ask_declined",
            Self::AskPending => "ask_pending",
            Self::Relayed => "relayed",
            Self::Continued => "continued",
        }
    }
}
