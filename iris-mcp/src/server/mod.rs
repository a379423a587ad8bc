//! An Iris executor served over MCP: `tools/list` from its registry (with
//! annotations from capabilities, input and output schemas, pages), and
//! `tools/call` through the executor, so permissions, hooks, middleware,
//! artifacts and observers all apply. A call the policy asks about is put
//! to a person through the client's elicitation when it has one, and
//! refused with a message saying so when it has not; it never runs
//! silently.

mod approval;
pub(crate) mod auth;
mod call;
mod formats;
pub(crate) mod http;
pub(crate) mod lines;
mod listen;
mod questions;
mod relay;
mod rounds;
pub(crate) mod serve;
mod skills;
mod stateless;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use iris_core::{Capability, Exposure, RunId, ToolContext, ToolDefinition};
use rmcp::model::{
    self as mcp, CacheScope, CallToolRequestParams, CallToolResponse, Implementation,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ResourceContents, ServerCapabilities, ServerConfig,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

use arc_swap::ArcSwapOption;
use iris_runtime::ledger::RunLedger;
use tokio_util::sync::CancellationToken;

pub use auth::{
    AccessRule, AuditConfig, DEFAULT_INTROSPECTION_REMEMBER_SECONDS, GatewayAuth, Introspection,
    Principal, PrincipalLimits, TokenIssuer,
};
use auth::{Gate, Grant};
use call::principal_of;
use iris_runtime::{ProgressListener, ToolExecutor, ToolRegistry};

/// Tools per `tools/list` page unless the options say otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// Connections (MCP sessions) served at once unless the options say
/// otherwise.
pub const DEFAULT_MAX_SESSIONS: usize = 1_000;

/// The origins of pages on this machine, served unless configured.
pub const LOOPBACK_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// How long a client may take to send a request's head, and its body,
/// unless configured.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a call waits for a person's answer unless configured.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Most HTTP connections served at once unless configured.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1_024;

/// Which tools a served registry lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ServedTools {
    /// Every tool, deferred ones included.
    #[default]
    All,
    /// The eager tools and `tool_search`; deferred tools are found through
    /// it, as a model in Iris finds them.
    EagerAndSearch,
}

/// How an executor is served.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The name the server gives in `initialize`.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Which tools are listed.
    pub tools: ServedTools,
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// The workspace calls run in (the file tools' root).
    pub workspace: PathBuf,
    /// Instructions for the client's model, when given.
    pub instructions: Option<String>,
    /// Most connections served at once over HTTP; a client that would open
    /// one more is refused until one ends (a session ends on `DELETE`, or
    /// after five minutes without a request).
    pub max_sessions: usize,
    /// Most HTTP connections open at once; one more is closed at once. A
    /// client that opens connections and sends nothing (or its request a
    /// byte at a time) is cut off after a deadline, so it cannot hold them.
    pub max_connections: usize,
    /// Longest a client may take to send a request's head, and again its
    /// body, over HTTP; past it the connection is closed (head) or the
    /// request refused with 408 (body).
    pub request_timeout: Duration,
    /// Browser origins whose pages may call the server, as
    /// `scheme://host:port` (`:*` for any port). A request with an `Origin`
    /// header not listed is refused (DNS-rebinding protection); a request
    /// without one (not from a browser) is served. Loopback pages unless
    /// set.
    pub allowed_origins: Vec<String>,
    /// How long a call waits for the person behind the client to answer
    /// its approval (through elicitation); past it the call is refused. A
    /// question waits as long, and then ends as `expired`.
    pub approval_timeout: Duration,
    /// Whether a client that can elicit (a person is behind it) is offered
    /// `ask_question`: the model's questions put to the person as a form.
    /// Run control: no hook, middleware or permission rule sees them. A
    /// client without elicitation is never offered it. Off unless set, and
    /// never when the registry has a tool of that name.
    pub questions: bool,
    /// Agent Skills the client's model may activate: their catalog is the
    /// `activate_skill` tool (run control, like `ask_question`: no hook,
    /// middleware or rule sees it; every caller may use it), each session
    /// keeps its own active skills, and each skill's files are resources
    /// (`skill://<name>/<path>`, read-only). None unless set, and never
    /// when the registry has a tool of that name.
    pub skills: Option<iris_skills::Skills>,
    /// Who may call over HTTP and what each caller may do (an OAuth 2.1
    /// resource server; see [`GatewayAuth`]). Without it, an HTTP server
    /// binds only to a loopback address unless
    /// [`ServeOptions::unauthenticated`] says otherwise. Not used over
    /// standard input and output, where the caller is the process that
    /// started the server.
    pub auth: Option<GatewayAuth>,
    /// Serve HTTP without authentication on an address other hosts can
    /// reach: anyone who reaches the port may call every tool. Off unless
    /// set, and a warning is logged at every start when set.
    pub unauthenticated: bool,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            name: "iris".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            tools: ServedTools::All,
            page_size: DEFAULT_PAGE_SIZE,
            workspace: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            instructions: None,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
            questions: false,
            skills: None,
            auth: None,
            unauthenticated: false,
            allowed_origins: LOOPBACK_ORIGINS.iter().map(|o| (*o).to_owned()).collect(),
        }
    }
}

