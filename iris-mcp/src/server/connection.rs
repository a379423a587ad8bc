//! One client's connection: the executor, options and session it serves
//! with, the run its calls belong to, and the contexts its calls get.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use iris_core::{Exposure, RunId, ToolContext, ToolDefinition};
use rmcp::service::{RequestContext, RoleServer};

use arc_swap::ArcSwapOption;
use iris_runtime::ledger::RunLedger;
use tokio_util::sync::CancellationToken;

use super::auth::{Gate, Grant};
use iris_runtime::{ProgressListener, ToolExecutor, ToolRegistry};

use super::auth::Principal;
use super::{ServeOptions, ServedTools, questions, relay, rounds};

/// The MCP face of an executor: one per connection.
#[derive(Clone)]
pub struct McpConnection {
    pub(super) executor: Arc<ToolExecutor>,
    pub(super) options: Arc<ServeOptions>,
    /// The run every call of this connection belongs to.
    pub(super) run_id: RunId,
    pub(super) next_call: Arc<AtomicU64>,
    /// The context of every call when the offered set does not depend on
    /// searches (every tool listed, or no deferred tool): built once per
    /// registry snapshot, so a refreshed registry offers its new tools.
    pub(super) fixed_context: Arc<ArcSwapOption<FixedContext>>,
    /// The same behind the gateway's rules, for the principal of the
    /// session's last call (one checked token): what the rules grant it,
    /// judged once per registry snapshot and token rather than on every
    /// call.
    granted_context: Arc<ArcSwapOption<(Principal, FixedContext)>>,
    /// Ends the connection's run when the last clone of this connection's
    /// server is dropped (its session ended).
    session: Arc<Session>,
    /// Who the connection serves, behind a gate: the principal of its one
    /// request, or of the session's opening.
    principal: Option<Principal>,
    /// Cancelled when the session ends: stops telling the client of
    /// changes.
    pub(super) ended: CancellationToken,
    /// What every connection shares.
    pub(super) shared: Arc<Shared>,
    /// Whether it serves one request outside any session (a stateless
    /// client's): deferred tools are then called by the name `tool_search`
    /// gave, since no disclosure outlives the request.
    pub(super) sessionless: bool,
    /// The logging level the session set (`logging/setLevel`); no log
    /// messages until it sets one.
    pub(super) log_level: Arc<relay::SessionLogs>,
    /// The skills this session activated.
    pub(super) active_skills: Arc<std::sync::Mutex<Vec<String>>>,
}

