//! Serving an executor over a transport.

use std::sync::Arc;

use rmcp::ServiceExt as _;

use super::http::McpHttpServer;
use super::{McpConnection, ServeOptions};
use crate::McpError;
use iris_runtime::ToolExecutor;

/// Where an executor is served.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServeTransport {
    /// This process's standard input and output (how MCP hosts start a
    /// server). Nothing else may write to standard output meanwhile.
    Stdio,
    /// Streamable HTTP on this address, at `/mcp`, for local hosts only
    /// (see [`McpHttpServer`] to allow others or to stop it).
    Http(std::net::SocketAddr),
}

/// Serves the tools of `executor` over `transport` with the default
/// options, until the client goes away (stdio) or the process ends (HTTP).
///
/// # Errors
/// [`McpError::Serve`] when the session cannot start (the client does not
/// initialize) or the transport fails.
pub async fn serve(
    executor: impl Into<Arc<ToolExecutor>>,
    transport: ServeTransport,
) -> Result<(), McpError> {
    serve_with(executor, transport, ServeOptions::default()).await
}

/// Serves the tools of `executor` over `transport` as `options` say, until
/// the client goes away.
///
/// # Errors
/// [`McpError::Serve`] when the session cannot start (the client does not
/// initialize) or the transport fails.
pub async fn serve_with(
    executor: impl Into<Arc<ToolExecutor>>,
    transport: ServeTransport,
    options: ServeOptions,
) -> Result<(), McpError> {
    let server = McpConnection::new(executor.into(), options);
    match transport {
        ServeTransport::Stdio => {
            let lines = super::lines::LineTransport::new(tokio::io::stdin(), tokio::io::stdout());
            serve_connection(server, lines).await
        }
        ServeTransport::Http(address) => {
            let executor = server.executor();
            let http = McpHttpServer::bind(executor, address, server.options().clone()).await?;
            tracing::info!(url = %http.url(), "serving MCP over streamable HTTP");
            http.run().await
        }
    }
}

/// Serves one connection over any transport rmcp takes (a pair of
/// streams, a duplex pipe) until it ends.
///
/// # Errors
/// [`McpError::Serve`] when the session cannot start or the transport
/// fails.
pub async fn serve_connection<T, E, A>(server: McpConnection, transport: T) -> Result<(), McpError>
where
    T: rmcp::transport::IntoTransport<rmcp::RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let connection = server.clone();
    let running = server.serve(transport).await.map_err(|e| McpError::Serve {
        message: format!("the session did not start: {e}"),
        source: Some(Box::new(e)),
    })?;
    let ended = running.waiting().await;
    connection.finish().await;
    ended.map_err(|e| McpError::Serve {
        message: format!("the session ended abnormally: {e}"),
        source: Some(Box::new(e)),
    })?;
    Ok(())
}
