//! Who may call the gateway and what each caller may do: an OAuth 2.1
//! resource server in front of the MCP endpoint.
//!
//! Every request carries a bearer token in its `Authorization` header
//! (never in the URL; a session or handle is never authentication). A JWT
//! is checked against its issuer's published keys with the algorithm
//! pinned, and its `iss`, `exp`, `nbf` and `aud` (this server's public URI,
//! which cannot be switched off); an opaque token through the issuer's
//! introspection endpoint. A caller without a good token gets 401 with a
//! challenge pointing at the protected resource metadata (RFC 9728).
//!
//! Rules grant tools by name, capability or MCP server to the callers that
//! hold their scopes and claims; anything no rule grants is neither listed
//! nor callable, and a call a rule would grant with more scopes gets 403
//! `insufficient_scope` naming every scope it needs. The executor's
//! permission policy still applies after the rules (both must allow; ask
//! still asks). Everything a caller holds (sessions, runs, approvals,
//! artifacts, disclosed tools) is bound to its principal, and every limit
//! is per principal. The inbound token is never forwarded and never
//! logged.

mod audit;
mod config;
mod gate;
mod keys;
mod principal;
mod rules;
mod strangers;
mod verify;

pub(crate) use audit::{AuditEntry, PeerAddress, address_in, millis};
pub use config::{
    AccessRule, AuditConfig, GatewayAuth, Introspection, PrincipalLimits, TokenIssuer,
};
pub(crate) use gate::{Gate, Refusal, SESSION_HEADER};
pub use principal::Principal;
pub(crate) use rules::Grant;
