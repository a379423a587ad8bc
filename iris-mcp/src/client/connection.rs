//! One live session with an MCP server: started (a child process, or a
//! streamable HTTP endpoint) and initialized within the startup timeout,
//! replaced after the server goes away, with bounded back-off between
//! attempts.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};

use iris_core::Exposure;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt as _};
use tokio::io::AsyncBufReadExt as _;
use tokio::process::{Child, Command};
use tokio::sync::watch;

use super::oauth;
use crate::McpError;
use crate::config::{McpServerConfig, McpTransport};
use iris_runtime::ToolProgress;

/// The first wait after a failed reconnect; each later one doubles.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait between reconnect attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Longest line a stdio server may send (a large result is one line).
const MAX_STDIO_LINE: usize = 64 * 1024 * 1024;

/// What Iris tells servers about itself, and where it passes on what they
/// announce.
#[derive(Debug, Clone)]
pub(super) struct IrisClient {
    /// The connection's catalog-change counter; weak, so a session still
    /// winding down does not keep it open.
    catalog_changed: Weak<watch::Sender<u64>>,
    /// Where the server's notifications and requests about a call go.
    routing: Routing,
    /// Whether the server may ask for input while its tools run.
    relay_input: bool,
    /// The model that answers the server's samplings when the caller
    /// cannot, when the operator allows it.
    sampler: Option<crate::sampling::SamplingModel>,
    /// This session's number among the connection's: request ids start
    /// again with each session.
    pub(super) session: u64,
    /// The roots the server is told of, as `file://` URIs.
    roots: Arc<[String]>,
}

impl IrisClient {
    fn new(
        config: &McpServerConfig,
        catalog_changed: &Arc<watch::Sender<u64>>,
        routing: &Routing,
    ) -> Self {
        Self {
            catalog_changed: Arc::downgrade(catalog_changed),
            routing: routing.clone(),
            relay_input: config.relay_input,
            sampler: config.sampler().cloned(),
            session: routing.asking.next_session(),
            roots: config
                .roots
                .iter()
                .filter_map(|folder| root_uri(folder))
                .collect(),
        }
    }
}

/// `folder` as a root's `file://` URI (resolved, so the server sees where
/// it really is), or `None`, logged, when it is not a folder that exists.
fn root_uri(folder: &std::path::Path) -> Option<String> {
    let resolved = match std::fs::canonicalize(folder) {
        Ok(resolved) if resolved.is_dir() => resolved,
        _ => {
            tracing::warn!(folder = %folder.display(), "a root that is not a folder is not given to MCP servers");
            return None;
        }
    };
    reqwest::Url::from_directory_path(&resolved)
        .ok()
        .map(|url| url.to_string())
}

/// Where a server's notifications and requests about the calls that are
/// out go: progress by progress token, requests for input to the person
/// behind the call.
#[derive(Debug, Clone, Default)]
pub(super) struct Routing {
    pub(super) progress: Arc<ProgressRoutes>,
    pub(super) asking: Arc<crate::elicitation::Routes>,
}

impl ClientHandler for IrisClient {
    fn get_info(&self) -> ClientConfig {
        // Form elicitation, when the operator lets the server ask: the
        // person behind a call is asked (the gateway relays it to its own
        // client); with nobody to ask, the request is answered with an
        // error saying so.
        let mut capabilities = ClientCapabilities::default();
        if self.relay_input {
            capabilities.elicitation = Some(rmcp::model::ElicitationCapability::default());
        }
        if self.relay_input || self.sampler.is_some() {
            capabilities.sampling = Some(rmcp::model::SamplingCapability::default());
        }
        if !self.roots.is_empty() {
            // The roots are fixed for the connection's life: no change to
            // announce.
            capabilities.roots = Some(rmcp::model::RootsCapabilities::default());
        }
        ClientConfig::new(
            capabilities,
            Implementation::new("iris", env!("CARGO_PKG_VERSION")),
        )
    }

