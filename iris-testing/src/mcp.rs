//! MCP without a process or a socket: a client and a server joined in
//! this process, and a mock server made from a list of tools.

use std::sync::Arc;

use iris_core::DynamicTool;
use iris_mcp::McpError;
use iris_mcp::client::{McpClient, McpServerConfig};
use iris_mcp::server::{McpConnection, ServeOptions, serve_connection};
use iris_runtime::{Rule, RulePolicy, ToolExecutor, ToolRegistry};

/// Bytes buffered each way between the joined client and server.
const PIPE_BYTES: usize = 256 * 1024;

/// Serves `executor`'s tools over MCP in this process and connects a
/// client to it, named `name` (the prefix of its tools' names, as for a
/// configured server). The server ends when the client goes away.
///
/// # Errors
/// [`McpError`] when the session does not start or the catalog cannot be
/// listed.
pub async fn join(
    executor: impl Into<Arc<ToolExecutor>>,
    name: &str,
) -> Result<McpClient, McpError> {
    let (client_end, server_end) = tokio::io::duplex(PIPE_BYTES);
    let server = McpConnection::new(executor.into(), ServeOptions::default());
    let (server_read, server_write) = tokio::io::split(server_end);
    // The server's end only ever fails on a broken pipe, which the client
    // reports from its side.
    tokio::spawn(async move {
        let _ = serve_connection(server, (server_read, server_write)).await;
    });
    let (client_read, client_write) = tokio::io::split(client_end);
    let config = McpServerConfig::stdio(name, "in-process", std::iter::empty::<String>());
    McpClient::connect_over(config, client_read, client_write).await
}

/// A mock MCP server offering `tools` (each answering as its handler says,
/// every call allowed), joined to a client in this process; see [`join`].
///
/// # Errors
/// [`McpError::Startup`] when two tools share a name; otherwise as
/// [`join`].
pub async fn mock_server(
    name: &str,
    tools: impl IntoIterator<Item = DynamicTool>,
) -> Result<McpClient, McpError> {
    let refused = |message: String, error: iris_runtime::RuntimeError| McpError::Startup {
        server: name.to_owned(),
        message,
        source: Some(Box::new(error)),
    };
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry
            .register(tool)
            .map_err(|e| refused(format!("a mock tool was refused: {e}"), e))?;
    }
    let executor = ToolExecutor::builder(registry)
        .policy(
            RulePolicy::new()
                .write(Rule::Allow)
                .exec(Rule::Allow)
                .other(Rule::Allow),
        )
        .build()
        .map_err(|e| refused(format!("the mock server's executor: {e}"), e))?;
    join(executor, name).await
}
