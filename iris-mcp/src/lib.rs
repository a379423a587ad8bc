//! MCP (feature `mcp`): the tools of MCP servers as Iris tools, on the same
//! path as native ones, and Iris tools served over MCP.
//!
//! A client connects to one server ([`McpClient::connect`]), lists its whole
//! catalog and makes each tool an Iris tool named `prefix__wire_name`
//! (made valid for every provider; renames are reported). Calls go through
//! the executor like any other (permissions, hooks, middleware, artifacts,
//! observers); arguments are checked against the server's input schema
//! before anything is sent, and calls always go out under the wire name.
//!
//! A server ([`serve`]) hands the tools of an executor to any MCP host:
//! calls run through the executor, and a call the policy asks about is put
//! to a person through the client's elicitation, or refused when it has
//! none; it never runs silently.
//!
//! Annotations are hints from a server that may not be trusted: unless
//! `trust_annotations` is set, every remote tool is `write` + `network`, so
//! the default policy asks before running it.

mod client;
mod config;
mod content;
mod elicitation;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod server;

pub use client::{
    LOGIN_WAIT, McpCatalogReport, McpClient, McpRenamed, McpSkipped, McpStats, SignedIn,
    TOKEN_CACHE_VAR, TokenCache, TokenCacheError, login,
};
pub use config::{
    AUTO_DEFER_ABOVE, DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, McpExposure, McpServerConfig,
    McpTransport, UpstreamLogin, UpstreamOAuth,
};
pub use server::http::McpHttpServer;
pub use server::serve::{ServeTransport, serve, serve_connection, serve_with};
pub use server::{
    AccessRule, AuditConfig, DEFAULT_INTROSPECTION_REMEMBER_SECONDS, GatewayAuth, Introspection,
    Principal, PrincipalLimits, TokenIssuer,
};
pub use server::{
    DEFAULT_APPROVAL_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_SESSIONS, DEFAULT_PAGE_SIZE,
    DEFAULT_REQUEST_TIMEOUT, LOOPBACK_ORIGINS, MAX_RESOURCE_BYTES, McpConnection,
    SUPPORTED_PROTOCOL_VERSIONS, ServeOptions, ServedTools,
};

/// Why an MCP server could not be used.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The configuration cannot work as written.
    #[error("MCP server `{server}`: {message}")]
    Config {
        /// The server's name.
        server: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// The server could not be started or did not initialize.
    #[error("MCP server `{server}` could not be started: {message}")]
    Startup {
        /// The server's name.
        server: String,
        /// What happened.
        message: String,
    },
    /// The server is gone and is not being reconnected yet.
    #[error("MCP server `{server}` is not available: {message}")]
    Unavailable {
        /// The server's name.
        server: String,
        /// What happened and when the next attempt is.
        message: String,
    },
    /// The catalog could not be listed.
    #[error("MCP server `{server}`: its tools could not be listed: {message}")]
    Catalog {
        /// The server's name.
        server: String,
        /// What happened.
        message: String,
    },
    /// A tool's model-facing name is taken by another tool.
    #[error(
        "tool `{name}` (`{wire_name}` of MCP server `{server}`) collides with {existing}; \
         set the server's `prefix` or leave one out with `exclude`"
    )]
    NameCollision {
        /// The contested model-facing name.
        name: String,
        /// The server whose tool wanted it.
        server: String,
        /// That tool's wire name.
        wire_name: String,
        /// The tool already holding it.
        existing: String,
    },
    /// Serving failed.
    #[error("serving over MCP failed: {message}")]
    Serve {
        /// What happened.
        message: String,
    },
    /// The registry refused a tool.
    #[error("MCP server `{server}`: a tool could not be registered: {message}")]
    Register {
        /// The server's name.
        server: String,
        /// The registry's reason.
        message: String,
    },
}

iris_runtime::__wings::debug_as_display!(McpError);
