//! A tool of an MCP server as an Iris tool: its definition (model-facing
//! name, description and input schema as sent, capabilities from trusted
//! annotations only), its arguments checked against the server's input
//! schema before anything is sent, and its calls made under the wire name.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use iris_core::{
    ArgumentError, Capabilities, Capability, Exposure, Tool, ToolBody, ToolContext, ToolDefinition,
    ToolErrorKind, ToolName, ToolOrigin, ToolResult,
};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    InputRequest, InputRequiredResult, InputResponses, JsonObject, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::Value;

use super::connection::Connection;
use crate::content::from_mcp;
use crate::upstream_input::Handover;
use iris_runtime::ToolProgress;

/// A remote tool, bound to its server's connection.
pub(super) struct RemoteTool {
    pub(super) definition: ToolDefinition,
    pub(super) wire_name: String,
    validator: Option<Arc<jsonschema::Validator>>,
    pub(super) connection: Arc<Connection>,
}

impl RemoteTool {
    pub(super) fn new(
        definition: ToolDefinition,
        wire_name: String,
        validator: Option<jsonschema::Validator>,
        connection: Arc<Connection>,
    ) -> Self {
        Self {
            definition,
            wire_name,
            validator: validator.map(Arc::new),
            connection,
        }
    }
}

/// The capabilities of a remote tool: `write` + `network` unless the
/// server's annotations are trusted.
pub(super) fn capabilities(
    trusted: bool,
    annotations: Option<&rmcp::model::ToolAnnotations>,
) -> Capabilities {
    let untrusted = Capabilities::NONE
        .with(Capability::Write)
        .with(Capability::Network);
    let Some(hints) = annotations.filter(|_| trusted) else {
        return untrusted;
    };
    let mut caps = if hints.read_only_hint == Some(true) {
        let mut caps = Capabilities::NONE.with(Capability::ReadOnly);
        if hints.idempotent_hint == Some(true) {
            caps = caps.with(Capability::ConcurrencySafe);
        }
        caps
    } else {
        Capabilities::NONE.with(Capability::Write)
    };
    // The specification's default for `openWorldHint` is true.
    if hints.open_world_hint != Some(false) {
        caps = caps.with(Capability::Network);
    }
    caps
}

/// The definition of a remote tool.
pub(super) struct Described<'a> {
    pub(super) name: ToolName,
    pub(super) server: &'a str,
    pub(super) wire_name: &'a str,
    pub(super) description: String,
    pub(super) input_schema: Value,
    pub(super) capabilities: Capabilities,
    pub(super) exposure: Exposure,
}

impl Described<'_> {
    pub(super) fn build(self) -> Result<ToolDefinition, iris_core::DefinitionError> {
        ToolDefinition::builder(self.name, self.description)
            .input_schema(self.input_schema)
            .capabilities(self.capabilities)
            .exposure(self.exposure)
            .tag("mcp")
            .origin(ToolOrigin::Mcp {
                server: self.server.to_owned(),
                wire_name: self.wire_name.to_owned(),
            })
            .build()
    }
}

impl Tool for RemoteTool {
    type Args = JsonObject;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn rust_item(&self) -> &'static str {
        "iris::mcp (a tool of an MCP server)"
    }

    fn parse(&self, input: &Value) -> Result<JsonObject, ArgumentError> {
        let Value::Object(arguments) = input else {
            return Err(ArgumentError::new(
                "$",
                format!(
                    "expected a JSON object of arguments, found {}",
                    iris_core::schema::json_kind(input)
                ),
            ));
        };
        if let Some(validator) = &self.validator
            && let Some(error) = validator.iter_errors(input).next()
        {
            return Err(ArgumentError::new(
                json_path(error.instance_path().as_str()),
                error.to_string(),
            ));
        }
        Ok(arguments.clone())
    }

    fn call<'a>(&'a self, args: JsonObject, cx: &'a ToolContext) -> ToolBody<'a> {
        // Who the server's requests for input go to while the call is out:
        // a caller with a session is asked through its asker; one with no
        // session is handed the requests that come in the call's result.
        let mut caller = Caller {
            asker: cx.extension::<crate::elicitation::Asker>().cloned(),
            handover: cx.extension::<Handover>().cloned(),
            sampled: Arc::default(),
        };
        // With nobody behind the call (an agent's run), a server that may
        // sample with the agent's model still has its requests counted.
        if caller.asker.is_none()
            && caller.handover.is_none()
            && self.connection.config.sampler().is_some()
        {
            caller.asker = Some(crate::elicitation::Asker::default());
        }
        ToolBody::Async(Box::pin(self.send(args, caller)))
    }
}