/// The MCP face of an executor: one per connection.
#[derive(Clone)]
pub struct McpConnection {
    executor: Arc<ToolExecutor>,
    options: Arc<ServeOptions>,
    /// The run every call of this connection belongs to.
    run_id: RunId,
    next_call: Arc<AtomicU64>,
    /// The context of every call when the offered set does not depend on
    /// searches (every tool listed, or no deferred tool): built once per
    /// registry snapshot, so a refreshed registry offers its new tools.
    fixed_context: Arc<ArcSwapOption<FixedContext>>,
    /// Ends the connection's run when the last clone of this connection's
    /// server is dropped (its session ended).
    _session: Arc<Session>,
    /// Cancelled when the session ends: stops telling the client of
    /// changes.
    ended: CancellationToken,
    /// What every connection shares.
    shared: Arc<Shared>,
    /// Whether it serves one request outside any session (a stateless
    /// client's): deferred tools are then called by the name `tool_search`
    /// gave, since no disclosure outlives the request.
    sessionless: bool,
    /// The logging level the session set (`logging/setLevel`); no log
    /// messages until it sets one.
    log_level: Arc<relay::SessionLogs>,
    /// The skills this session activated.
    active_skills: Arc<std::sync::Mutex<Vec<String>>>,
}

/// What the connections of one server share: one search index and one file
/// service for all of them, each keeping its state per run (a connection's
/// run) in the executor's ledger.
struct Shared {
    /// `tool_search` and what it disclosed to each connection, when
    /// deferred tools are served behind it.
    discovery: Option<Arc<iris_tools::discovery::Discovery>>,
    /// What the file tools keep between calls (reads before edits).
    files: Option<Arc<iris_tools::fs::FileService>>,
    /// Connections alive.
    live: AtomicUsize,
    /// Who may call, when the server is behind authentication.
    gate: Option<Arc<Gate>>,
    /// The sealing key of stateless clients' input requests (2026-07-28).
    rounds: Option<rounds::Rounds>,
    /// Call ids of the principals' runs, which many requests share.
    principal_calls: Arc<AtomicU64>,
}

/// One connection's hold on the server: counted while it lives, and its
/// run (disclosures, reads, calls waiting for approval) forgotten when it
/// ends, so that ended sessions leave nothing behind.
struct Session {
    shared: Arc<Shared>,
    ledger: Arc<RunLedger>,
    run_id: RunId,
    ended: CancellationToken,
    /// Whether it holds one of the [`ServeOptions::max_sessions`] places
    /// (a server for one request outside any session does not).
    counted: bool,
    /// Whether its run ends with it (a principal's run outlives each of
    /// its stateless requests, until the ledger drops it when idle).
    owns_run: bool,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.ended.cancel();
        if self.owns_run {
            self.ledger.finish_run(&self.run_id);
        }
        if self.counted {
            self.shared.live.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl std::fmt::Debug for McpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpConnection")
            .field("name", &self.options.name)
            .field("run_id", &self.run_id)
            .finish_non_exhaustive()
    }
}

