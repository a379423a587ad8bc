//! The server role: an Iris executor served over MCP, on standard input
//! and output ([`serve`](fn@serve)), over streamable HTTP
//! ([`McpHttpServer`]) or any transport rmcp takes ([`serve_connection`]),
//! as [`ServeOptions`] say; who may call over HTTP is the
//! [`gateway`](crate::gateway)'s.
//!
//! `tools/list` comes from the executor's registry (with annotations from
//! capabilities, input and output schemas, pages), and `tools/call` goes
//! through the executor, so permissions, hooks, middleware, artifacts and
//! observers all apply. A call the policy asks about is put
//! to a person through the client's elicitation when it has one, and
//! refused with a message saying so when it has not; it never runs
//! silently.
//!
//! | file | what it holds |
//! |---|---|
//! | `options.rs` | `ServeOptions`, `ServedTools` and the defaults |
//! | `connection.rs` | `McpConnection`: one client's connection, its session, run and call contexts |
//! | `handler.rs` | the requests a connection answers, and the protocol revisions served |
//! | `call.rs`, `rounds.rs`, `approval.rs`, `questions.rs` | `tools/call`: the executor, progress, approvals and questions put to the person |
//! | `stateless.rs`, `listen.rs` | the 2026-07-28 revision: input requests with sealed state, `subscriptions/listen` |
//! | `formats.rs` | schema formats MCP clients understand |
//! | `resources.rs` | artifacts read as resources |
//! | `skills.rs` | skills offered and their files served as resources |
//! | `relay.rs` | calls relayed to MCP servers behind a gateway |
//! | `auth/` | the gateway's OAuth resource server: tokens, rules, limits, audit (public as `crate::gateway`) |
//! | `http.rs`, `serve.rs`, `lines.rs` | streamable HTTP, stdio and the line transport |

mod approval;
pub(crate) mod auth;
mod call;
mod call_params;
mod connection;
mod control;
mod formats;
mod handler;
pub(crate) mod http;
pub(crate) mod lines;
mod listen;
mod options;
mod places;
mod questions;
mod relay;
mod resources;
pub(crate) mod rounds;
pub(crate) mod serve;
mod skills;
mod stateless;

pub use connection::McpConnection;
pub use http::McpHttpServer;
pub use options::{ServeOptions, ServedTools};
pub use serve::{ServeTransport, serve, serve_connection, serve_with};

// Shared by the request handlers of this folder.
use connection::announce_changes;
use handler::is_stateless;
use resources::read_artifact;