/// Who is behind a call, for the server's requests for input.
pub(super) struct Caller {
    pub(super) asker: Option<crate::elicitation::Asker>,
    pub(super) handover: Option<Handover>,
    /// The call's requests of its caller and samplings of the agent's
    /// model, counted together over all its rounds (at most
    /// [`MAX_ASKS_PER_CALL`](crate::elicitation::MAX_ASKS_PER_CALL)).
    pub(super) sampled: Arc<std::sync::atomic::AtomicU32>,
}

/// What a round of input requests leads to.
pub(super) enum Next {
    /// Send the call again with these answers and this state.
    Again(InputResponses, Option<String>),
    /// The requests went to a caller with no session; the call ends here.
    HandedOver,
}

impl RemoteTool {
    /// Sends the call under the wire name and waits for its answer within
    /// the server's timeout, each round; a server that asks for input in
    /// its result (2026-07-28) is answered and called again, or its
    /// requests are handed to the caller. Dropping the future (a cancelled
    /// run, the timeout) sends `notifications/cancelled` for the request.
    async fn send(&self, arguments: JsonObject, caller: Caller) -> ToolResult {
        let connection = &self.connection;
        connection.counters.calls.fetch_add(1, Ordering::Relaxed);
        let (session, reconnected) = match connection.session().await {
            Ok(session) => session,
            Err(error) => return self.failed(ToolErrorKind::Execution, error.to_string()),
        };
        let timeout = connection.config.call_timeout();
        let mut params =
            CallToolRequestParams::new(self.wire_name.clone()).with_arguments(arguments);
        // Answers for the server go with the call, but for a parked call,
        // which has them delivered to the request it holds open.
        if let Some((responses, state)) = caller
            .handover
            .as_ref()
            .filter(|handover| handover.parked().is_none())
            .and_then(Handover::answers)
        {
            let mut responses = responses.clone();
            for key in caller.handover.iter().flat_map(Handover::roots) {
                responses.insert(key.clone(), self.roots_answer());
            }
            params.input_responses = Some(responses);
            params.request_state.clone_from(state);
        }
        let can = self.may_ask(&caller);
        let mut result = match &caller.handover {
            Some(handover) => {
                self.send_for_stateless(handover, &session, params, &can, timeout)
                    .await
            }
            None => {
                self.send_asking(&caller, &session, params, &can, timeout)
                    .await
            }
        };
        if reconnected {
            result = result.with_stat("mcp_reconnected", true);
        }
        result
    }

    /// The rounds of a call whose caller has a session (or none at all):
    /// the server's requests for input are put to the caller at once.
    async fn send_asking(
        &self,
        caller: &Caller,
        session: &Arc<super::connection::Session>,
        mut params: CallToolRequestParams,
        can: &rmcp::model::ClientCapabilities,
        timeout: std::time::Duration,
    ) -> ToolResult {
        let connection = &self.connection;
        let server = connection.name();
        let peer = session.service.peer().clone();
        // Out from the first round to the last answer; given up on before
        // it (a timeout, a cancelled run), it still counts as out a while,
        // as the server may go on with it.
        let mut out = connection.routing.asking.route(caller.asker.clone());
        let mut result = None;
        for _round in 0..crate::upstream_input::MAX_ROUNDS {
            let progress = ToolProgress::current();
            let request = send_request(
                connection,
                session,
                &peer,
                params.clone(),
                can,
                &out,
                progress,
            );
            let answer = tokio::time::timeout(timeout, request).await;
            let asked = match answer {
                Ok(Ok(ServerResult::InputRequiredResult(asked))) => asked,
                answer => {
                    if answer.is_ok() {
                        out.answered();
                    }
                    result = Some(self.finish(answer, session, timeout));
                    break;
                }
            };
            let next = self.answer_input(asked, caller).await;
            if !matches!(next, Ok(Next::Again(..))) {
                // The server answered; it has nothing of the call running.
                out.answered();
            }
            match next {
                Ok(Next::Again(responses, state)) => {
                    params.input_responses = Some(responses);
                    params.request_state = state;
                }
                Ok(Next::HandedOver) => {
                    result = Some(self.handed_over());
                    break;
                }
                Err(why) => {
                    result = Some(self.failed(
                        ToolErrorKind::Execution,
                        format!(
                            "MCP server `{server}` {why}; `{}` did not finish",
                            self.wire_name
                        ),
                    ));
                    break;
                }
            }
        }
        if result.is_none() {
            out.answered();
        }
        drop(out);
        result.unwrap_or_else(|| self.too_many_rounds())
    }