    #[allow(
        deprecated,
        reason = "roots are part of the 2025 revisions this gateway relays (deprecated by SEP-2577 from 2026-07-28 on)"
    )]
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        Ok(rmcp::model::ListRootsResult::new(
            self.roots
                .iter()
                .map(|uri| rmcp::model::Root::new(uri.clone()))
                .collect(),
        ))
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        if !self.relay_input {
            return Err(not_relayed());
        }
        self.routing
            .asking
            .ask(request, origin(self.session, &context))
            .await
    }

    #[allow(
        deprecated,
        reason = "sampling is part of the 2025 revisions this gateway relays (deprecated by SEP-2577 from 2026-07-28 on)"
    )]
    async fn create_message(
        &self,
        request: rmcp::model::CreateMessageRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        if !self.relay_input && self.sampler.is_none() {
            return Err(not_relayed());
        }
        self.routing
            .asking
            .sample(
                request,
                origin(self.session, &context),
                self.sampler.as_ref(),
                self.relay_input,
            )
            .await
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.routing.progress.deliver(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(changed) = self.catalog_changed.upgrade() {
            changed.send_modify(|count| *count += 1);
        }
    }
}

/// How a session with a server over stdio starts: `server/discover`
/// first, so that a server of the 2026-07-28 revision asks for input in
/// its calls' own results (SEP-2322), which the gateway relays to callers
/// with no session; `initialize` when the server says it does not know
/// `server/discover` (older revisions). Over HTTP a session starts with
/// `initialize`: the session revision keeps the server's notifications
/// (a changed catalog) and its per-session state, which the stateless
/// revision would need `subscriptions/listen` for.
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        legacy_version: None,
    }
}

/// Where a server's request came from: the response stream of a request
/// of Iris's in `session` (over HTTP), a stream of no request, or a
/// transport that does not say (stdio).
fn origin(
    session: u64,
    context: &rmcp::service::RequestContext<RoleClient>,
) -> crate::elicitation::Origin<'_> {
    use crate::elicitation::Origin;
    match context
        .extensions
        .get::<rmcp::service::InboundStreamOrigin>()
    {
        Some(rmcp::service::InboundStreamOrigin::OutboundRequest(id)) => {
            Origin::Stream { session, id }
        }
        Some(rmcp::service::InboundStreamOrigin::Unassociated) => Origin::Unassociated,
        None => Origin::Unknown,
    }
}

/// The error a server meets when it asks its caller and its configuration
/// does not let it.
fn not_relayed() -> rmcp::ErrorData {
    rmcp::ErrorData::invalid_request(
        "this client does not let the server ask its caller while a tool runs (`relay_input` is off)",
        None,
    )
}

/// A live session and, for stdio, the process behind it.
pub(super) struct Session {
    pub(super) service: RunningService<RoleClient, IrisClient>,
    child: Option<Mutex<Child>>,
}

impl Session {
    /// The process id of a stdio server's process.
    pub(super) fn process_id(&self) -> Option<u32> {
        self.child.as_ref()?.lock().ok()?.id()
    }

    /// How the process ended, once it has: `exit status 1`, `signal 9`.
    pub(super) fn exit_status(&self) -> Option<String> {
        let child = self.child.as_ref()?;
        let mut child = child.lock().ok()?;
        let status = child.try_wait().ok()??;
        Some(describe_exit(status))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(child) = &self.child
            && let Ok(mut child) = child.lock()
        {
            // Best effort: the process may have gone already.
            let _ = child.start_kill();
        }
    }
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => "an unknown exit status".to_owned(),
    }
}

/// Counts kept per server, readable while calls run.
#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) calls: AtomicU64,
    pub(super) failures: AtomicU64,
    pub(super) reconnects: AtomicU64,
}

/// Reconnect bookkeeping: failed attempts in a row, and when the next may
/// start.
#[derive(Debug, Default)]
struct Backoff {
    failures: u32,
    next_attempt: Option<Instant>,
}

/// A server: its configuration, its session while one is live, and how to
/// start the next one.
pub(super) struct Connection {
    pub(super) config: McpServerConfig,
    live: RwLock<Option<Arc<Session>>>,
    reconnecting: tokio::sync::Mutex<Backoff>,
    pub(super) counters: Counters,
    last_exit: Mutex<Option<String>>,
    /// Counts `notifications/tools/list_changed` and reconnects (a server
    /// started again may list other tools), for those keeping a registry
    /// current.
    pub(super) catalog_changed: Arc<watch::Sender<u64>>,
    /// The exposure of the server's tools, decided when it first listed
    /// them: `auto` does not flip a catalog between eager and deferred
    /// while a model uses it.
    pub(super) exposure: OnceLock<Exposure>,
    /// The calls in flight: their progress reporters, and who is asked
    /// when the server asks for input.
    pub(super) routing: Routing,
    /// Calls waiting for the answer of a caller with no session.
    pub(super) parked: super::parked::ParkedCalls,
}

