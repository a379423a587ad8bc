//! The client role: an MCP server's catalog as Iris tools. A server is
//! configured ([`McpServerConfig`]: its transport, prefix, filters,
//! exposure and timeouts), connected to ([`McpClient::connect`]) and its
//! tools registered like native ones; a server behind OAuth is reached
//! with this client's own credentials ([`UpstreamOAuth`]) or a person's
//! sign-in ([`UpstreamLogin`], done once with [`login`] and kept in a
//! [`TokenCache`]).
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | `McpClient`, its catalog report and stats |
//! | `connection.rs` | the session: starting the server, reconnecting, routing its requests back |
//! | `listing.rs` | every page of `tools/list` |
//! | `names.rs` | model-facing names made from wire names |
//! | `remote_tool.rs` | one server tool as an Iris tool |
//! | `oauth/` | upstream OAuth: client credentials, a person's sign-in, the token cache |
//! | `../config.rs` | `McpServerConfig` and the settings it holds |

mod connection;
mod listing;
mod names;
mod oauth;
mod parked;
mod remote_tool;
mod stateless_call;

pub use crate::config::{McpExposure, McpServerConfig, McpTransport, UpstreamLogin, UpstreamOAuth};
pub use crate::sampling::SamplingModel;
pub use oauth::{SignedIn, TokenCache, TokenCacheError, login};

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};

use iris_core::{DynTool, Exposure, ToolDefinition, ToolName, ToolOrigin};
use serde_json::Value;

use super::McpError;
use connection::{Connection, Session};
use iris_runtime::{SharedRegistry, ToolRegistry};
use listing::list_all;
use names::model_facing;
use remote_tool::{Described, RemoteTool, capabilities};

/// What connecting made of a server's catalog.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpCatalogReport {
    /// Tools whose model-facing name is not `prefix__wire_name` as it
    /// stands (invalid characters, or too long).
    pub renamed: Vec<McpRenamed>,
    /// Tools left out, with why (filtered out by `include`/`exclude`,
    /// or unusable as sent).
    pub skipped: Vec<McpSkipped>,
    /// Other things worth knowing (a description cut, pages stopped).
    pub notes: Vec<String>,
}

/// One tool under a changed model-facing name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpRenamed {
    /// The name on the server.
    pub wire_name: String,
    /// The name the model sees.
    pub name: String,
}

/// One tool left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpSkipped {
    /// The name on the server.
    pub wire_name: String,
    /// Why.
    pub reason: String,
}

/// Counts of a server's calls, readable while calls run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpStats {
    /// Calls sent (or attempted).
    pub calls: u64,
    /// Calls that ended in an error result.
    pub failures: u64,
    /// Sessions started again after the server went away.
    pub reconnects: u64,
    /// How the server's last process ended, when one did.
    pub last_exit: Option<String>,
}

/// A connected MCP server and its tools, ready to register.
pub struct McpClient {
    connection: Arc<Connection>,
    /// Shared with the tasks that keep registries current, which refresh
    /// it when the server's tools change.
    catalog: Arc<Mutex<Catalog>>,
}

/// The server's tools as last listed, and what listing made of them.
struct Catalog {
    tools: Vec<Arc<RemoteTool>>,
    report: McpCatalogReport,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.connection.name())
            .field("tools", &self.catalog().tools.len())
            .finish_non_exhaustive()
    }
}

impl McpClient {
    /// Longest description of a server's tool kept; a longer one is cut
    /// and reported.
    pub const MAX_DESCRIPTION_CHARS: usize = 16 * 1024;

    /// Starts (or reaches) the server, initializes the session within its
    /// startup timeout, and lists its whole catalog.
    ///
    /// # Errors
    /// [`McpError`] when the server cannot be started or reached, does not
    /// finish `initialize` in time, or its catalog cannot be listed.
    pub async fn connect(config: McpServerConfig) -> Result<Self, McpError> {
        Self::listed(Connection::open(config).await?).await
    }

    /// The client of `connection`, once its whole catalog is listed.
    async fn listed(connection: Arc<Connection>) -> Result<Self, McpError> {
        let session = connection.current().ok_or_else(|| McpError::Unavailable {
            server: connection.name().to_owned(),
            message: "it went away before its tools were listed".to_owned(),
        })?;
        let (tools, report) = catalog(&connection, &session).await?;
        Ok(Self {
            connection,
            catalog: Arc::new(Mutex::new(Catalog { tools, report })),
        })
    }