/// What the connections of one server share: one search index and one file
/// service for all of them, each keeping its state per run (a connection's
/// run) in the executor's ledger.
pub(super) struct Shared {
    /// `tool_search` and what it disclosed to each connection, when
    /// deferred tools are served behind it.
    pub(super) discovery: Option<Arc<iris_tools::discovery::Discovery>>,
    /// What the file tools keep between calls (reads before edits).
    pub(super) files: Option<Arc<iris_tools::fs::FileService>>,
    /// Connections alive.
    pub(super) live: AtomicUsize,
    /// Who may call, when the server is behind authentication.
    pub(super) gate: Option<Arc<Gate>>,
    /// The sealing key of stateless clients' input requests (2026-07-28).
    pub(super) rounds: Option<rounds::Rounds>,
    /// Call ids of the principals' runs, which many requests share.
    pub(super) principal_calls: Arc<AtomicU64>,
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
    /// The principal whose session this is, counted by the gate while it
    /// lives.
    held_by: Option<Arc<str>>,
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
        if let (Some(gate), Some(key)) = (&self.shared.gate, &self.held_by) {
            gate.session_closed(key);
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
pub(super) enum Served<'a> {
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
            Ok(files) => {
                let skills = options.skills.iter().flat_map(iris_skills::Skills::iter);
                for skill in skills {
                    files.hide(&skill.root, format!("the folder of skill `{}`", skill.name));
                    if let Some(root) = skill.root.parent() {
                        files.protect(root, "a folder skills are found in");
                    }
                }
                for (path, why) in &options.hidden {
                    files.hide(path, why.clone());
                }
                Some(Arc::new(files.with_ledger(Arc::clone(&ledger))))
            }
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
    pub(super) fn connection(
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
            held_by: None,
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
            granted_context: Arc::new(ArcSwapOption::empty()),
            session,
            principal: None,
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
    pub(crate) fn for_one_request(&self, principal: Option<&Principal>) -> Self {
        let mut connection = Self::connection(
            Arc::clone(&self.executor),
            Arc::clone(&self.options),
            Arc::clone(&self.shared),
            principal.map_or(Served::Request, |p| Served::Principal(p.key().as_str())),
        );
        connection.principal = principal.cloned();
        connection
    }

    /// Whether [`ServeOptions::max_sessions`] are served already.
    pub(crate) fn is_full(&self) -> bool {
        // This server itself (the template sessions are cloned from) is
        // counted too.
        self.shared.live.load(Ordering::SeqCst) > self.options.max_sessions
    }

    /// Another connection, unless [`ServeOptions::max_sessions`] are
    /// served already.
    #[must_use]
    pub fn try_new_connection(&self) -> Option<Self> {
        self.try_new_session_of(None).ok()
    }

    /// Who the connection serves, behind a gate.
    pub(super) fn principal(&self) -> Option<&Principal> {
        self.principal.as_ref()
    }

    /// Sessions alive now.
    pub(crate) fn live_sessions(&self) -> usize {
        // This server itself (the template sessions are cloned from) is
        // counted too.
        self.shared.live.load(Ordering::SeqCst).saturating_sub(1)
    }

    /// A new session for the principal keyed `principal` (behind a gate),
    /// counted against its limit and share at once; or why not.
    pub(crate) fn try_new_session_of(&self, principal: Option<&Principal>) -> Result<Self, String> {
        let max = self.options.max_sessions;
        let held_by = match (&self.shared.gate, principal) {
            (Some(gate), Some(principal)) => {
                let key = principal.key().as_str();
                gate.session_verdict(key, max, self.live_sessions(), true)?;
                Some(Arc::<str>::from(key))
            }
            _ => None,
        };
        let mut made = self.try_new_unheld();
        if let Some(connection) = &mut made
            && let Some(session) = Arc::get_mut(&mut connection.session)
        {
            session.held_by = held_by;
            connection.principal = principal.cloned();
        } else if let (Some(gate), Some(key)) = (&self.shared.gate, &held_by) {
            gate.session_closed(key);
        }
        made.ok_or_else(|| {
            format!(
                "the server holds its maximum of {max} MCP sessions; end one (DELETE its session) or try again later"
            )
        })
    }

    fn try_new_unheld(&self) -> Option<Self> {
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
    pub(super) fn listed<'r>(
        &self,
        registry: &'r ToolRegistry,
    ) -> impl Iterator<Item = &'r ToolDefinition> {
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
    pub(super) fn visible<'r>(
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
            if let Some(kept) = &*self.granted_context.load()
                && kept.0.is(principal)
                && Arc::ptr_eq(&kept.1.registry, &registry)
            {
                return kept.1.cx.clone();
            }
            let offered = self
                .listed(&registry)
                .filter(|d| granted(d))
                .map(|d| d.name().clone());
            let cx = builder.offered(offered).build();
            self.granted_context.store(Some(Arc::new((
                principal.clone(),
                FixedContext {
                    registry: Arc::clone(&registry),
                    cx: cx.clone(),
                },
            ))));
            return cx;
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
    pub(super) fn context_reporting_to(
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
    pub(super) fn offering_builder(
        &self,
        registry: &ToolRegistry,
    ) -> iris_core::ToolContextBuilder {
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

    pub(super) fn context_builder(&self) -> iris_core::ToolContextBuilder {
        let mut builder = ToolContext::builder(self.options.workspace.clone(), self.run_id.clone());
        if self.shared.gate.is_none() {
            // No principal: each session (its own run) is capped alone.
            builder = builder.extension(iris_runtime::__wings::CapWaitingPerRun);
        }
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
    pub(super) fn takes_info_logs(&self) -> bool {
        self.log_level.takes_info()
    }

    /// Whether the client behind `context` is offered `ask_question`.
    pub(super) fn offers_questions(
        &self,
        registry: &ToolRegistry,
        context: &RequestContext<RoleServer>,
    ) -> bool {
        // Only to a client that can put the questions to a person: a
        // stateless one says so with each request, as a session's client
        // did when it began (a client that cannot ask, such as another
        // agent's gateway, would offer its model a tool it cannot use).
        self.options.questions
            && questions::can_elicit(context)
            && registry
                .resolve(iris_runtime::question::ASK_QUESTION)
                .is_none()
    }
}

/// A connection's call context for one registry snapshot.
pub(super) struct FixedContext {
    registry: Arc<ToolRegistry>,
    cx: ToolContext,
}

/// Tells the client each time the served registry changes (an MCP
/// server's tools behind it refreshed, tools added), until the session
/// ends or the client cannot be told.
pub(super) fn announce_changes(
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