/// What a server built for a connection serves.
#[derive(Clone, Copy)]
enum Served<'a> {
    /// An MCP session: a run of its own, ended with it.
    Session,
    /// One request outside any session, of no known principal.
    Request,
    /// One request of this principal (its key), in the principal's run.
    Principal(&'a str),
}

/// Connections served so far, for each one's run id.
static CONNECTIONS: AtomicU64 = AtomicU64::new(0);

impl McpConnection {
    /// Serves `executor` as `options` say.
    #[must_use]
    pub fn new(executor: Arc<ToolExecutor>, options: ServeOptions) -> Self {
        Self::behind(executor, options, None)
    }

    /// Serves `executor` as `options` say, behind `gate` when given.
    pub(crate) fn behind(
        executor: Arc<ToolExecutor>,
        options: ServeOptions,
        gate: Option<Arc<Gate>>,
    ) -> Self {
        let ledger = Arc::clone(executor.ledger());
        let files = match iris_tools::fs::FileService::open(&options.workspace) {
            Ok(files) => Some(Arc::new(files.with_ledger(Arc::clone(&ledger)))),
            Err(error) => {
                tracing::warn!(%error, workspace = %options.workspace.display(),
                    "the file tools have no workspace to work in");
                None
            }
        };
        let discovery = (options.tools == ServedTools::EagerAndSearch
            && executor
                .registry()
                .resolve(iris_tools::discovery::TOOL_SEARCH)
                .is_some())
        .then(|| {
            iris_tools::discovery::Discovery::builder(executor.shared_registry())
                .ledger(ledger)
                .build()
                .map_err(|error| tracing::warn!(%error, "`tool_search` cannot be served"))
                .ok()
        })
        .flatten()
        .map(Arc::new);
        let shared = Arc::new(Shared {
            discovery,
            files,
            live: AtomicUsize::new(1),
            gate,
            principal_calls: Arc::new(AtomicU64::new(0)),
            rounds: rounds::Rounds::new()
                .map_err(|error| tracing::warn!(%error, "stateless clients cannot be asked for approvals"))
                .ok(),
        });
        Self::connection(executor, Arc::new(options), shared, Served::Session)
    }

    /// A server for one more connection, counted in `shared.live` already
    /// when it serves a session.
    fn connection(
        executor: Arc<ToolExecutor>,
        options: Arc<ServeOptions>,
        shared: Arc<Shared>,
        served: Served<'_>,
    ) -> Self {
        let run_id = match served {
            Served::Principal(key) => {
                use sha2::Digest as _;
                let digest = sha2::Sha256::digest(key.as_bytes());
                RunId::new(format!(
                    "mcp-principal-{}",
                    iris_runtime::__wings::hex(&digest[..12])
                ))
            }
            Served::Session | Served::Request => {
                let connection = CONNECTIONS.fetch_add(1, Ordering::Relaxed);
                RunId::new(format!("mcp-{}-{connection}", std::process::id()))
            }
        };
        let ended = CancellationToken::new();
        let session = Arc::new(Session {
            shared: Arc::clone(&shared),
            ledger: Arc::clone(executor.ledger()),
            run_id: run_id.clone(),
            ended: ended.clone(),
            counted: matches!(served, Served::Session),
            owns_run: !matches!(served, Served::Principal(_)),
        });
        Self {
            executor,
            options,
            run_id,
            next_call: match served {
                Served::Principal(_) => Arc::clone(&shared.principal_calls),
                Served::Session | Served::Request => Arc::new(AtomicU64::new(0)),
            },
            fixed_context: Arc::new(ArcSwapOption::empty()),
            _session: session,
            ended,
            shared,
            sessionless: !matches!(served, Served::Session),
            log_level: Arc::default(),
            active_skills: Arc::default(),
        }
    }

    /// The same executor and options for another connection (a run of its
    /// own), whatever the number of connections.
    #[must_use]
    pub fn for_new_connection(&self) -> Self {
        self.shared.live.fetch_add(1, Ordering::SeqCst);
        Self::connection(
            Arc::clone(&self.executor),
            Arc::clone(&self.options),
            Arc::clone(&self.shared),
            Served::Session,
        )
    }

