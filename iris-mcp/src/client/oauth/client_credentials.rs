//! This gateway's own credentials at an upstream server's authorization
//! server: the client credentials grant.

use rmcp::transport::auth::ClientCredentialsConfig;

use super::{AuthorizedTransport, authorized_transport, discover, failed};
use crate::McpError;
use crate::config::{UpstreamOAuth, expand_env};

/// The transport of a server reached with client credentials: a token is
/// fetched before the first request and again when it expires.
pub(in crate::client) async fn client_credentials_transport(
    server: &str,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    oauth: &UpstreamOAuth,
) -> Result<AuthorizedTransport, McpError> {
    let credentials = ClientCredentialsConfig::ClientSecret {
        client_id: oauth.client_id.clone(),
        client_secret: expand_env(server, &oauth.client_secret)?,
        scopes: oauth.scopes.clone(),
        resource: Some(oauth.resource.clone().unwrap_or_else(|| url.to_owned())),
    };
    let (mut manager, _issuer) = discover(server, url).await?;
    manager
        .validate_client_credentials_metadata(&credentials)
        .map_err(|e| failed(server, "its metadata", e))?;
    manager
        .configure_client_credentials(&credentials)
        .map_err(|e| failed(server, "the client", e))?;
    manager
        .exchange_client_credentials(&credentials)
        .await
        .map_err(|e| failed(server, "getting a token", e))?;
    authorized_transport(server, url, headers, manager)
}