    /// What the call says when its server's requests went to the caller.
    pub(super) fn handed_over(&self) -> ToolResult {
        ToolResult::error(
            ToolErrorKind::Execution,
            format!(
                "MCP server `{}` asked the caller for input; `{}` goes on when the caller answers",
                self.connection.name(),
                self.wire_name
            ),
        )
    }

    pub(super) fn too_many_rounds(&self) -> ToolResult {
        self.failed(
            ToolErrorKind::Execution,
            format!(
                "MCP server `{}` asked for input {} rounds running without finishing `{}`; it was not called again",
                self.connection.name(),
                crate::upstream_input::MAX_ROUNDS,
                self.wire_name
            ),
        )
    }

    /// The result of a round that did not ask for input.
    pub(super) fn finish(
        &self,
        answer: Result<Result<ServerResult, ServiceError>, tokio::time::error::Elapsed>,
        session: &Arc<super::connection::Session>,
        timeout: std::time::Duration,
    ) -> ToolResult {
        let connection = &self.connection;
        let server = connection.name();
        match answer {
            Err(_) => self.failed(
                ToolErrorKind::Timeout,
                format!(
                    "MCP server `{server}` did not answer `{}` within {} s; the request was cancelled",
                    self.wire_name,
                    timeout.as_secs_f64()
                ),
            ),
            Ok(Ok(ServerResult::CallToolResult(answer))) => from_mcp(server, answer),
            Ok(Ok(_)) => self.failed(
                ToolErrorKind::Execution,
                format!(
                    "MCP server `{server}` answered `{}` with something other than a tool result \
                     (a task, which Iris does not take yet)",
                    self.wire_name
                ),
            ),
            Ok(Err(ServiceError::McpError(error))) => self.failed(
                ToolErrorKind::Execution,
                format!(
                    "MCP server `{server}` refused the call ({}): {}",
                    error.code.0, error.message
                ),
            ),
            Ok(Err(error @ (ServiceError::TransportClosed | ServiceError::TransportSend(_)))) => {
                let exit = connection
                    .lost(session)
                    .map(|exit| format!(" ({exit})"))
                    .unwrap_or_default();
                tracing::warn!(server = %server, %error, "an MCP server went away mid-call");
                self.failed(
                    ToolErrorKind::Execution,
                    format!(
                        "MCP server `{server}` went away during the call{exit}; the next call reconnects"
                    ),
                )
            }
            Ok(Err(error)) => self.failed(
                ToolErrorKind::Execution,
                format!("MCP server `{server}` failed the call: {error}"),
            ),
        }
    }

    /// The answer to `roots/list`: the served workspace, or no roots.
    fn roots_answer(&self) -> Value {
        let roots = self.connection.root_uris();
        serde_json::json!({
            "roots": roots.iter().map(|uri| serde_json::json!({"uri": uri})).collect::<Vec<_>>()
        })
    }

    /// What the server may ask during this call (revision 2026-07-28 reads
    /// it from each request): what the caller can answer, when the
    /// configuration lets the server ask (`relay_input`); roots when the
    /// served workspace answers them, or the caller can.
    fn may_ask(&self, caller: &Caller) -> rmcp::model::ClientCapabilities {
        let config = &self.connection.config;
        let callers = match (&caller.handover, &caller.asker) {
            (Some(handover), _) => handover.can().clone(),
            (None, Some(asker)) => asker.can(),
            (None, None) => rmcp::model::ClientCapabilities::default(),
        };
        let mut can = rmcp::model::ClientCapabilities::default();
        if config.relay_input {
            can.elicitation = callers.elicitation;
            can.sampling = callers.sampling;
        }
        if config.sampler().is_some() {
            can.sampling = Some(rmcp::model::SamplingCapability::default());
        }
        if !config.roots.is_empty()
            || (config.relay_input && caller.handover.is_some() && callers.roots.is_some())
        {
            can.roots = Some(rmcp::model::RootsCapabilities::default());
        }
        can
    }