    /// A server for one request outside any session (a stateless request,
    /// or a look-up of a tool's schema), and no session's place: the run
    /// of `principal` when the request has one (so its artifacts and what
    /// it was shown carry over to its next requests), else a run of its
    /// own that ends with the request. Such servers are as many as the
    /// requests in flight, which the connection cap bounds.
    pub(crate) fn for_one_request(&self, principal: Option<&str>) -> Self {
        Self::connection(
            Arc::clone(&self.executor),
            Arc::clone(&self.options),
            Arc::clone(&self.shared),
            principal.map_or(Served::Request, Served::Principal),
        )
    }

    /// Another connection, unless [`ServeOptions::max_sessions`] are
    /// served already.
    #[must_use]
    pub fn try_new_connection(&self) -> Option<Self> {
        let max = self.options.max_sessions;
        // This server itself (the template the HTTP service clones from) is
        // not a session.
        self.shared
            .live
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |live| {
                (live <= max).then_some(live + 1)
            })
            .ok()?;
        Some(Self::connection(
            Arc::clone(&self.executor),
            Arc::clone(&self.options),
            Arc::clone(&self.shared),
            Served::Session,
        ))
    }

    /// The executor served.
    #[must_use]
    pub fn executor(&self) -> Arc<ToolExecutor> {
        Arc::clone(&self.executor)
    }

    /// The options served with.
    #[must_use]
    pub fn options(&self) -> &ServeOptions {
        &self.options
    }

    /// The definitions of `registry` listed, in registry order.
    fn listed<'r>(&self, registry: &'r ToolRegistry) -> impl Iterator<Item = &'r ToolDefinition> {
        let tools = self.options.tools;
        registry
            .tools()
            .map(|tool| tool.definition_dyn())
            .filter(move |definition| match tools {
                ServedTools::All => true,
                ServedTools::EagerAndSearch => definition.exposure() == Exposure::Eager,
            })
    }

    /// The definitions `principal` is shown: those listed, and (behind a
    /// gate) only those a rule grants it. Behind a gate with no principal,
    /// nothing.
    fn visible<'r>(
        &self,
        registry: &'r ToolRegistry,
        principal: Option<&'r Principal>,
    ) -> impl Iterator<Item = &'r ToolDefinition> {
        let gate = self.shared.gate.clone();
        self.listed(registry)
            .filter(move |definition| match (&gate, principal) {
                (None, _) => true,
                (Some(gate), Some(principal)) => {
                    matches!(gate.grant(principal, definition), Grant::Allowed { .. })
                }
                (Some(_), None) => false,
            })
    }

    /// The context of this connection's calls: every listed tool offered,
    /// or (deferred tools behind `tool_search`) the eager ones and those
    /// `tool_search` disclosed to this connection so far.
    pub(super) fn context(&self) -> ToolContext {
        if self.shared.discovery.is_some() {
            return self.offering_builder(&self.executor.registry()).build();
        }
        let registry = self.executor.shared_registry().peek();
        if let Some(fixed) = &*self.fixed_context.load()
            && Arc::ptr_eq(&fixed.registry, &registry)
        {
            return fixed.cx.clone();
        }
        let cx = self.offering_builder(&registry).build();
        self.fixed_context.store(Some(Arc::new(FixedContext {
            registry: Arc::clone(&registry),
            cx: cx.clone(),
        })));
        cx
    }

    /// The context of a call of `principal`: behind a gate, only what the
    /// rules grant it is offered, and only that is searched by
    /// `tool_search`; otherwise the connection's.
    pub(super) fn call_context(&self, principal: Option<&Principal>) -> ToolContext {
        let (Some(gate), Some(principal)) = (&self.shared.gate, principal) else {
            return self.context();
        };
        let registry = self.executor.registry();
        let granted = {
            let gate = Arc::clone(gate);
            let principal = principal.clone();
            move |definition: &ToolDefinition| {
                matches!(gate.grant(&principal, definition), Grant::Allowed { .. })
            }
        };
        let builder = self.context_builder();
        let Some(discovery) = &self.shared.discovery else {
            let offered = self
                .listed(&registry)
                .filter(|d| granted(d))
                .map(|d| d.name().clone());
            return builder.offered(offered).build();
        };
        let view = registry.view().filter(granted);
        // Sets the run's search candidates to the granted deferred tools.
        let request = discovery.request(&view, &self.run_id);
        let mut offered = request.offered;
        if self.sessionless {
            offered.extend(
                view.definitions()
                    .filter(|d| d.exposure() == Exposure::Deferred)
                    .map(|d| d.name().clone()),
            );
        }
        builder
            .offered(offered)
            .shared_state(Arc::clone(discovery))
            .build()
    }

    /// The context of one call of `principal` whose client asked for
    /// progress, with a listener passing the call's progress to `relay`.
    fn context_reporting_to(
        &self,
        principal: Option<&Principal>,
        relay: &Arc<relay::Relay>,
    ) -> ToolContext {
        let relay = Arc::clone(relay);
        let listener = ProgressListener::new(move |progress, total, message| {
            relay.report(progress, total, message);
        });
        self.call_context(principal).with_extension(listener)
    }

    /// A context builder offering what this connection may call in
    /// `registry`: every listed tool, or (deferred tools behind
    /// `tool_search`) the eager ones and those disclosed so far.
    fn offering_builder(&self, registry: &ToolRegistry) -> iris_core::ToolContextBuilder {
        let builder = self.context_builder();
        if let Some(discovery) = &self.shared.discovery {
            if self.sessionless {
                // No disclosure outlives a stateless request: a deferred
                // tool is called by the name `tool_search` gave.
                let every = registry.tools().map(|t| t.definition_dyn().name().clone());
                return builder.offered(every).shared_state(Arc::clone(discovery));
            }
            let disclosed = discovery.disclosed(&self.run_id);
            let eager = self.listed(registry).map(|d| d.name().clone());
            return builder
                .offered(eager.chain(disclosed))
                .shared_state(Arc::clone(discovery));
        }
        if registry
            .tools()
            .any(|tool| tool.definition_dyn().exposure() == Exposure::Deferred)
        {
            // A client calls what it was listed: deferred tools too.
            return builder.offered(self.listed(registry).map(|d| d.name().clone()));
        }
        builder
    }

    fn context_builder(&self) -> iris_core::ToolContextBuilder {
        let builder = ToolContext::builder(self.options.workspace.clone(), self.run_id.clone());
        match &self.shared.files {
            Some(files) => builder.shared_state(Arc::clone(files)),
            None => builder,
        }
    }

    /// Ends this connection's run: what the executor kept for it is freed.
    pub(super) async fn finish(&self) {
        self.executor.finish_run(&self.context()).await;
    }

    /// Whether the session's logging level lets info messages through.
    fn takes_info_logs(&self) -> bool {
        self.log_level.takes_info()
    }

    /// Whether the client behind `context` is offered `ask_question`.
    fn offers_questions(
        &self,
        registry: &ToolRegistry,
        context: &RequestContext<RoleServer>,
    ) -> bool {
        // A stateless client's list is the same for every request with the
        // same authorization, so it is listed whatever the request's
        // capabilities say (a call from a client that cannot elicit is
        // told so).
        self.options.questions
            && (is_stateless(context) || questions::can_elicit(context))
            && registry
                .resolve(iris_runtime::question::ASK_QUESTION)
                .is_none()
    }
}

