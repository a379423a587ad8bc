//! The MCP server on a bound address, over streamable HTTP: one Iris
//! session (a run of its own) per MCP session, and only local hosts and
//! pages accepted unless told otherwise (DNS-rebinding protection). A
//! client gets a bounded share: connections are capped (anonymous ones per
//! address, and a connection still waiting for its first whole request
//! gives way to a newcomer when the server is full), and one that sends
//! its request too slowly is cut off.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
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
use tokio_util::sync::CancellationToken;

use super::auth::{Gate, PeerAddress, Refusal, SESSION_HEADER};
use super::places::{NoPlace, Place, Places};
use super::{McpConnection, ServeOptions};
use crate::McpError;
use iris_runtime::ToolExecutor;

/// The first wait after a failed accept, doubled on each failure in a row.
const MIN_ACCEPT_PAUSE: Duration = Duration::from_millis(5);
/// The longest wait after a failed accept.
const MAX_ACCEPT_PAUSE: Duration = Duration::from_secs(1);

/// Largest request body read (the MCP service's own limit).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

type Service = StreamableHttpService<McpConnection, LocalSessionManager>;

tokio::task_local! {
    /// Whether the request being handled is an `initialize`, the only one
    /// that opens a session.
    static OPENS_SESSION: bool;
    /// The principal of the request being handled, behind a gate.
    static REQUEST_PRINCIPAL: Option<super::auth::Principal>;
}