/// The progress reporters of calls in flight, by progress token. A
/// notification for a token no call holds (late, or made up) is dropped.
#[derive(Debug, Default)]
pub(super) struct ProgressRoutes {
    routes: Mutex<HashMap<ProgressToken, ToolProgress>>,
}

impl ProgressRoutes {
    /// Sends `token`'s notifications to `progress` until the returned
    /// guard is dropped.
    pub(super) fn route(self: &Arc<Self>, token: ProgressToken, progress: ToolProgress) -> Route {
        self.lock().insert(token.clone(), progress);
        Route {
            routes: Arc::clone(self),
            token,
        }
    }

    fn deliver(&self, params: ProgressNotificationParam) {
        let Some(progress) = self.lock().get(&params.progress_token).cloned() else {
            return;
        };
        progress.report(params.progress, params.total, params.message);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, ToolProgress>> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A call's progress route, removed when the call ends.
pub(super) struct Route {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
}

impl Drop for Route {
    fn drop(&mut self) {
        // Notifications are handled on tasks of their own, so the last
        // report (sent before the result) may still be on its way when the
        // result is in: the route stays a moment longer.
        let routes = Arc::clone(&self.routes);
        let token = self.token.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(ROUTE_GRACE).await;
                    routes.lock().remove(&token);
                });
            }
            Err(_) => {
                routes.lock().remove(&token);
            }
        }
    }
}

/// How long a finished call's progress route stays open for reports that
/// were sent before its result.
const ROUTE_GRACE: Duration = Duration::from_millis(200);

impl Connection {
    /// Starts the server and initializes the session.
    pub(super) async fn open(config: McpServerConfig) -> Result<Arc<Self>, McpError> {
        let catalog_changed = Arc::new(watch::channel(0).0);
        let routing = Routing::default();
        let session = start(&config, &catalog_changed, &routing).await?;
        Ok(Self::with_session(
            config,
            session,
            catalog_changed,
            routing,
        ))
    }

    fn with_session(
        config: McpServerConfig,
        session: Session,
        catalog_changed: Arc<watch::Sender<u64>>,
        routing: Routing,
    ) -> Arc<Self> {
        Arc::new(Self {
            config,
            live: RwLock::new(Some(Arc::new(session))),
            reconnecting: tokio::sync::Mutex::new(Backoff::default()),
            counters: Counters::default(),
            last_exit: Mutex::new(None),
            catalog_changed,
            exposure: OnceLock::new(),
            routing,
            parked: super::parked::ParkedCalls::default(),
        })
    }