    /// Answers the round's samplings with the agent's model, when the
    /// operator allows it and the caller cannot be asked for them (it
    /// cannot sample, or the server may not ask it): as answers given
    /// here, each audited, at most [`MAX_MODEL_SAMPLINGS`] a call.
    async fn sample_with_model(
        &self,
        split: &mut crate::upstream_input::Split,
        caller: &Caller,
    ) -> Result<(), String> {
        let config = &self.connection.config;
        let Some(sampler) = config.sampler() else {
            return Ok(());
        };
        let caller_samples = match (&caller.handover, &caller.asker) {
            (Some(handover), _) => handover.can().sampling.is_some(),
            (None, Some(asker)) => asker.can().sampling.is_some(),
            (None, None) => false,
        };
        if config.relay_input && caller_samples {
            return Ok(());
        }
        let keys: Vec<String> = split
            .for_caller
            .iter()
            .filter(|(_, request)| matches!(request, InputRequest::CreateMessage(_)))
            .map(|(key, _)| key.clone())
            .collect();
        let audit = caller.handover.as_ref().and_then(Handover::audit);
        let cap = crate::elicitation::MAX_ASKS_PER_CALL;
        for key in keys {
            let Some(InputRequest::CreateMessage(request)) = split.for_caller.remove(&key) else {
                continue;
            };
            // Counted and audited with the caller's other requests: by its
            // asker when it has one, else here.
            let answer = if let Some(asker) = &caller.asker {
                asker.sample_with(request.params, Some(sampler)).await
            } else {
                if caller.sampled.fetch_add(1, Ordering::Relaxed) >= cap {
                    return Err(format!(
                        "asked more than {cap} times in one call; the agent's model answers no more"
                    ));
                }
                let started = std::time::Instant::now();
                let answer = sampler.sample(&request.params).await;
                crate::elicitation::audit_sampled(audit.map(|a| &**a), started, answer.is_ok());
                answer
            };
            let answer = answer
                .and_then(|answer| to_json(&answer))
                .map_err(|error| {
                    format!(
                        "asked for a model, and the agent's model could not answer ({})",
                        error.message
                    )
                })?;
            split.local.insert(key, answer);
        }
        Ok(())
    }

    /// Answers a round of the server's requests for input: roots here, the
    /// rest by the caller (asked now in its session, or handed over), when
    /// the server may ask; or why the round cannot be answered (said after
    /// the server's name).
    pub(super) async fn answer_input(
        &self,
        asked: InputRequiredResult,
        caller: &Caller,
    ) -> Result<Next, String> {
        let config = &self.connection.config;
        let relays = config.relay_input && (caller.handover.is_some() || caller.asker.is_some());
        // Roots are the served workspace's; with none, a caller with no
        // session is asked for its own, and anyone else is told of none.
        let roots_here = !self.connection.config.roots.is_empty();
        let given_here =
            (roots_here || !relays || caller.handover.is_none()).then(|| self.roots_answer());
        let mut split = crate::upstream_input::split(asked, given_here.as_ref())?;
        self.sample_with_model(&mut split, caller).await?;
        let mut answers: InputResponses = split.local.clone().into_iter().collect();
        if split.for_caller.is_empty() {
            return Ok(Next::Again(answers, split.state));
        }
        let methods: Vec<&str> = split
            .for_caller
            .values()
            .map(crate::upstream_input::method)
            .collect();
        if !config.relay_input {
            return Err(format!(
                "asked for input ({}), which its configuration does not let it (`relay_input`)",
                methods.join(", ")
            ));
        }
        if let Some(handover) = &caller.handover {
            let can = handover.can();
            if let Some(method) = split
                .for_caller
                .values()
                .find(|request| !crate::upstream_input::can_answer(can, request))
                .map(crate::upstream_input::method)
            {
                return Err(format!(
                    "asked the caller for input it did not say it can give ({method})"
                ));
            }
            if let Some(audit) = handover.audit() {
                for method in &methods {
                    audit(method, "handed_over", std::time::Instant::now());
                }
            }
            handover.hand_over(crate::upstream_input::Relayed {
                pending: crate::upstream_input::Pending {
                    state: split.state,
                    keys: split.for_caller.keys().cloned().collect(),
                    local: split
                        .local
                        .into_iter()
                        .filter(|(key, _)| !split.roots.contains(key))
                        .collect(),
                    roots: split.roots,
                    parked: None,
                },
                requests: split.for_caller,
            });
            return Ok(Next::HandedOver);
        }
        let Some(person) = &caller.asker else {
            return Err(format!(
                "asked for input ({}), and nobody behind this call can be asked",
                methods.join(", ")
            ));
        };
        // One at a time, as the asker takes them.
        for (key, request) in split.for_caller {
            let answer = match request {
                InputRequest::Elicitation(form) => person
                    .ask(form.params)
                    .await
                    .and_then(|answer| to_json(&answer)),
                InputRequest::CreateMessage(sampling) => person
                    .sample_or(sampling.params, config.sampler())
                    .await
                    .and_then(|answer| to_json(&answer)),
                // Answered above; a caller with a session is not asked.
                InputRequest::ListRoots(_) => Ok(serde_json::json!({"roots": []})),
                _ => Err(ErrorData::invalid_request(
                    "a kind of request for input this gateway does not relay",
                    None,
                )),
            };
            let answer = answer.map_err(|error| {
                format!(
                    "asked for input that could not be given ({})",
                    error.message
                )
            })?;
            answers.insert(key, answer);
        }
        Ok(Next::Again(answers, split.state))
    }