    /// As [`McpClient::connect`], with a server in this process on the
    /// other ends of `read` and `write` (a `tokio::io::duplex` pair, say):
    /// for tests, and for hosts that embed a server. `config`'s transport is
    /// not used (its name, prefix and the rest are); the session is not
    /// started again once it ends.
    ///
    /// # Errors
    /// [`McpError`] when `initialize` does not finish within the startup
    /// timeout, or the catalog cannot be listed.
    pub async fn connect_over<R, W>(
        config: McpServerConfig,
        read: R,
        write: W,
    ) -> Result<Self, McpError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        Self::listed(Connection::open_over(config, read, write).await?).await
    }

    fn catalog(&self) -> std::sync::MutexGuard<'_, Catalog> {
        self.catalog.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The server's configured name.
    #[must_use]
    pub fn name(&self) -> &str {
        self.connection.name()
    }

    /// What listing made of the catalog: at connect, or at the latest
    /// refresh of a registry this client keeps current
    /// ([`McpClient::keep_current`]).
    #[must_use]
    pub fn report(&self) -> McpCatalogReport {
        self.catalog().report.clone()
    }

    /// The definitions of the server's tools, as the model sees them (as
    /// of connecting, or of the latest refresh).
    pub fn definitions(&self) -> impl Iterator<Item = ToolDefinition> + use<> {
        let definitions: Vec<ToolDefinition> = self
            .catalog()
            .tools
            .iter()
            .map(|tool| tool.definition.clone())
            .collect();
        definitions.into_iter()
    }

    /// The process id of a stdio server's current process (`None` over
    /// HTTP, or while no session is live).
    #[must_use]
    pub fn process_id(&self) -> Option<u32> {
        self.connection.current()?.process_id()
    }

    /// The server's tools as Iris tools, for a registry built elsewhere
    /// (an agent file's, or a host's own).
    #[must_use]
    pub fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.catalog()
            .tools
            .iter()
            .map(|tool| Arc::clone(tool) as Arc<dyn DynTool>)
            .collect()
    }

    /// The server's calls so far.
    #[must_use]
    pub fn stats(&self) -> McpStats {
        let counters = &self.connection.counters;
        McpStats {
            calls: counters.calls.load(Ordering::Relaxed),
            failures: counters.failures.load(Ordering::Relaxed),
            reconnects: counters.reconnects.load(Ordering::Relaxed),
            last_exit: self.connection.last_exit(),
        }
    }

    /// Registers every tool of the server in `registry`; calls then run
    /// through the executor like any other tool's.
    ///
    /// # Errors
    /// [`McpError::NameCollision`] naming both tools when a model-facing
    /// name is taken; then none of the server's tools is registered.
    pub fn register_into(&self, registry: &mut ToolRegistry) -> Result<(), McpError> {
        let tools = self.catalog().tools.clone();
        for tool in &tools {
            let name = tool.definition.name();
            if let Some(existing) = registry.resolve(name.as_str()) {
                return Err(McpError::NameCollision {
                    name: name.to_string(),
                    server: self.name().to_owned(),
                    wire_name: tool.wire_name.clone(),
                    existing: describe(existing.as_ref()),
                });
            }
        }
        for tool in &tools {
            let tool: Arc<dyn DynTool> = Arc::clone(tool) as _;
            registry
                .register_dyn(tool)
                .map_err(|error| McpError::Register {
                    server: self.name().to_owned(),
                    source: error,
                })?;
        }
        Ok(())
    }

    /// Keeps this server's tools in `registry` current: each time the
    /// server announces `notifications/tools/list_changed` (or is started
    /// again after it went away), its catalog is listed again and its
    /// tools in `registry` are replaced in one swap. Calls in flight finish
    /// with the tools they started with; the next request sees the new
    /// catalog; a removed tool answers `unknown_tool`; new deferred tools
    /// are found by `tool_search` (built over the same registry).
    ///
    /// Register the tools first ([`McpClient::register_into`] before the
    /// executor is built, or [`McpClient::register_shared`]). The refresh
    /// runs on the Tokio runtime until the registry or the server's tools
    /// are dropped. A new tool whose name is taken is left out and
    /// reported (in [`McpClient::report`] and in the logs); a listing that
    /// fails leaves the tools as they were.
    ///
    /// # Errors
    /// [`McpError::Config`] when called outside a Tokio runtime, which the
    /// refresh runs on.
    pub fn keep_current(&self, registry: &SharedRegistry) -> Result<(), McpError> {
        let runtime = self.runtime()?;
        self.follow(registry, &runtime);
        Ok(())
    }

    /// The Tokio runtime a refresh runs on.
    fn runtime(&self) -> Result<tokio::runtime::Handle, McpError> {
        tokio::runtime::Handle::try_current().map_err(|error| McpError::Config {
            server: self.name().to_owned(),
            message: "keeping its tools current needs a Tokio runtime; call this from async \
                      code (inside `#[tokio::main]` or `Runtime::block_on`)"
                .to_owned(),
            source: Some(Box::new(error)),
        })
    }

    fn follow(&self, registry: &SharedRegistry, runtime: &tokio::runtime::Handle) {
        let connection = Arc::downgrade(&self.connection);
        let catalog = Arc::downgrade(&self.catalog);
        let registry = registry.downgrade();
        let mut changes = self.connection.catalog_changed.subscribe();
        runtime.spawn(async move {
            // Ends when the connection is dropped: its sender closes.
            while changes.changed().await.is_ok() {
                let Some(connection) = connection.upgrade() else {
                    return;
                };
                let Some(shared) = registry.upgrade() else {
                    return;
                };
                match refresh(&connection, &shared).await {
                    Ok(fresh) => {
                        if let Some(catalog) = catalog.upgrade() {
                            *catalog.lock().unwrap_or_else(PoisonError::into_inner) = fresh;
                        }
                    }
                    Err(error) => tracing::warn!(
                        server = %connection.name(), %error,
                        "the MCP server's tools could not be listed again; they stay as they were"
                    ),
                }
            }
        });
    }

    /// Registers every tool of the server in `registry` (in one swap) and
    /// keeps them current ([`McpClient::keep_current`]).
    ///
    /// # Errors
    /// [`McpError::NameCollision`] naming both tools when a model-facing
    /// name is taken; then none of the server's tools is registered.
    /// [`McpError::Config`] outside a Tokio runtime; then neither.
    pub fn register_shared(&self, registry: &SharedRegistry) -> Result<(), McpError> {
        let runtime = self.runtime()?;
        registry.update(|registry| self.register_into(registry))?;
        self.follow(registry, &runtime);
        Ok(())
    }

    /// Ends the session and stops the server's process (once no call is
    /// in flight); a later call of one of its tools starts it again.
    pub fn close(&self) {
        if let Some(session) = self.connection.current() {
            self.connection.lost(&session);
        }
    }
}