    /// A session over `read` and `write`, with a server in this process
    /// (a test's, the fuzzing harness's); it is not started again once it
    /// ends.
    pub(super) async fn open_over<R, W>(
        config: McpServerConfig,
        read: R,
        write: W,
    ) -> Result<Arc<Self>, McpError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let catalog_changed = Arc::new(watch::channel(0).0);
        let routing = Routing::default();
        let handler = IrisClient::new(&config, &catalog_changed, &routing);
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(read, write)
            .with_max_line_length(MAX_STDIO_LINE);
        let startup = config.startup_timeout();
        let service = tokio::time::timeout(startup, handler.serve(transport))
            .await
            .map_err(|_| McpError::Startup {
                server: config.name.clone(),
                message: "it did not finish `initialize` in time".to_owned(),
                source: None,
            })?
            .map_err(|error| McpError::Startup {
                server: config.name.clone(),
                message: format!("`initialize` failed: {error}"),
                source: Some(Box::new(error)),
            })?;
        let session = Session {
            service,
            child: None,
        };
        Ok(Self::with_session(
            config,
            session,
            catalog_changed,
            routing,
        ))
    }

    /// The roots the server is told of, as `file://` URIs.
    pub(super) fn root_uris(&self) -> Vec<String> {
        self.config
            .roots
            .iter()
            .filter_map(|folder| root_uri(folder))
            .collect()
    }

    /// The server's name.
    pub(super) fn name(&self) -> &str {
        &self.config.name
    }

    /// The live session, without reconnecting.
    pub(super) fn current(&self) -> Option<Arc<Session>> {
        let live = self.live.read().ok()?;
        live.as_ref()
            .filter(|s| !s.service.is_closed())
            .map(Arc::clone)
    }

    /// The live session, or a new one when the server went away (and the
    /// back-off allows another attempt); the flag says it is new.
    pub(super) async fn session(&self) -> Result<(Arc<Session>, bool), McpError> {
        if let Some(session) = self.current() {
            return Ok((session, false));
        }
        let mut backoff = self.reconnecting.lock().await;
        // Another call may have reconnected while this one waited.
        if let Some(session) = self.current() {
            return Ok((session, false));
        }
        if let Some(next) = backoff.next_attempt
            && let Some(wait) = next.checked_duration_since(Instant::now())
        {
            return Err(McpError::Unavailable {
                server: self.config.name.clone(),
                message: format!(
                    "it went away{}; the next reconnect attempt is in {} ms",
                    self.exit_note(),
                    wait.as_millis()
                ),
            });
        }
        match start(&self.config, &self.catalog_changed, &self.routing).await {
            Ok(session) => {
                let session = Arc::new(session);
                if let Ok(mut live) = self.live.write() {
                    *live = Some(Arc::clone(&session));
                }
                *backoff = Backoff::default();
                self.counters.reconnects.fetch_add(1, Ordering::Relaxed);
                self.catalog_changed.send_modify(|count| *count += 1);
                tracing::info!(server = %self.config.name, "reconnected to the MCP server");
                Ok((session, true))
            }
            Err(error) => {
                backoff.failures = backoff.failures.saturating_add(1);
                let wait = FIRST_BACKOFF
                    .saturating_mul(1 << backoff.failures.min(16).saturating_sub(1))
                    .min(MAX_BACKOFF);
                backoff.next_attempt = Some(Instant::now() + wait);
                Err(error)
            }
        }
    }

    /// Marks `session` gone (when it is still the live one) and says how
    /// its process ended, when it did.
    pub(super) fn lost(&self, session: &Arc<Session>) -> Option<String> {
        let exit = session.exit_status();
        if let Ok(mut live) = self.live.write()
            && live.as_ref().is_some_and(|s| Arc::ptr_eq(s, session))
        {
            *live = None;
        }
        if let Some(exit) = &exit
            && let Ok(mut last) = self.last_exit.lock()
        {
            *last = Some(exit.clone());
        }
        exit
    }

    /// How the last process ended, when known.
    pub(super) fn last_exit(&self) -> Option<String> {
        self.last_exit.lock().ok().and_then(|last| last.clone())
    }

    fn exit_note(&self) -> String {
        self.last_exit()
            .map(|exit| format!(" ({exit})"))
            .unwrap_or_default()
    }
}

/// Starts the server `config` names and runs `initialize` within its
/// startup timeout.
async fn start(
    config: &McpServerConfig,
    catalog_changed: &Arc<watch::Sender<u64>>,
    routing: &Routing,
) -> Result<Session, McpError> {
    let handler = IrisClient::new(config, catalog_changed, routing);
    let timeout = config.startup_timeout();
    let server = config.name.clone();
    let too_slow = || McpError::Startup {
        server: server.clone(),
        message: format!(
            "it did not finish `initialize` within {} s (raise `startup_timeout` if it is only slow)",
            timeout.as_secs_f64()
        ),
        source: None,
    };
    match &config.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut process = Command::new(command);
            process
                .args(args)
                .envs(env)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true);
            if let Some(cwd) = cwd {
                process.current_dir(cwd);
            }
            let mut child = process.spawn().map_err(|e| McpError::Startup {
                server: server.clone(),
                message: format!(
                    "`{command}` could not be started: {e}; check that it is installed and on PATH"
                ),
                source: Some(Box::new(e)),
            })?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(McpError::Startup {
                    server,
                    message: "its standard input and output could not be opened".to_owned(),
                    source: None,
                });
            };
            if let Some(stderr) = child.stderr.take() {
                tokio::spawn(forward_stderr(server.clone(), stderr));
            }
            let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(stdout, stdin)
                .with_max_line_length(MAX_STDIO_LINE);
            let service = tokio::time::timeout(
                timeout,
                handler.serve_with_lifecycle(transport, lifecycle()),
            )
            .await
            .map_err(|_| too_slow())?;
            let service = match service {
                Ok(service) => service,
                Err(error) => {
                    let exit = child
                        .try_wait()
                        .ok()
                        .flatten()
                        .map(|s| format!(" ({})", describe_exit(s)))
                        .unwrap_or_default();
                    return Err(McpError::Startup {
                        server,
                        message: format!("`initialize` failed{exit}: {error}"),
                        source: Some(Box::new(error)),
                    });
                }
            };
            Ok(Session {
                service,
                child: Some(Mutex::new(child)),
            })
        }
        McpTransport::Http {
            url,
            headers,
            oauth,
            login,
        } => {
            let authorization = Authorization::of(&server, oauth.as_ref(), login.as_ref())?;
            start_http(
                handler,
                &server,
                url,
                headers,
                authorization,
                timeout,
                too_slow,
            )
            .await
        }
    }
}

