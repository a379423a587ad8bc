//! One `tools/call`: run control's questions apart, then (behind a gate)
//! the caller's grant, then the executor, with a person asked through the
//! client when the policy says ask, and every decision written to the
//! audit log.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use iris_core::{ToolErrorKind, ToolResult, ToolUseBlock};
use iris_runtime::{ApprovalDecision, ToolOutcome};
use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::approval::PolicySaid;
use super::auth::{AuditEntry, Grant, Principal, millis};
use super::relay::Relay;
use super::stateless::{Round, Rounds};
use super::{McpConnection, questions};
use crate::content::to_mcp;

/// The address `context`'s request came from, when served over HTTP.
pub(super) fn address_of(context: &RequestContext<RoleServer>) -> Option<std::net::IpAddr> {
    crate::server::auth::address_in(
        &context
            .extensions
            .get::<hyper::http::request::Parts>()?
            .extensions,
    )
}

/// The principal the gateway let `context`'s request in as.
pub(super) fn principal_of(context: &RequestContext<RoleServer>) -> Option<Principal> {
    context
        .extensions
        .get::<hyper::http::request::Parts>()?
        .extensions
        .get::<Principal>()
        .cloned()
}

impl McpConnection {
    pub(super) async fn call(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = Instant::now();
        let call_id = format!("call-{}", self.next_call.fetch_add(1, Ordering::Relaxed));
        let principal = principal_of(&context);
        let address = address_of(&context);
        let arguments = Value::Object(request.arguments.take().unwrap_or_default());
        let rounds = Rounds::of(
            &context,
            &request,
            self.shared.rounds.as_ref(),
            principal.as_ref(),
            &arguments,
        );
        let line = |rule_decision, rule, said, result| CallLine {
            principal: principal.as_ref(),
            address,
            tool: &request.name,
            arguments: &arguments,
            rule_decision,
            rule,
            said,
            result,
            started,
        };
        // A requestState that does not open for this call is a request the
        // server cannot take (SEP-2322: refused as an error, never run).
        if let Some(why) = rounds.as_ref().and_then(Rounds::refused) {
            let refused = ToolResult::error(ToolErrorKind::InvalidArguments, why.to_owned());
            self.audit(&line("state_refused", None, None, &refused));
            return Err(ErrorData::invalid_params(why.to_owned(), None));
        }
        let controls = (questions::is_ask_question(&request.name) && self.options.questions)
            || self.serves_skill_activation(&request.name);
        if controls && self.executor.registry().resolve(&request.name).is_none() {
            let call = ControlCall {
                name: &request.name,
                arguments: &arguments,
                call_id: &call_id,
                principal: principal.as_ref(),
                address,
                started,
            };
            return self.call_control(&call, rounds.as_ref(), &context).await;
        }
        let rule = match self.granted(principal.as_ref(), &request.name) {
            Ok(rule) => rule,
            Err((decision, refused)) => {
                self.audit(&line(decision, None, None, &refused));
                return complete(&refused);
            }
        };
        let ran = self
            .run_call(
                call_id,
                &request.name,
                arguments.clone(),
                principal.as_ref(),
                rounds.as_ref(),
                &context,
            )
            .await?;
        let decision = if rule.is_some() { "allowed" } else { "open" };
        let (said, result, asked) = match ran {
            Round::Done((result, said)) => (said, result, None),
            Round::Ask(input) => (
                PolicySaid::AskPending,
                ToolResult::text("asked the person through the client"),
                Some(input),
            ),
            Round::Relay(input) => (
                PolicySaid::Relayed,
                ToolResult::text("handed the caller what a server behind this one asked"),
                Some(input),
            ),
        };
        self.audit(&line(decision, rule, Some(said), &result));
        match asked {
            Some(input) => Ok(CallToolResponse::InputRequired(input)),
            None => complete(&result),
        }
    }

    /// A call of run control (`ask_question`, `activate_skill`): the
    /// executor (hooks, middleware, policy) never sees it, but the rules
    /// say who may use it, as for any tool, and the audit hears of it.
    async fn call_control(
        &self,
        call: &ControlCall<'_>,
        rounds: Option<&Rounds>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let line = |rule_decision, rule, result| CallLine {
            principal: call.principal,
            address: call.address,
            tool: call.name,
            arguments: call.arguments,
            rule_decision,
            rule,
            said: None,
            result,
            started: call.started,
        };
        let rule = match self.control_granted(call.principal, call.name) {
            Ok(rule) => rule,
            Err((decision, refused)) => {
                self.audit(&line(decision, None, &refused));
                return complete(&refused);
            }
        };
        let answered = self
            .answer_control(
                call.name,
                call.arguments,
                call.call_id,
                call.principal,
                rounds,
                context,
            )
            .await;
        let result = match answered {
            Round::Ask(input) | Round::Relay(input) => {
                return Ok(CallToolResponse::InputRequired(input));
            }
            Round::Done(result) => result,
        };
        let decision = if rule.is_some() { "allowed" } else { "open" };
        self.audit(&line(decision, rule, &result));
        complete(&result)
    }