/// Says which tool holds a name, for a collision's error.
fn describe(tool: &dyn DynTool) -> String {
    match tool.definition_dyn().origin() {
        ToolOrigin::Mcp { server, wire_name } => {
            format!("`{wire_name}` of MCP server `{server}`")
        }
        _ => format!("the Rust tool `{}`", tool.rust_item()),
    }
}

/// Lists the catalog again and swaps the server's tools in `registry`
/// for the new ones.
async fn refresh(
    connection: &Arc<Connection>,
    registry: &SharedRegistry,
) -> Result<Catalog, McpError> {
    let (session, _) = connection.session().await?;
    let (tools, mut report) = catalog(connection, &session).await?;
    let server = connection.name();
    let (added, removed) = registry
        .update(|registry| {
            let removed = registry.unregister_where(|tool| is_from(tool.as_ref(), server));
            let mut added = Vec::with_capacity(tools.len());
            for tool in &tools {
                match registry.register_dyn(Arc::clone(tool) as Arc<dyn DynTool>) {
                    Ok(_) => added.push(Arc::clone(tool)),
                    Err(error) => report.skipped.push(McpSkipped {
                        wire_name: tool.wire_name.clone(),
                        reason: format!("its name is taken: {error}"),
                    }),
                }
            }
            Ok::<_, std::convert::Infallible>((added, removed.len()))
        })
        .unwrap_or_else(|never| match never {});
    tracing::info!(
        server = %server,
        tools = added.len(),
        before = removed,
        "the MCP server's tools were listed again"
    );
    Ok(Catalog {
        tools: added,
        report,
    })
}