/// A connection's call context for one registry snapshot.
struct FixedContext {
    registry: Arc<ToolRegistry>,
    cx: ToolContext,
}

/// Tells the client each time the served registry changes (an MCP
/// server's tools behind it refreshed, tools added), until the session
/// ends or the client cannot be told.
fn announce_changes(
    registry: &iris_runtime::SharedRegistry,
    peer: rmcp::Peer<RoleServer>,
    ended: CancellationToken,
) {
    let mut changes = registry.subscribe();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = ended.cancelled() => return,
                next = changes.changed() => if next.is_err() { return },
            }
            if let Err(error) = peer.notify_tool_list_changed().await {
                tracing::debug!(%error, "the client could not be told that the tools changed");
                return;
            }
        }
    });
}

/// The protocol revisions served: the current one, stateless, and the two
/// before it, with sessions.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

/// How long a client may keep a `tools/list` answer: the catalog changes
/// when an MCP server behind the gateway changes its tools, which a
/// stateless client is not told of.
const LIST_FRESH_FOR_MS: u64 = 30_000;

/// Whether `context`'s request is of a stateless revision (2026-07-28 on):
/// no session, so the person is asked through input requests.
fn is_stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| !version.has_initialize())
}

/// Largest artifact `resources/read` returns whole; past it, the client is
/// told to page it with `read_file`.
pub const MAX_RESOURCE_BYTES: u64 = 32 * 1024 * 1024;

