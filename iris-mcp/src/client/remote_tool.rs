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
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest, JsonObject,
    RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::Value;

use super::connection::Connection;
use crate::content::from_mcp;
use iris_runtime::ToolProgress;

/// A remote tool, bound to its server's connection.
pub(super) struct RemoteTool {
    pub(super) definition: ToolDefinition,
    pub(super) wire_name: String,
    validator: Option<Arc<jsonschema::Validator>>,
    connection: Arc<Connection>,
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
        // Who the server's requests for input go to while the call is out,
        // when the caller can be asked (the gateway's client, eliciting).
        let asker = cx.extension::<crate::elicitation::Asker>().cloned();
        ToolBody::Async(Box::pin(self.send(args, asker)))
    }
}

impl RemoteTool {
    /// Sends the call under the wire name and waits for its answer within
    /// the server's timeout. Dropping the future (a cancelled run, the
    /// timeout) sends `notifications/cancelled` for the request.
    async fn send(
        &self,
        arguments: JsonObject,
        asker: Option<crate::elicitation::Asker>,
    ) -> ToolResult {
        let connection = &self.connection;
        let server = connection.name();
        connection.counters.calls.fetch_add(1, Ordering::Relaxed);
        let (session, reconnected) = match connection.session().await {
            Ok(session) => session,
            Err(error) => return self.failed(ToolErrorKind::Execution, error.to_string()),
        };
        let timeout = connection.config.call_timeout();
        let params = CallToolRequestParams::new(self.wire_name.clone()).with_arguments(arguments);
        let peer = session.service.peer().clone();
        let answer = tokio::time::timeout(timeout, self.request(&peer, params, asker)).await;
        let mut result = match answer {
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
                     (a task or a request for input, which Iris does not take yet)",
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
                    .lost(&session)
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
        };
        if reconnected {
            result = result.with_stat("mcp_reconnected", true);
        }
        result
    }

    /// Sends `tools/call` and waits for the answer, passing the server's
    /// progress notifications on to the call's observers meanwhile. Dropped
    /// before the answer (the timeout, a cancelled run), it sends
    /// `notifications/cancelled` for the request.
    async fn request(
        &self,
        peer: &Peer<RoleClient>,
        params: CallToolRequestParams,
        asker: Option<crate::elicitation::Asker>,
    ) -> Result<ServerResult, ServiceError> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await?;
        // Out from the moment it is sent; given up on before its answer,
        // it still counts as out a while (the server may go on with it).
        let mut out = self.connection.routing.asking.route(asker);
        let mut abandoned = CancelOnDrop {
            peer: Some(peer.clone()),
            id: handle.id.clone(),
        };
        let _route = ToolProgress::current().map(|progress| {
            self.connection
                .routing
                .progress
                .route(handle.progress_token.clone(), progress)
        });
        let answer = handle.await_response().await;
        abandoned.peer = None;
        out.answered();
        answer
    }

    fn failed(&self, kind: ToolErrorKind, message: String) -> ToolResult {
        self.connection
            .counters
            .failures
            .fetch_add(1, Ordering::Relaxed);
        ToolResult::error(kind, message)
    }
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