/// Whether `tool` is one of MCP server `server`'s.
fn is_from(tool: &dyn DynTool, server: &str) -> bool {
    matches!(tool.definition_dyn().origin(), ToolOrigin::Mcp { server: s, .. } if s == server)
}

/// Lists the whole catalog (every page) and makes each wanted tool an Iris
/// tool.
async fn catalog(
    connection: &Arc<Connection>,
    session: &Session,
) -> Result<(Vec<Arc<RemoteTool>>, McpCatalogReport), McpError> {
    let config = &connection.config;
    let server = config.name.as_str();
    let mut report = McpCatalogReport::default();
    let listed = list_all(&session.service, config, &mut report).await?;
    let wanted: Vec<_> = listed
        .into_iter()
        .filter(|tool| {
            let keep = config.wants(&tool.name);
            if !keep {
                report.skipped.push(McpSkipped {
                    wire_name: tool.name.to_string(),
                    reason: "left out by `include`/`exclude`".to_owned(),
                });
            }
            keep
        })
        .collect();
    let exposure = *connection.exposure.get_or_init(|| match config.exposure {
        McpExposure::Deferred => Exposure::Deferred,
        McpExposure::Auto if wanted.len() > McpExposure::AUTO_DEFER_ABOVE => Exposure::Deferred,
        McpExposure::Eager | McpExposure::Auto => Exposure::Eager,
    });
    let mut tools = Vec::with_capacity(wanted.len());
    let mut names = HashSet::new();
    for tool in wanted {
        let wire_name = tool.name.to_string();
        if !names.insert(wire_name.clone()) {
            report.skipped.push(McpSkipped {
                wire_name,
                reason: "the server listed this name twice; the first is kept".to_owned(),
            });
            continue;
        }
        let (name, renamed) = model_facing(config.prefix(), &wire_name);
        let Ok(name) = ToolName::new(name.clone()) else {
            report.skipped.push(McpSkipped {
                wire_name,
                reason: format!("no valid model-facing name could be made (`{name}`)"),
            });
            continue;
        };
        if renamed {
            report.renamed.push(McpRenamed {
                wire_name: wire_name.clone(),
                name: name.to_string(),
            });
        }
        let description = description(&tool, server, &wire_name, &mut report);
        let input_schema = Value::Object((*tool.input_schema).clone());
        let validator = match jsonschema::validator_for(&input_schema) {
            Ok(validator) => Some(validator),
            Err(error) => {
                report.skipped.push(McpSkipped {
                    wire_name,
                    reason: format!("its input schema is not a usable JSON Schema: {error}"),
                });
                continue;
            }
        };
        let definition = Described {
            name,
            server,
            wire_name: &wire_name,
            description,
            input_schema,
            capabilities: capabilities(config.trust_annotations, tool.annotations.as_ref()),
            exposure,
        }
        .build();
        match definition {
            Ok(definition) => tools.push(Arc::new(RemoteTool::new(
                definition,
                wire_name,
                validator,
                Arc::clone(connection),
            ))),
            Err(error) => report.skipped.push(McpSkipped {
                wire_name,
                reason: error.to_string(),
            }),
        }
    }
    Ok((tools, report))
}

/// The description as sent, cut when it is past the limit, or one made
/// up when the server sent none.
fn description(
    tool: &rmcp::model::Tool,
    server: &str,
    wire_name: &str,
    report: &mut McpCatalogReport,
) -> String {
    let sent = tool
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .or(tool.title.as_deref().filter(|t| !t.trim().is_empty()));
    let Some(sent) = sent else {
        return format!("`{wire_name}` of MCP server `{server}` (the server gave no description)");
    };
    if sent.chars().count() <= McpClient::MAX_DESCRIPTION_CHARS {
        return sent.to_owned();
    }
    report.notes.push(format!(
        "the description of `{wire_name}` was cut to {} of its {} characters",
        McpClient::MAX_DESCRIPTION_CHARS,
        sent.chars().count()
    ));
    iris_core::text::prefix(sent, McpClient::MAX_DESCRIPTION_CHARS).to_owned()
}
