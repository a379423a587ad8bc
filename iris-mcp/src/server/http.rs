//! The MCP server on a bound address, over streamable HTTP: one Iris
//! session (a run of its own) per MCP session, and only local hosts
//! accepted unless told otherwise (DNS-rebinding protection).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::{IrisServer, ServeOptions};
use crate::McpError;
use iris_runtime::ToolExecutor;

/// The first wait after a failed accept, doubled on each failure in a row.
const MIN_ACCEPT_PAUSE: Duration = Duration::from_millis(5);
/// The longest wait after a failed accept.
const MAX_ACCEPT_PAUSE: Duration = Duration::from_secs(1);

/// An executor served over streamable HTTP on a bound address.
pub struct McpHttpServer {
    listener: TcpListener,
    address: SocketAddr,
    service: StreamableHttpService<IrisServer, LocalSessionManager>,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for McpHttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpServer")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl McpHttpServer {
    /// Binds `address` (port 0 picks a free port) for `executor`. Requests
    /// naming a host other than `localhost`, `127.0.0.1` or `::1` are
    /// refused; [`McpHttpServer::allow_hosts`] widens that.
    ///
    /// # Errors
    /// [`McpError::Serve`] when the address cannot be bound.
    pub async fn bind(
        executor: impl Into<Arc<ToolExecutor>>,
        address: SocketAddr,
        options: ServeOptions,
    ) -> Result<Self, McpError> {
        let listener = TcpListener::bind(address)
            .await
            .map_err(|e| McpError::Serve {
                message: format!("{address} could not be bound: {e}"),
            })?;
        let address = listener.local_addr().map_err(|e| McpError::Serve {
            message: format!("the bound address could not be read: {e}"),
        })?;
        let shutdown = CancellationToken::new();
        let max_sessions = options.max_sessions;
        let server = IrisServer::new(executor.into(), options);
        let config =
            StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
        let service = StreamableHttpService::new(
            move || {
                server.try_new_connection().ok_or_else(|| {
                    std::io::Error::other(format!(
                        "the server holds its maximum of {max_sessions} MCP sessions; end one (DELETE its session) or try again later"
                    ))
                })
            },
            Arc::new(LocalSessionManager::default()),
            config,
        );
        Ok(Self {
            listener,
            address,
            service,
            shutdown,
        })
    }

    /// Accepts requests naming these hosts too (a public name the server
    /// is reached by).
    #[must_use]
    pub fn allow_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.service
            .config
            .allowed_hosts
            .extend(hosts.into_iter().map(Into::into));
        self
    }

    /// The bound address.
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// The MCP endpoint's URL, for a client's configuration.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// A token that stops the server when cancelled.
    #[must_use]
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Serves until the shutdown token is cancelled.
    ///
    /// # Errors
    /// [`McpError::Serve`] when accepting connections fails for good.
    pub async fn run(self) -> Result<(), McpError> {
        let mut pause = MIN_ACCEPT_PAUSE;
        loop {
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                () = self.shutdown.cancelled() => return Ok(()),
            };
            let stream = match accepted {
                Ok((stream, _)) => {
                    pause = MIN_ACCEPT_PAUSE;
                    stream
                }
                Err(error) => {
                    // A full descriptor table passes once connections end;
                    // accepting again at once would spin a core meanwhile.
                    tracing::warn!(%error, ?pause, "an MCP connection could not be accepted");
                    tokio::select! {
                        () = tokio::time::sleep(pause) => {}
                        () = self.shutdown.cancelled() => return Ok(()),
                    }
                    pause = (pause * 2).min(MAX_ACCEPT_PAUSE);
                    continue;
                }
            };
            let service = TowerToHyperService::new(self.service.clone());
            let shutdown = self.shutdown.clone();
            tokio::spawn(async move {
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service);
                tokio::select! {
                    served = connection => {
                        if let Err(error) = served {
                            tracing::debug!(%error, "an MCP HTTP connection ended with an error");
                        }
                    }
                    () = shutdown.cancelled() => {}
                }
            });
        }
    }
}
