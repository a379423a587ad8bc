//! The MCP server on a bound address, over streamable HTTP: one Iris
//! session (a run of its own) per MCP session, and only local hosts and
//! pages accepted unless told otherwise (DNS-rebinding protection). A
//! client gets a bounded share: connections are capped, and one that sends
//! its request too slowly is cut off.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::{IrisServer, ServeOptions};
use crate::McpError;
use iris_runtime::ToolExecutor;

/// The first wait after a failed accept, doubled on each failure in a row.
const MIN_ACCEPT_PAUSE: Duration = Duration::from_millis(5);
/// The longest wait after a failed accept.
const MAX_ACCEPT_PAUSE: Duration = Duration::from_secs(1);

/// Largest request body read (the MCP service's own limit).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

type Service = StreamableHttpService<IrisServer, LocalSessionManager>;

tokio::task_local! {
    /// Whether the request being handled is an `initialize`, the only one
    /// that opens a session.
    static OPENS_SESSION: bool;
}

/// An executor served over streamable HTTP on a bound address.
pub struct McpHttpServer {
    listener: TcpListener,
    address: SocketAddr,
    service: Service,
    connections: Arc<Semaphore>,
    request_timeout: Duration,
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
        let connections = Arc::new(Semaphore::new(options.max_connections));
        let request_timeout = options.request_timeout;
        let config = StreamableHttpServerConfig::default()
            .with_cancellation_token(shutdown.child_token())
            .with_allowed_origins(options.allowed_origins.clone())
            .enforce_origin_validation();
        let server = IrisServer::new(executor.into(), options);
        let service = StreamableHttpService::new(
            move || {
                // Only an `initialize` opens a session; the MCP service asks
                // for a server for other requests too (stateless ones, and
                // to look up a tool's schema), which hold no place.
                if !OPENS_SESSION.try_with(|opens| *opens).unwrap_or(true) {
                    return Ok(server.for_one_request());
                }
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
            connections,
            request_timeout,
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
            let Ok(place) = Arc::clone(&self.connections).try_acquire_owned() else {
                // Closed at once: a client holding every place waits for
                // one like anyone else.
                tracing::warn!("an MCP connection was refused: the server holds its maximum");
                drop(stream);
                continue;
            };
            let service = self.service.clone();
            let shutdown = self.shutdown.clone();
            let deadline = self.request_timeout;
            tokio::spawn(async move {
                let _place = place;
                let handler = hyper::service::service_fn(move |request| {
                    let service = service.clone();
                    async move { Ok::<_, Infallible>(answer(&service, request, deadline).await) }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(deadline)
                    .serve_connection(TokioIo::new(stream), handler);
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

/// Reads a request's body within `deadline` and [`MAX_BODY_BYTES`], then
/// hands the request to the MCP service.
async fn answer(
    service: &Service,
    request: Request<Incoming>,
    deadline: Duration,
) -> Response<BoxBody<Bytes, Infallible>> {
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(deadline, Limited::new(body, MAX_BODY_BYTES).collect());
    let body = match read.await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(error)) => {
            let status = if error.is::<http_body_util::LengthLimitError>() {
                StatusCode::PAYLOAD_TOO_LARGE
            } else {
                StatusCode::BAD_REQUEST
            };
            return plain(
                status,
                &format!("the request body could not be read: {error}"),
            );
        }
        Err(_) => {
            return plain(
                StatusCode::REQUEST_TIMEOUT,
                &format!("the request body did not arrive within {deadline:?}"),
            );
        }
    };
    let opens_session = !parts.headers.contains_key(SESSION_HEADER) && is_initialize(&body);
    OPENS_SESSION
        .scope(
            opens_session,
            service.handle(Request::from_parts(parts, Full::new(body))),
        )
        .await
}

/// The header that names a request's session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Whether `body` is a JSON-RPC `initialize` request (read without
/// building its value; anything else, readable or not, is not).
fn is_initialize(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_slice::<Method<'_>>(body)
        .is_ok_and(|message| message.method.as_deref() == Some("initialize"))
}

fn plain(status: StatusCode, text: &str) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_owned())).boxed());
    *response.status_mut() = status;
    response
}
