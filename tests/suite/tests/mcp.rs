//! MCP against real peers: the reference servers from npm, the official
//! Python SDK's client, and servers written to misbehave. The peers are
//! installed by `tests/mcp-peers/install.sh` (run here when missing), never
//! skipped.
#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::unwrap_used,
    reason = "tests fail loudly (unwrap, expect, panic), and tools written for them take what `#[tool]` hands them"
)]
#[path = "mcp/peers.rs"]
mod peers;

#[path = "mcp/assembly.rs"]
mod assembly;

#[path = "mcp/client_everything.rs"]
mod client_everything;

#[path = "mcp/client_filesystem.rs"]
mod client_filesystem;

#[path = "mcp/client_iris.rs"]
mod client_iris;

#[path = "mcp/catalog_changes.rs"]
mod catalog_changes;

#[path = "mcp/server_python.rs"]
mod server_python;

#[path = "mcp/inspector.rs"]
mod inspector;

#[path = "mcp/hostile.rs"]
mod hostile;

#[path = "mcp/http_server.rs"]
mod http_server;

#[path = "mcp/questions.rs"]
mod questions;

#[path = "mcp/oidc.rs"]
mod oidc;

#[path = "mcp/gateway.rs"]
mod gateway;

#[path = "mcp/gateway_floods.rs"]
mod gateway_floods;

#[path = "mcp/relay.rs"]
mod relay;

#[path = "mcp/upstream_oauth.rs"]
mod upstream_oauth;

#[path = "mcp/skills_served.rs"]
mod skills_served;

#[path = "mcp/protocols.rs"]
mod protocols;

#[path = "mcp/conformance_suite.rs"]
mod conformance_suite;

#[path = "mcp/upstream_rounds.rs"]
mod upstream_rounds;