    /// The rule that grants `principal` the tool `name` (`None` when the
    /// server has no gate), or the result the caller reads: a hidden tool
    /// reads as one that does not exist, with no names suggested.
    fn granted(
        &self,
        principal: Option<&Principal>,
        name: &str,
    ) -> Result<Option<usize>, (&'static str, ToolResult)> {
        let Some(gate) = &self.shared.gate else {
            return Ok(None);
        };
        let registry = self.executor.registry();
        let grant = match (principal, registry.resolve(name)) {
            (Some(principal), Some(tool)) => gate.grant(principal, tool.definition_dyn()),
            _ => Grant::Hidden,
        };
        verdict(grant, name)
    }

    /// Runs the call through the executor, asking the person behind the
    /// client when the policy says ask (within the principal's places for
    /// waiting calls).
    async fn run_call(
        &self,
        call_id: String,
        name: &str,
        arguments: Value,
        principal: Option<&Principal>,
        rounds: Option<&Rounds>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Round<(ToolResult, PolicySaid)>, ErrorData> {
        // Each session opens only the artifacts its own results named.
        let ledger = self.executor.ledger();
        iris_runtime::artifacts::scope::scope_run(ledger, &self.run_id);
        // A caller with no session is handed what a server behind this one
        // asks in its call's result; the sealed state binds the arguments
        // as sent.
        let handover = rounds.map(|rounds| {
            let audit = self.relay_audit(name, principal, context);
            (rounds.handover().auditing(audit), arguments.clone())
        });
        let call = ToolUseBlock::new(call_id.clone(), name.to_owned(), arguments);
        let relay = Relay::new(
            context.peer.clone(),
            context.meta.get_progress_token(),
            name,
            self.takes_info_logs(),
        );
        let cx = self.caller_context(
            name,
            principal,
            context,
            relay.as_ref(),
            handover.as_ref().map(|(handover, _)| handover),
        );
        let run = async {
            let approval = match self.executor.execute_one(call, &cx).await {
                ToolOutcome::Finished { result, .. } => {
                    let said = if result.error_kind() == Some(ToolErrorKind::PermissionDenied) {
                        PolicySaid::Deny
                    } else {
                        PolicySaid::Allow
                    };
                    return Ok(Round::Done((result, said)));
                }
                ToolOutcome::Waiting(approval) => approval,
            };
            if let Some(rounds) = rounds {
                // Stateless: nothing waits here between the rounds.
                return self
                    .approve_in_rounds(&call_id, &approval, principal, rounds, &cx)
                    .await;
            }
            let mut place = None;
            if let (Some(gate), Some(principal)) = (&self.shared.gate, principal) {
                place = gate.start_waiting(principal);
                if place.is_none() {
                    let why = format!(
                        "approval required: {} of this caller's calls already wait for a person, so this one did not run; answer those first",
                        gate.auth.limits.pending_approvals
                    );
                    let denied = ApprovalDecision::deny(why.clone());
                    let _ = self.executor.resume(&call_id, denied, &cx).await;
                    let result = ToolResult::error(ToolErrorKind::PermissionDenied, why);
                    return Ok(Round::Done((result, PolicySaid::AskDeclined)));
                }
            }
            let (decision, unasked) = match self.ask(&approval, context).await {
                Ok(decision) => (decision, None),
                Err(why) => (ApprovalDecision::deny(why.clone()), Some(why)),
            };
            drop(place);
            let said = if matches!(decision, ApprovalDecision::Approve { .. }) {
                PolicySaid::AskApproved
            } else {
                PolicySaid::AskDeclined
            };
            // Resumed either way, so nothing is left waiting.
            let resumed = self.executor.resume(&call_id, decision, &cx).await;
            if let Some(why) = unasked {
                let result = ToolResult::error(ToolErrorKind::PermissionDenied, why);
                return Ok(Round::Done((result, said)));
            }
            match resumed {
                Ok(ToolOutcome::Finished { result, .. }) => Ok(Round::Done((result, said))),
                Ok(ToolOutcome::Waiting(_)) => Err(ErrorData::internal_error(
                    "the call still waits for approval after it was answered",
                    None,
                )),
                Err(error) => Err(ErrorData::internal_error(error.to_string(), None)),
            }
        };
        // The client's `notifications/cancelled` drops the call; a call it
        // left waiting for a person is refused, so nothing waits on.
        let ran = tokio::select! {
            result = run => result?,
            () = context.ct.cancelled() => {
                let refused = ApprovalDecision::deny("the client cancelled the call");
                let _ = self.executor.resume(&call_id, refused, &cx).await;
                return Err(ErrorData::internal_error("the client cancelled the call", None));
            }
        };
        if let Some(relay) = &relay {
            relay.flush().await;
        }
        if let Some((handover, arguments)) = &handover
            && let Some(relayed) = handover.take()
        {
            return Ok(self.relay_upstream(relayed, principal, name, arguments));
        }
        if let Round::Done((result, _)) = &ran {
            iris_runtime::artifacts::scope::record_shown(ledger, &self.run_id, result);
        }
        Ok(ran)
    }

    /// The round that hands an upstream server's requests to a caller with
    /// no session: under the server's own keys, with a state sealed here
    /// that carries what the next round sends the server.
    fn relay_upstream(
        &self,
        relayed: crate::upstream_input::Relayed,
        principal: Option<&Principal>,
        name: &str,
        arguments: &Value,
    ) -> Round<(ToolResult, PolicySaid)> {
        let key = principal.map(|p| p.key().as_str());
        let sealed = match &self.shared.rounds {
            Some(sealer) => sealer.seal_upstream(relayed.pending, key, name, arguments),
            None => Err("this server could not make a key to seal its questions, so a stateless client cannot be asked; connect with a session (protocol 2025-11-25) instead".to_owned()),
        };
        match sealed {
            Ok(state) => Round::Relay(rmcp::model::InputRequiredResult::new(
                Some(relayed.requests),
                Some(state),
            )),
            Err(why) => Round::Done((
                ToolResult::error(ToolErrorKind::Internal, why),
                PolicySaid::Allow,
            )),
        }
    }

    /// Writes the audit line of a call, when the server has a gate.
    fn audit(&self, line: &CallLine<'_>) {
        let Some(gate) = &self.shared.gate else {
            return;
        };
        gate.log(&AuditEntry {
            method: Some("tools/call"),
            tool: Some(line.tool),
            rule_decision: line.rule_decision,
            rule: line.rule,
            policy_decision: line.said.map(PolicySaid::as_str),
            outcome: line.result.error_kind().map_or("ok", ToolErrorKind::as_str),
            duration_ms: millis(line.started.elapsed()),
            arguments: gate
                .audit
                .as_ref()
                .filter(|a| a.with_arguments())
                .map(|_| line.arguments),
            ..AuditEntry::by(line.principal, line.address)
        });
    }
}

/// What the rules' `grant` of the tool `name` means for a call: the rule
/// that grants it, or the result the caller reads (a hidden tool reads as
/// one that does not exist, with no names suggested).
pub(super) fn verdict(
    grant: Grant,
    name: &str,
) -> Result<Option<usize>, (&'static str, ToolResult)> {
    match grant {
        Grant::Allowed { rule } => Ok(Some(rule)),
        Grant::NeedsScopes(scopes) => Err((
            "needs_scopes",
            ToolResult::error(
                ToolErrorKind::PermissionDenied,
                format!(
                    "`{}` needs the scopes `{}`, which this caller's token does not hold; the call did not run",
                    iris_runtime::__wings::shorten(name),
                    scopes.join(" ")
                ),
            ),
        )),
        Grant::Hidden => Err((
            "hidden",
            ToolResult::error(
                ToolErrorKind::UnknownTool,
                format!(
                    "no tool is named `{}`; call only the tools listed",
                    iris_runtime::__wings::shorten(name)
                ),
            ),
        )),
    }
}

/// A call of run control, as the gateway judges and audits it.
struct ControlCall<'a> {
    name: &'a str,
    arguments: &'a Value,
    call_id: &'a str,
    principal: Option<&'a Principal>,
    address: Option<std::net::IpAddr>,
    started: Instant,
}