/// The contents of the artifact behind `uri` (a handle such as
/// `artifact://…` that a preview named): text when it is UTF-8, base64
/// otherwise.
fn read_artifact(
    store: &iris_runtime::ArtifactStore,
    uri: &str,
) -> Result<ResourceContents, ErrorData> {
    use std::io::Read as _;
    if !iris_runtime::artifacts::is_handle(uri) {
        return Err(ErrorData::resource_not_found(
            format!(
                "`{uri}` is not a resource of this server; it serves the artifacts (`artifact://…`) its results name"
            ),
            Some(json!({"uri": uri})),
        ));
    }
    let file = store.open(uri).map_err(|error| {
        ErrorData::resource_not_found(error.to_string(), Some(json!({"uri": uri})))
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_RESOURCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| {
            ErrorData::internal_error(format!("`{uri}` could not be read: {error}"), None)
        })?;
    if bytes.len() as u64 > MAX_RESOURCE_BYTES {
        return Err(ErrorData::invalid_params(
            format!(
                "`{uri}` is larger than {MAX_RESOURCE_BYTES} bytes; page it with the `read_file` tool instead"
            ),
            None,
        ));
    }
    Ok(match String::from_utf8(bytes) {
        Ok(text) => ResourceContents::text(text, uri),
        Err(not_text) => {
            use base64::Engine as _;
            let blob = base64::engine::general_purpose::STANDARD.encode(not_text.as_bytes());
            ResourceContents::blob(blob, uri)
        }
    })
}

/// The MCP listing of one Iris tool.
fn listing(definition: &ToolDefinition) -> mcp::Tool {
    let mut schema = match definition.input_schema() {
        Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    formats::standard(&mut schema);
    let caps = definition.capabilities();
    let mut annotations = ToolAnnotations::new()
        .read_only(caps.is_read_only())
        .open_world(caps.contains(Capability::Network));
    if caps.is_read_only() {
        annotations = annotations.destructive(false).idempotent(true);
    }
    let mut tool = mcp::Tool::new(
        definition.name().to_string(),
        definition.description().to_owned(),
        schema,
    )
    .with_annotations(annotations);
    if let Some(output) = definition.output_schema() {
        let mut output = crate::content::object_output_schema(output);
        formats::standard(&mut output);
        tool = tool.with_raw_output_schema(Arc::new(output));
    }
    tool
}

impl ServerHandler for McpConnection {
    fn get_info(&self) -> ServerConfig {
        // Resources: the artifacts that previews name, read by handle.
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources();
        #[allow(
            deprecated,
            reason = "logging is part of the 2025 revisions this server still serves (deprecated from 2026-07-28 on)"
        )]
        let capabilities = capabilities.enable_logging().build();
        let mut config = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.options.name.clone(),
            self.options.version.clone(),
        ));
        if let Some(instructions) = &self.options.instructions {
            config = config.with_instructions(instructions.clone());
        }
        config
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &mcp::SubscriptionFilter,
    ) -> Option<mcp::SubscriptionFilter> {
        Some(listen::offered())
    }

    async fn listen(
        &self,
        subscription: rmcp::service::SubscriptionContext,
    ) -> Result<(), ErrorData> {
        listen::listen(self.executor.shared_registry(), &self.ended, subscription).await
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        announce_changes(
            self.executor.shared_registry(),
            context.peer,
            self.ended.clone(),
        );
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor.parse::<usize>().map_err(|_| {
                ErrorData::invalid_params(
                    format!("`{cursor}` is not a cursor this server gave"),
                    None,
                )
            })?,
        };
        let page_size = self.options.page_size.max(1);
        let registry = self.executor.registry();
        let principal = principal_of(&context);
        let mut page: Vec<mcp::Tool> = self
            .visible(&registry, principal.as_ref())
            .skip(start)
            .take(page_size + 1)
            .map(listing)
            .collect();
        let more = page.len() > page_size;
        page.truncate(page_size);
        if !more && self.offers_questions(&registry, &context) {
            page.push(questions::listing());
        }
        if !more && let Some(tool) = self.skills_listing(&registry) {
            page.push(tool);
        }
        let mut result = ListToolsResult::with_all_items(page);
        if more {
            result.next_cursor = Some((start + page_size).to_string());
        }
        // The same for every request with the same authorization: shared
        // caches may keep it unless it was filtered for the caller.
        result.ttl_ms = Some(LIST_FRESH_FOR_MS);
        result.cache_scope = Some(if self.shared.gate.is_some() {
            CacheScope::Private
        } else {
            CacheScope::Public
        });
        Ok(result)
    }

    #[allow(
        deprecated,
        reason = "logging is part of the 2025 revisions this server still serves (deprecated from 2026-07-28 on)"
    )]
    async fn set_level(
        &self,
        request: mcp::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // What the session's calls say while they run is sent as log
        // messages at `info` from now on, when the level lets it through.
        self.log_level.set(request.level);
        Ok(())
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(SUPPORTED_PROTOCOL_VERSIONS)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<mcp::ListResourcesResult, ErrorData> {
        // The artifacts are named by the results that made them, never
        // listed; the skills' files are.
        Ok(mcp::ListResourcesResult::with_all_items(
            self.skill_resources(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        use iris_runtime::artifacts::scope;
        if let Some(read) = self.read_skill_resource(&request.uri) {
            return read.map(|contents| {
                ReadResourceResponse::Complete(ReadResourceResult::new(vec![contents]))
            });
        }
        let ledger = self.executor.ledger();
        scope::scope_run(ledger, &self.run_id);
        if !scope::may_open(ledger, &self.run_id, &request.uri) {
            return Err(ErrorData::resource_not_found(
                format!(
                    "`{}` was not named by a result of this session; a session reads only the artifacts its own calls produced",
                    iris_runtime::__wings::shorten(&request.uri)
                ),
                // The URI as asked (SEP-2164): the caller's own words back.
                Some(json!({"uri": request.uri})),
            ));
        }
        let store = self.executor.artifact_store(&self.context());
        let contents = read_artifact(&store, &request.uri)?;
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            vec![contents],
        )))
    }

    fn get_tool(&self, name: &str) -> Option<mcp::Tool> {
        // Looked up by the MCP service to check a call's structured
        // output, after the call was let through.
        self.listed(&self.executor.registry())
            .find(|definition| definition.answers_to(name))
            .map(listing)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await
    }
}

#[cfg(test)]
mod tests {
    use iris_runtime::__wings::for_person;

    /// A call's arguments as a person is asked about them (finding: the
    /// text was unbounded and bidirectional controls passed raw, so a
    /// person could be shown something other than what runs).
    #[test]
    fn a_person_sees_bounded_text_with_hidden_characters_escaped() {
        let reversed = "{\"path\":\"notes\u{202E}txt.exe\"}";
        assert_eq!(
            for_person(reversed, 100),
            "{\"path\":\"notes\\u{202e}txt.exe\"}"
        );
        assert_eq!(for_person("a\u{200B}b\nc", 100), "a\\u{200b}b\\u{a}c");
        let huge = "x".repeat(1_000_000);
        let shown = for_person(&huge, 2_000);
        assert!(
            shown.ends_with("… (998000 more characters not shown)"),
            "{}",
            &shown[1_990..]
        );
        assert!(shown.chars().count() < 2_100);
    }
}
