//! Harnesses for fuzzing MCP messages both ways (see `iris_core::fuzzing`):
//! what a client sends the server, and what a server answers the client.
//! Not a public API.
#![allow(
    clippy::panic,
    reason = "a harness reports a broken property by panicking, as the fuzzer expects"
)]

use std::sync::Arc;
use std::time::Duration;

use iris_core::{Capability, DynamicTool, ToolDefinition, ToolName, ToolResult};
use iris_runtime::{ToolExecutor, ToolRegistry};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

use crate::server::lines::LineTransport;
use crate::server::serve::serve_connection;
use crate::server::{McpConnection, ServeOptions};

/// The id of the ping that follows each fuzzed message.
const PING: &str = "iris-fuzz-ping";

/// Longest a fuzzed exchange may take; a server that answers nothing in
/// that time has hung, which is a finding.
const DEADLINE: Duration = Duration::from_secs(5);

/// Sends `data` (as one message line) to a fresh, initialized server,
/// then a ping. Properties: the server keeps answering (the ping gets its
/// answer); a request with a string or integer id gets exactly one
/// response, echoing that id; a notification gets none.
///
/// # Panics
/// When a property does not hold: a finding.
pub fn mcp_messages(data: &[u8]) {
    on_own_runtime(exchange(data));
}

/// Runs `exchange` to its end on a runtime of its own: each input starts
/// from nothing.
fn on_own_runtime(exchange: impl std::future::Future<Output = ()>) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(exchange);
}

async fn exchange(data: &[u8]) {
    let (client, server_side) = tokio::io::duplex(1 << 20);
    let Some(server) = server() else {
        return;
    };
    let (server_read, server_write) = tokio::io::split(server_side);
    let lines = LineTransport::new(server_read, server_write);
    let serving = tokio::spawn(serve_connection(server, lines));
    let (read, mut write) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();

    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "fuzz", "version": "0"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let fuzzed = match serde_json::from_slice::<Value>(data) {
        Ok(value) => value.to_string(),
        // Not JSON: sent as it is, on one line.
        Err(_) => String::from_utf8_lossy(data).replace(['\n', '\r'], " "),
    };
    let ping = json!({"jsonrpc": "2.0", "id": PING, "method": "ping"});
    let mut sent = String::new();
    for line in [
        initialize.to_string(),
        initialized.to_string(),
        fuzzed,
        ping.to_string(),
    ] {
        sent.push_str(&line);
        sent.push('\n');
    }
    let written = write.write_all(sent.as_bytes()).await;
    assert!(
        written.is_ok(),
        "the server stopped reading before the messages were sent: {}",
        show(data)
    );

    let expected = request_id(data);
    let mut answers_to_fuzzed = 0;
    let mut pinged = false;
    let read_all = async {
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                panic!("the server wrote a line that is not JSON: {line}");
            };
            let is_response = message.get("result").is_some() || message.get("error").is_some();
            if !is_response {
                continue;
            }
            let id = message.get("id").cloned().unwrap_or(Value::Null);
            if id == json!(0) {
                continue;
            }
            if id == json!(PING) {
                pinged = true;
            } else if let Some(expected) = &expected {
                assert_eq!(
                    &id,
                    expected,
                    "a response to another id: {line} for {}",
                    show(data)
                );
                answers_to_fuzzed += 1;
            } else if is_notification(data) {
                panic!("a notification got a response: {line} for {}", show(data));
            }
            let done = pinged && (expected.is_none() || answers_to_fuzzed >= 1);
            if done {
                break;
            }
        }
    };
    let answered = tokio::time::timeout(DEADLINE, read_all).await;
    assert!(
        answered.is_ok(),
        "the server did not answer within {DEADLINE:?} (ping answered: {pinged}, answers to the message: {answers_to_fuzzed}): {}",
        show(data)
    );
    assert!(pinged, "the server stopped answering after {}", show(data));
    if expected.is_some() {
        assert_eq!(
            answers_to_fuzzed,
            1,
            "one response per request: {}",
            show(data)
        );
    }
    drop(write);
    serving.abort();
}

/// The id a response to `data` must echo: the id of a JSON-RPC request
/// whose id is a string or an integer (other ids are not ones MCP allows).
fn request_id(data: &[u8]) -> Option<Value> {
    let message: Value = serde_json::from_slice(data).ok()?;
    let object = message.as_object()?;
    if object.get("jsonrpc") != Some(&json!("2.0")) || !object.get("method")?.is_string() {
        return None;
    }
    let id = object.get("id")?;
    let allowed = id.is_string() || id.is_i64() || id.is_u64();
    (allowed && id != &json!(PING) && id != &json!(0)).then(|| id.clone())
}

/// Whether `data` is a well-formed JSON-RPC notification (no id).
fn is_notification(data: &[u8]) -> bool {
    let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(data) else {
        return false;
    };
    object.get("jsonrpc") == Some(&json!("2.0"))
        && object.get("method").is_some_and(Value::is_string)
        && !object.contains_key("id")
}

fn show(data: &[u8]) -> String {
    let text = String::from_utf8_lossy(data);
    iris_core::text::prefix(&text, 300).to_owned()
}