    pub(super) fn failed(&self, kind: ToolErrorKind, message: String) -> ToolResult {
        self.connection
            .counters
            .failures
            .fetch_add(1, Ordering::Relaxed);
        ToolResult::error(kind, message)
    }
}

/// Sends `tools/call` to the server of `connection`, telling it what it
/// may ask (`can`), and waits for the answer, passing the server's progress
/// notifications on to `progress` meanwhile; the request's id goes to
/// `out`, so that requests on its stream reach this call's caller. Dropped
/// before the answer (the timeout, a cancelled run), it sends
/// `notifications/cancelled` for the request.
pub(super) async fn send_request(
    connection: &Connection,
    session: &super::connection::Session,
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    can: &rmcp::model::ClientCapabilities,
    out: &crate::elicitation::Route,
    progress: Option<ToolProgress>,
) -> Result<ServerResult, ServiceError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let mut options = PeerRequestOptions::no_options();
    let mut meta = rmcp::model::RequestMetaObject::new();
    meta.set_client_capabilities(can.clone());
    options.meta = Some(meta);
    let handle = peer.send_request_with_option(request, options).await?;
    out.sent(session.service.service().session, handle.id.clone());
    let mut abandoned = CancelOnDrop {
        peer: Some(peer.clone()),
        id: handle.id.clone(),
    };
    let _route = progress.map(|progress| {
        connection
            .routing
            .progress
            .route(handle.progress_token.clone(), progress)
    });
    let answer = handle.await_response().await;
    abandoned.peer = None;
    answer
}

/// `value` as JSON, for an answer sent back to the server.
fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, ErrorData> {
    serde_json::to_value(value).map_err(|error| ErrorData::internal_error(error.to_string(), None))
}

/// Sends `notifications/cancelled` for a request dropped before its answer.
struct CancelOnDrop {
    /// `None` once the answer came.
    peer: Option<Peer<RoleClient>>,
    id: RequestId,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let cancelled = CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("the caller stopped waiting (timeout or cancelled run)".to_owned()),
        );
        runtime.spawn(async move {
            // The session may be gone already; then there is no one to tell.
            let _ = peer.notify_cancelled(cancelled).await;
        });
    }
}

/// A JSON pointer (`/items/2/name`) as the JSON path Iris reports
/// (`$.items[2].name`).
fn json_path(pointer: &str) -> String {
    let mut path = String::from("$");
    for part in pointer.split('/').skip(1) {
        let part = part.replace("~1", "/").replace("~0", "~");
        if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            path.push('[');
            path.push_str(&part);
            path.push(']');
        } else {
            path.push('.');
            path.push_str(&part);
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_read_as_json_paths() {
        assert_eq!(json_path(""), "$");
        assert_eq!(json_path("/items/2/name"), "$.items[2].name");
        assert_eq!(json_path("/a~1b"), "$.a/b");
    }

    #[test]
    fn annotations_count_only_when_trusted() {
        let hints =
            rmcp::model::ToolAnnotations::from_raw(None, Some(true), None, Some(true), Some(false));
        let untrusted = capabilities(false, Some(&hints));
        assert!(untrusted.contains(Capability::Write) && untrusted.contains(Capability::Network));
        let trusted = capabilities(true, Some(&hints));
        assert!(trusted.is_read_only() && trusted.is_concurrency_safe());
        assert!(!trusted.contains(Capability::Network));
    }
}
