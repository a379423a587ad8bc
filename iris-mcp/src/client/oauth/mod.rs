//! Upstream MCP servers that need OAuth: this gateway's own client
//! credentials, or a person's sign-in done once with `iris login` and kept
//! in a token cache. Either way the server's protected resource metadata
//! names its authorization server, and every request carries a token made
//! there for that server; never a token a caller of the gateway presented.

mod client_credentials;
mod sign_in;
mod token_cache;

pub(super) use client_credentials::client_credentials_transport;
pub(super) use sign_in::signed_in_transport;
pub use sign_in::{SignedIn, login};
pub use token_cache::{TokenCache, TokenCacheError};

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{AuthClient, AuthorizationManager};

use crate::McpError;

/// Why a transport cannot have both ways of getting tokens.
pub(super) const OAUTH_AND_LOGIN: &str = "its transport has both `oauth` (this gateway's own credentials) and `login` (a person's sign-in): keep one";

/// The transport of a server whose requests carry OAuth tokens.
pub(super) type AuthorizedTransport = StreamableHttpClientTransport<AuthClient<reqwest::Client>>;

/// A failure on the way to a token, naming the step and keeping `error`
/// as its source.
fn failed(
    server: &str,
    step: &str,
    error: impl std::error::Error + Send + Sync + 'static,
) -> McpError {
    McpError::Startup {
        server: server.to_owned(),
        message: format!("OAuth with the server's authorization server failed ({step}): {error}"),
        source: Some(Box::new(error)),
    }
}

/// The manager for the server at `url`, with the metadata of the
/// authorization server its protected resource metadata names, and that
/// server's issuer.
async fn discover(server: &str, url: &str) -> Result<(AuthorizationManager, String), McpError> {
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| failed(server, "the server's address", e))?;
    let resolved = manager
        .resolve_metadata()
        .await
        .map_err(|e| failed(server, "finding its authorization server", e))?;
    let issuer = resolved
        .metadata
        .issuer
        .clone()
        .unwrap_or_else(|| resolved.metadata.authorization_endpoint.clone());
    manager.set_metadata(resolved.metadata);
    Ok((manager, issuer))
}

/// The streamable HTTP transport whose every request carries the
/// manager's token (refreshed when it expires).
fn authorized_transport(
    server: &str,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    manager: AuthorizationManager,
) -> Result<AuthorizedTransport, McpError> {
    iris_core::tls::install_default_provider();
    let client = reqwest::Client::builder()
        .build()
        .map_err(|e| failed(server, "an HTTP client", e))?;
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            url.to_owned(),
        )
        .custom_headers(crate::config::custom_headers(server, headers)?);
    Ok(StreamableHttpClientTransport::with_client(
        AuthClient::new(client, manager),
        config,
    ))
}