/// A server with one read-only tool.
fn server() -> Option<McpConnection> {
    let definition = ToolDefinition::builder(ToolName::new("probe").ok()?, "Answer at once.")
        .capability(Capability::ReadOnly)
        .build()
        .ok()?;
    let tool = DynamicTool::new(definition, |_, _| async { ToolResult::text("probed") });
    let mut registry = ToolRegistry::new();
    registry.register(tool).ok()?;
    let executor = ToolExecutor::builder(registry).build().ok()?;
    let options = ServeOptions {
        workspace: std::env::temp_dir(),
        ..ServeOptions::default()
    };
    Some(McpConnection::new(Arc::new(executor), options))
}

/// A server's answers to the client, from `data`: up to the first line
/// break, the result of `tools/list`; after it, the result of
/// `tools/call` (each sent as the JSON-RPC result when it is JSON, or as a
/// raw line otherwise). Properties: connecting ends within the deadline,
/// in a client or a clear error; every tool of a one-page listing is made
/// an Iris tool or reported as skipped; a call of the first tool ends
/// within the deadline in a result.
///
/// # Panics
/// When a property does not hold: a finding.
pub fn mcp_client(data: &[u8]) {
    on_own_runtime(answer_client(data));
}

async fn answer_client(data: &[u8]) {
    let split = data.iter().position(|b| *b == b'\n').unwrap_or(data.len());
    let listing = &data[..split];
    let call = data.get(split + 1..).unwrap_or_default();
    let (client_side, server_side) = tokio::io::duplex(1 << 20);
    let serving = tokio::spawn(fake_server(server_side, listing.to_vec(), call.to_vec()));
    let (read, write) = tokio::io::split(client_side);
    let config = crate::client::McpServerConfig::stdio("fuzzed", "/nonexistent-iris-fuzz", [""; 0])
        .with_exposure(crate::client::McpExposure::Eager)
        .with_startup_timeout(Duration::from_millis(300))
        .with_timeout(Duration::from_millis(300));
    let connected = tokio::time::timeout(
        DEADLINE,
        crate::client::McpClient::connect_over(config, read, write),
    )
    .await;
    let Ok(connected) = connected else {
        panic!("connecting did not end within {DEADLINE:?}: {}", show(data));
    };
    let client = match connected {
        Ok(client) => client,
        Err(error) => {
            assert!(
                !error.to_string().trim().is_empty(),
                "an error that says nothing: {}",
                show(data)
            );
            serving.abort();
            return;
        }
    };
    let report = client.report();
    if let Some(listed) = one_page(listing) {
        let filtered = report
            .skipped
            .iter()
            .filter(|skipped| skipped.reason.contains("include"))
            .count();
        assert_eq!(
            client.tools().len() + report.skipped.len() - filtered,
            listed,
            "a listed tool was neither made a tool nor reported ({report:?}): {}",
            show(data)
        );
    }
    if let Some(tool) = client.tools().first() {
        let name = tool.definition_dyn().name().clone();
        let mut registry = ToolRegistry::new();
        if client.register_into(&mut registry).is_ok()
            && let Ok(executor) = ToolExecutor::builder(registry)
                .policy(iris_runtime::RulePolicy::new().write(iris_runtime::Rule::Allow))
                .build()
        {
            let cx = iris_core::ToolContext::builder(
                std::env::temp_dir(),
                iris_core::RunId::new("fuzz"),
            )
            .build();
            let call = iris_core::ToolUseBlock::new("c1", name.as_str(), json!({}));
            let outcome = tokio::time::timeout(DEADLINE, executor.execute_one(call, &cx)).await;
            assert!(
                outcome.is_ok(),
                "a call did not end within {DEADLINE:?}: {}",
                show(data)
            );
        }
    }
    client.close();
    serving.abort();
}

/// How many entries the `tools` list of `listing` holds, when it is one
/// page (no cursor to follow).
fn one_page(listing: &[u8]) -> Option<usize> {
    let value: Value = serde_json::from_slice(listing).ok()?;
    if value.get("nextCursor").is_some_and(|c| !c.is_null()) {
        return None;
    }
    value.get("tools")?.as_array().map(Vec::len)
}

/// Answers `initialize` properly, then `tools/list` with `listing` and
/// `tools/call` with `call`, until the client goes.
async fn fake_server(side: tokio::io::DuplexStream, listing: Vec<u8>, call: Vec<u8>) {
    let (read, mut write) = tokio::io::split(side);
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = message.get("id").cloned() else {
            continue;
        };
        let (answer, last) = match message.get("method").and_then(Value::as_str) {
            Some("initialize") => (
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fuzzed", "version": "0"}}})
                .to_string(),
                false,
            ),
            Some("tools/list") => answer_line(&id, &listing),
            Some("tools/call") => answer_line(&id, &call),
            _ => (
                json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string(),
                false,
            ),
        };
        let written = write.write_all(format!("{answer}\n").as_bytes()).await;
        if written.is_err() || last {
            return;
        }
    }
}

/// The response to `id` carrying `data`: as its result when it is JSON;
/// otherwise `data` itself on one line, after which the server goes away
/// (a server that writes garbage and dies), rather than leaving the client
/// to wait out its timeout.
fn answer_line(id: &Value, data: &[u8]) -> (String, bool) {
    match serde_json::from_slice::<Value>(data) {
        Ok(result) => (
            json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
            false,
        ),
        Err(_) => (
            String::from_utf8_lossy(data).replace(['\n', '\r'], " "),
            true,
        ),
    }
}
