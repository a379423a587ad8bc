//! The one error of this crate, shared by the client, the server and the
//! gateway.
//!
//! A failure that comes from another error keeps it as its
//! [source](std::error::Error::source) (a process that could not be
//! spawned keeps its `std::io::Error`, a session that did not start keeps
//! rmcp's error), while the message still says what happened and what to
//! do, in words a person reads without walking the chain.

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
        /// The error that showed it (a variable that could not be read, a
        /// header the HTTP client refused), when one did.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
    /// The server could not be started or did not initialize.
    #[error("MCP server `{server}` could not be started: {message}")]
    Startup {
        /// The server's name.
        server: String,
        /// What happened.
        message: String,
        /// The error it came from (the process could not be spawned,
        /// `initialize` failed, the authorization server refused), when
        /// there is one; none when the server was only too slow.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
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
        /// The error `tools/list` failed with, when it did not only come
        /// back late or malformed.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
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
        /// The error it came from (the address could not be bound, the
        /// session did not start), when there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
    /// The registry refused a tool.
    #[error("MCP server `{server}`: a tool could not be registered: {source}")]
    Register {
        /// The server's name.
        server: String,
        /// The registry's reason.
        #[source]
        source: iris_runtime::RuntimeError,
    },
}

iris_runtime::__wings::debug_as_display!(McpError);