impl McpConnection {
    /// The context of a call of `tool` by `principal`: its reports go to
    /// `relay`; what a server behind this one asks during it goes to the
    /// caller, handed over when it has no session (`handover`), asked in
    /// its session otherwise.
    fn caller_context(
        &self,
        tool: &str,
        principal: Option<&Principal>,
        context: &RequestContext<RoleServer>,
        relay: Option<&Arc<Relay>>,
        handover: Option<&crate::upstream_input::Handover>,
    ) -> iris_core::ToolContext {
        let cx = match relay {
            Some(relay) => self.context_reporting_to(principal, relay),
            None => self.call_context(principal),
        };
        if let Some(handover) = handover {
            return cx.with_extension(handover.clone());
        }
        // Even one that can ask the caller nothing: it counts and audits,
        // as the caller's, what the agent's model answers on its behalf.
        cx.with_extension(self.asker(tool, principal, context))
    }

    /// Audits what a server behind this one asks during the call of `tool`
    /// by `principal`, as that principal's.
    fn relay_audit(
        &self,
        tool: &str,
        principal: Option<&Principal>,
        context: &RequestContext<RoleServer>,
    ) -> Arc<crate::elicitation::Audit> {
        let gate = self.shared.gate.clone();
        let principal = principal.cloned();
        let address = address_of(context);
        let tool = tool.to_owned();
        Arc::new(move |method: &str, outcome: &str, started: Instant| {
            if let Some(gate) = &gate {
                gate.log(&AuditEntry {
                    method: Some(method),
                    tool: Some(&tool),
                    rule_decision: "relayed",
                    outcome,
                    duration_ms: millis(started.elapsed()),
                    ..AuditEntry::by(principal.as_ref(), address)
                });
            }
        })
    }

