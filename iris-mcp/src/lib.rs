//! MCP (feature `mcp`): the tools of MCP servers as Iris tools, on the same
//! path as native ones, and Iris tools served over MCP.
//!
//! Three roles, a module each; [`McpError`] is shared by all of them.
//!
//! A [`client`] connects to one server ([`client::McpClient::connect`]),
//! lists its whole catalog and makes each tool an Iris tool named
//! `prefix__wire_name` (made valid for every provider; renames are
//! reported). Calls go through
//! the executor like any other (permissions, hooks, middleware, artifacts,
//! observers); arguments are checked against the server's input schema
//! before anything is sent, and calls always go out under the wire name.
//!
//! A [`server`] ([`server::serve`](fn@server::serve)) hands the tools of
//! an executor to any MCP host: calls run through the executor, and a call
//! the policy asks about is put to a person through the client's
//! elicitation, or refused when it has none; it never runs silently. Served over HTTP, the
//! [`gateway`] says who may call and what each caller may do (an OAuth 2.1
//! resource server in front of the server).
//!
//! Annotations are hints from a server that may not be trusted: unless
//! `trust_annotations` is set, every remote tool is `write` + `network`, so
//! the default policy asks before running it.

pub mod client;
mod config;
mod content;
mod elicitation;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod gateway;
mod sampling;
pub mod server;
mod upstream_input;

pub use error::McpError;