/// Connects to a server over streamable HTTP, with OAuth when configured.
/// How requests to an HTTP server are authorized.
enum Authorization<'a> {
    /// They are not (or by the configured headers).
    None,
    /// With this gateway's own client credentials.
    ClientCredentials(&'a crate::config::UpstreamOAuth),
    /// With a person's sign-in, cached by `iris login`.
    SignedIn(&'a crate::config::UpstreamLogin),
}

impl<'a> Authorization<'a> {
    /// How the transport's settings say requests are authorized.
    fn of(
        server: &str,
        oauth: Option<&'a crate::config::UpstreamOAuth>,
        login: Option<&'a crate::config::UpstreamLogin>,
    ) -> Result<Self, McpError> {
        match (oauth, login) {
            (Some(_), Some(_)) => Err(McpError::Config {
                server: server.to_owned(),
                message: oauth::OAUTH_AND_LOGIN.to_owned(),
                source: None,
            }),
            (Some(oauth), None) => Ok(Self::ClientCredentials(oauth)),
            (None, Some(login)) => Ok(Self::SignedIn(login)),
            (None, None) => Ok(Self::None),
        }
    }
}

async fn start_http(
    handler: IrisClient,
    server: &str,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    authorization: Authorization<'_>,
    timeout: std::time::Duration,
    too_slow: impl Fn() -> McpError,
) -> Result<Session, McpError> {
    let unauthorized = matches!(authorization, Authorization::None);
    let started = match authorization {
        Authorization::None => {
            let transport = http_transport(server, url, headers)?;
            tokio::time::timeout(timeout, handler.serve(transport)).await
        }
        Authorization::ClientCredentials(oauth) => {
            let transport = tokio::time::timeout(
                timeout,
                oauth::client_credentials_transport(server, url, headers, oauth),
            )
            .await
            .map_err(|_| too_slow())??;
            tokio::time::timeout(timeout, handler.serve(transport)).await
        }
        Authorization::SignedIn(login) => {
            let transport = tokio::time::timeout(
                timeout,
                oauth::signed_in_transport(server, url, headers, login),
            )
            .await
            .map_err(|_| too_slow())??;
            tokio::time::timeout(timeout, handler.serve(transport)).await
        }
    };
    let service = started.map_err(|_| too_slow())?.map_err(|error| {
        let said = error.to_string();
        // rmcp's words for a 401.
        let hint = if said.contains("Auth required") && unauthorized {
            "; the server needs OAuth: give its transport `oauth:` with this gateway's `client_id` and `client_secret` at the server's authorization server, or `login:` and sign in once with `iris login`"
        } else {
            ""
        };
        McpError::Startup {
            server: server.to_owned(),
            message: format!("`initialize` failed: {said}{hint}"),
            source: Some(Box::new(error)),
        }
    })?;
    Ok(Session {
        service,
        child: None,
    })
}

fn http_transport(
    server: &str,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<rmcp::transport::StreamableHttpClientTransport<reqwest::Client>, McpError> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let custom = crate::config::custom_headers(server, headers)?;
    iris_core::tls::install_default_provider();
    let client = reqwest::Client::builder()
        .build()
        .map_err(|e| McpError::Config {
            server: server.to_owned(),
            message: format!("no HTTP client could be built: {e}"),
            source: Some(Box::new(e)),
        })?;
    let config =
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).custom_headers(custom);
    Ok(rmcp::transport::StreamableHttpClientTransport::with_client(
        client, config,
    ))
}

/// The server's diagnostics, as logs (never mixed into Iris's output).
async fn forward_stderr(server: String, stderr: tokio::process::ChildStderr) {
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(server = %server, "{line}");
    }
}
