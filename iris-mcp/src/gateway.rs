//! The gateway role: who may call an Iris executor served over HTTP and
//! what each caller may do, an OAuth 2.1 resource server in front of the
//! MCP endpoint ([`ServeOptions::auth`](crate::server::ServeOptions::auth)).
//!
//! [`GatewayAuth`] names the token issuers it trusts ([`TokenIssuer`],
//! JWTs checked against published keys or opaque tokens through
//! [`Introspection`]), the [`AccessRule`]s that grant tools to callers by
//! scope and claim, the [`PrincipalLimits`] each caller is held to, and
//! where the [`AuditConfig`] log goes; a call that gets through runs as its
//! [`Principal`]. The code lives in the server's `auth/` folder: the
//! server's HTTP transport is what it guards.

pub use crate::server::auth::{
    AccessRule, AuditConfig, GatewayAuth, Introspection, Principal, PrincipalLimits, TokenIssuer,
};