    /// Puts an upstream server's requests during the call of `tool` to
    /// the caller behind `context`'s client: forms to its person
    /// (elicitation), within the approval timeout (cancelled when nobody
    /// answers in time), and samplings to its model, each when the client
    /// takes them; each audited as the principal's.
    #[allow(
        deprecated,
        reason = "sampling is part of the 2025 revisions this gateway relays (deprecated by SEP-2577 from 2026-07-28 on)"
    )]
    fn asker(
        &self,
        tool: &str,
        principal: Option<&Principal>,
        context: &RequestContext<RoleServer>,
    ) -> crate::elicitation::Asker {
        use rmcp::model::{ElicitResult, ElicitationAction};
        let peer = context.peer.clone();
        let timeout = self.options.approval_timeout;
        let audit = self.relay_audit(tool, principal, context);
        let takes = peer.peer_info().map(|info| info.capabilities.clone());
        let mut asker = crate::elicitation::Asker::default().auditing(Arc::clone(&audit));
        let opens_urls = takes
            .as_ref()
            .and_then(|c| c.elicitation.as_ref())
            .is_some_and(|e| e.url.is_some());
        asker = asker.opening_urls(opens_urls);
        if takes.as_ref().is_some_and(|c| c.elicitation.is_some()) {
            let (peer, audit) = (peer.clone(), Arc::clone(&audit));
            asker = asker.eliciting(move |request| {
                let (peer, audit) = (peer.clone(), Arc::clone(&audit));
                Box::pin(async move {
                    let started = Instant::now();
                    let form = peer.create_elicitation(request).into_future();
                    let answer = match tokio::time::timeout(timeout, form).await {
                        Ok(Ok(answer)) => answer,
                        Ok(Err(error)) => {
                            tracing::debug!(%error, "an upstream server's request for input could not be put to the person");
                            ElicitResult::new(ElicitationAction::Cancel)
                        }
                        Err(_) => ElicitResult::new(ElicitationAction::Cancel),
                    };
                    let outcome = match answer.action {
                        ElicitationAction::Accept => "accept",
                        ElicitationAction::Decline => "decline",
                        _ => "cancel",
                    };
                    audit("elicitation/create", outcome, started);
                    answer
                })
            });
        }
        if takes.as_ref().is_some_and(|c| c.sampling.is_some()) {
            asker = asker.sampling(move |request| {
                let (peer, audit) = (peer.clone(), Arc::clone(&audit));
                Box::pin(async move {
                    let started = Instant::now();
                    let sampled = peer.create_message(request);
                    let answer = match tokio::time::timeout(timeout, sampled).await {
                        Ok(Ok(answer)) => Ok(answer),
                        Ok(Err(error)) => Err(ErrorData::internal_error(
                            format!("the caller's model could not be asked: {error}"),
                            None,
                        )),
                        Err(_) => Err(ErrorData::internal_error(
                            "the caller's model did not answer in time",
                            None,
                        )),
                    };
                    audit(
                        "sampling/createMessage",
                        if answer.is_ok() { "ok" } else { "error" },
                        started,
                    );
                    answer
                })
            });
        }
        asker
    }
}

/// The answer to a call that ended with `result`. A call of a tool that
/// does not exist (or that the rules hide, which reads the same) is a
/// protocol error, as MCP says (-32602, "unknown tool"): a client never
/// takes it for the tool's own answer.
fn complete(result: &ToolResult) -> Result<CallToolResponse, ErrorData> {
    if result.error_kind() == Some(ToolErrorKind::UnknownTool) {
        return Err(ErrorData::invalid_params(result.text_content(), None));
    }
    Ok(CallToolResponse::Complete(to_mcp(result)))
}

/// What the audit line of one call says.
struct CallLine<'a> {
    principal: Option<&'a Principal>,
    address: Option<std::net::IpAddr>,
    tool: &'a str,
    arguments: &'a Value,
    rule_decision: &'a str,
    rule: Option<usize>,
    said: Option<PolicySaid>,
    result: &'a ToolResult,
    started: Instant,
}