/// An executor served over streamable HTTP on a bound address.
pub struct McpHttpServer {
    listener: TcpListener,
    address: SocketAddr,
    service: Service,
    sessions: Arc<LocalSessionManager>,
    gate: Option<Arc<Gate>>,
    places: Arc<Places>,
    request_timeout: Duration,
    header_timeout: Duration,
    shutdown: CancellationToken,
    template: McpConnection,
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
    /// refused; [`McpHttpServer::allow_hosts`] widens that. With
    /// [`ServeOptions::auth`], every request needs a bearer token and sees
    /// only what the rules grant its principal (the audience's host is
    /// accepted too).
    ///
    /// # Errors
    /// [`McpError::Serve`] when the address cannot be bound, when it is
    /// not a loopback address and neither [`ServeOptions::auth`] nor
    /// [`ServeOptions::unauthenticated`] is set, or when the
    /// authentication settings cannot work.
    pub async fn bind(
        executor: impl Into<Arc<ToolExecutor>>,
        address: SocketAddr,
        options: ServeOptions,
    ) -> Result<Self, McpError> {
        let executor = executor.into();
        let gate = match &options.auth {
            Some(auth) => Some(Arc::new(
                Gate::new(
                    auth.clone(),
                    &options.name,
                    executor.shared_registry().clone(),
                )
                .map_err(|message| McpError::Serve {
                    message: format!("authentication cannot be set up: {message}"),
                    source: None,
                })?,
            )),
            None if address.ip().is_loopback() => None,
            None if options.unauthenticated => {
                tracing::warn!(%address, "serving MCP without authentication on an address other hosts may reach: anyone who reaches it can call every tool");
                None
            }
            None => {
                return Err(McpError::Serve {
                    message: format!(
                        "{address} is not a loopback address, and serving it without authentication would let anyone who reaches it call every tool; configure `auth` (an OAuth issuer and rules), bind 127.0.0.1, or (knowingly) serve unauthenticated"
                    ),
                    source: None,
                });
            }
        };
        let listener = TcpListener::bind(address)
            .await
            .map_err(|e| McpError::Serve {
                message: format!("{address} could not be bound: {e}"),
                source: Some(Box::new(e)),
            })?;
        let address = listener.local_addr().map_err(|e| McpError::Serve {
            message: format!("the bound address could not be read: {e}"),
            source: Some(Box::new(e)),
        })?;
        let shutdown = CancellationToken::new();
        let places = Places::new(options.max_connections, options.max_anonymous_per_address);
        let request_timeout = options.request_timeout;
        let header_timeout = options.header_timeout.min(request_timeout);
        let config = StreamableHttpServerConfig::default()
            .with_cancellation_token(shutdown.child_token())
            .with_allowed_origins(options.allowed_origins.clone())
            .enforce_origin_validation();
        let audience_host = options
            .auth
            .as_ref()
            .and_then(|auth| reqwest::Url::parse(&auth.audience).ok())
            .and_then(|url| {
                let host = url.host_str()?.to_owned();
                Some(match url.port() {
                    Some(port) => vec![format!("{host}:{port}"), host],
                    None => vec![host],
                })
            })
            .unwrap_or_default();
        let server = McpConnection::behind(executor, options, gate.clone());
        let template = server.clone();
        let sessions = Arc::new(LocalSessionManager::default());
        let mut service = StreamableHttpService::new(
            move || {
                // Only an `initialize` opens a session; the MCP service asks
                // for a server for other requests too (stateless ones, and
                // to look up a tool's schema), which hold no place.
                if !OPENS_SESSION.try_with(|opens| *opens).unwrap_or(true) {
                    let principal = REQUEST_PRINCIPAL.try_with(Clone::clone).ok().flatten();
                    return Ok(server.for_one_request(principal.as_ref()));
                }
                let principal = REQUEST_PRINCIPAL.try_with(Clone::clone).ok().flatten();
                server
                    .try_new_session_of(principal.as_ref())
                    .map_err(std::io::Error::other)
            },
            Arc::clone(&sessions),
            config,
        );
        service.config.allowed_hosts.extend(audience_host);
        Ok(Self {
            listener,
            address,
            service,
            sessions,
            gate,
            places,
            request_timeout,
            header_timeout,
            shutdown,
            template,
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
            let (stream, peer) = match accepted {
                Ok(accepted) => {
                    pause = MIN_ACCEPT_PAUSE;
                    accepted
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
            let place = match self.places.take(peer.ip()) {
                Ok(place) => Arc::new(place),
                Err(no_place) => {
                    // Closed at once; said at debug level, so a flood
                    // cannot flood the log too.
                    let why = match no_place {
                        NoPlace::Address => "its address holds its most connections not yet let in",
                        NoPlace::Full => "every place is held by callers who sent their requests",
                    };
                    tracing::debug!(%peer, why, "an MCP connection was refused");
                    drop(stream);
                    continue;
                }
            };
            let served = Served {
                service: self.service.clone(),
                sessions: Arc::clone(&self.sessions),
                gate: self.gate.clone(),
                deadline: self.request_timeout,
                template: self.template.clone(),
            };
            let shutdown = self.shutdown.clone();
            let header_deadline = self.header_timeout;
            tokio::spawn(async move {
                let evicted = place.evicted();
                let served = Arc::new(served);
                let held = Arc::clone(&place);
                let handler = hyper::service::service_fn(move |request| {
                    let served = Arc::clone(&served);
                    let place = Arc::clone(&held);
                    async move { Ok::<_, Infallible>(served.answer(request, peer.ip(), &place).await) }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(header_deadline)
                    .serve_connection(TokioIo::new(stream), handler);
                tokio::select! {
                    served = connection => {
                        if let Err(error) = served {
                            tracing::debug!(%error, "an MCP HTTP connection ended with an error");
                        }
                    }
                    () = evicted.cancelled() => {
                        tracing::debug!(%peer, "an MCP connection that sent no whole request gave its place to a newcomer");
                    }
                    () = shutdown.cancelled() => {}
                }
                drop(place);
            });
        }
    }
}

/// What answering one request needs.
struct Served {
    service: Service,
    sessions: Arc<LocalSessionManager>,
    gate: Option<Arc<Gate>>,
    deadline: Duration,
    /// The server sessions are made from: whether it holds its most.
    template: McpConnection,
}

type Answer = Response<BoxBody<Bytes, Infallible>>;

impl Served {
    /// Lets the request in (behind a gate), reads its body within the
    /// deadline and [`MAX_BODY_BYTES`], then hands it to the MCP service.
    async fn answer(&self, request: Request<Incoming>, peer: IpAddr, place: &Place) -> Answer {
        let started = std::time::Instant::now();
        // Its head is whole: the connection no longer only waits.
        place.request_read();
        let (mut parts, body) = request.into_parts();
        // Who called, from where, goes with the request to the audit.
        parts.extensions.insert(PeerAddress(peer));
        let admitted = if let Some(gate) = &self.gate {
            if let Some(document) = gate.metadata_for(parts.uri.path()) {
                // Public, and no reason to keep a place: a connection never
                // let in is closed with it, so rereading the metadata
                // cannot pin the server's places.
                let answer = metadata(&parts.method, document);
                return if place.is_anonymous() {
                    closing(answer)
                } else {
                    answer
                };
            }
            match gate.admit(&parts).await {
                Ok(admitted) => Some(admitted),
                // A connection never let in is closed with its refusal: it
                // holds no place to come back to.
                Err(refusal) if place.is_anonymous() => return closing(refused(&refusal)),
                Err(refusal) => return refused(&refusal),
            }
        } else {
            None
        };
        place.admitted();
        let body = match read_body(body, self.deadline).await {
            Ok(body) => body,
            Err(answer) => return answer,
        };
        let session = parts
            .headers
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let opens_session = session.is_none() && is_initialize(&body);
        if let Some(answer) = self.answered_before_service(&body, opens_session) {
            return answer;
        }
        if let (Some(gate), Some(admitted)) = (&self.gate, &admitted) {
            if let Some(refusal) =
                self.refused_by_gate(gate, &admitted.principal, &body, opens_session, peer)
            {
                return refusal;
            }
            parts.extensions.insert(admitted.principal.clone());
        }
        let deleting = parts.method == hyper::Method::DELETE;
        let principal = admitted.as_ref().map(|a| a.principal.clone());
        let handled = self
            .service
            .handle(Request::from_parts(parts, Full::new(body)));
        let response = OPENS_SESSION
            .scope(opens_session, REQUEST_PRINCIPAL.scope(principal, handled))
            .await;
        let (Some(gate), Some(admitted)) = (&self.gate, admitted) else {
            return response;
        };
        if response.status() == StatusCode::FORBIDDEN {
            // The service refused a `Host` or `Origin` it does not serve.
            gate.log_refusal(
                Some(&admitted.principal),
                Some(peer),
                "host_or_origin",
                "403",
                started,
            );
        }
        if opens_session
            && let Some(id) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
        {
            // Sessions that ended (idle, or their server gone) are
            // forgotten as a new one is bound.
            let alive: std::collections::HashSet<String> = self
                .sessions
                .sessions
                .read()
                .await
                .keys()
                .map(ToString::to_string)
                .collect();
            gate.bind_session(id, &admitted.principal, |id| alive.contains(id));
        }
        if deleting
            && response.status().is_success()
            && let Some(id) = &session
        {
            gate.forget_session(id);
        }
        // The caller's place is held until the answer (a stream, for a
        // call) has been sent whole.
        let (head, streamed) = response.into_parts();
        let streamed = streamed.map_frame(move |frame| {
            let _ = &admitted;
            frame
        });
        Response::from_parts(head, streamed.boxed())
    }
}

impl Served {
    /// The gate's answer to a request it let in, when it refuses it after
    /// all: a call that needs more scopes (403), or a session more than
    /// the principal's limit or its share of a crowded server (429).
    fn refused_by_gate(
        &self,
        gate: &Gate,
        principal: &super::auth::Principal,
        body: &[u8],
        opens_session: bool,
        peer: IpAddr,
    ) -> Option<Answer> {
        if let Some(tool) = called_tool(body)
            && let Some(refusal) = gate.step_up(principal, Some(peer), &tool)
        {
            return Some(refused(&refusal));
        }
        if !opens_session {
            return None;
        }
        // Said plainly here; taken for good, under one lock, when the
        // session is made.
        let capacity = self.template.options().max_sessions;
        let live = self.template.live_sessions();
        gate.session_verdict(principal.key().as_str(), capacity, live, false)
            .err()
            .map(|why| plain(StatusCode::TOO_MANY_REQUESTS, &why))
    }

    /// What a request is answered without reaching the service: a call
    /// whose params are not a call's, or a new session on a full server.
    fn answered_before_service(&self, body: &[u8], opens_session: bool) -> Option<Answer> {
        if let Some(invalid) = malformed_call(body) {
            return Some(invalid);
        }
        // Full for everyone, for now: a caller comes back later.
        (opens_session && self.template.is_full()).then(|| {
            retry_later(&format!(
                "the server holds its maximum of {} MCP sessions; try again later",
                self.template.options().max_sessions
            ))
        })
    }
}

/// Reads a request's body within `deadline` and [`MAX_BODY_BYTES`].
async fn read_body(body: Incoming, deadline: Duration) -> Result<Bytes, Answer> {
    let read = tokio::time::timeout(deadline, Limited::new(body, MAX_BODY_BYTES).collect());
    match read.await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(error)) => {
            let status = if error.is::<http_body_util::LengthLimitError>() {
                StatusCode::PAYLOAD_TOO_LARGE
            } else {
                StatusCode::BAD_REQUEST
            };
            Err(plain(
                status,
                &format!("the request body could not be read: {error}"),
            ))
        }
        Err(_) => Err(plain(
            StatusCode::REQUEST_TIMEOUT,
            &format!("the request body did not arrive within {deadline:?}"),
        )),
    }
}

/// The tool a JSON-RPC `tools/call` request names (read without building
/// the arguments' value).
fn called_tool(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Params {
        name: String,
    }
    #[derive(serde::Deserialize)]
    struct Call<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
        params: Option<Params>,
    }
    let call = serde_json::from_slice::<Call<'_>>(body).ok()?;
    (call.method.as_deref() == Some("tools/call")).then_some(call.params?.name)
}

/// The protected resource metadata, for a GET.
fn metadata(method: &hyper::Method, document: &[u8]) -> Answer {
    if method != hyper::Method::GET && method != hyper::Method::HEAD {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "the metadata is read with GET",
        );
    }
    let mut response = Response::new(Full::new(Bytes::copy_from_slice(document)).boxed());
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// A refusal at the door as an HTTP answer.
/// `answer`, closing the connection once it is sent.
fn closing(mut answer: Answer) -> Answer {
    answer.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    answer
}

fn refused(refusal: &Refusal) -> Answer {
    let mut response = plain(refusal.status, &refusal.message);
    for (name, value) in refusal.headers() {
        response.headers_mut().insert(name, value);
    }
    response
}

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

/// The answer to a `tools/call` whose params are not a call's: an
/// invalid-params error (-32602) saying what is wrong (the service would
/// call it an unknown method).
fn malformed_call(body: &[u8]) -> Option<Answer> {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    let method = serde_json::from_slice::<Method<'_>>(body).ok()?;
    if method.method.as_deref() != Some("tools/call") {
        return None;
    }
    let message: serde_json::Value = serde_json::from_slice(body).ok()?;
    let id = message.get("id")?;
    let error = super::call_params::invalid(id, super::call_params::problem(&message)?);
    let mut answer = plain(StatusCode::BAD_REQUEST, &error.to_string());
    answer.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Some(answer)
}

/// 503 with `Retry-After`: the server is full, not broken.
fn retry_later(text: &str) -> Answer {
    let mut answer = plain(StatusCode::SERVICE_UNAVAILABLE, text);
    answer.headers_mut().insert(
        hyper::header::RETRY_AFTER,
        hyper::header::HeaderValue::from_static(RETRY_AFTER_SECONDS),
    );
    answer
}

/// Seconds a caller of a full server is asked to wait.
const RETRY_AFTER_SECONDS: &str = "5";

fn plain(status: StatusCode, text: &str) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_owned())).boxed());
    *response.status_mut() = status;
    response
}
