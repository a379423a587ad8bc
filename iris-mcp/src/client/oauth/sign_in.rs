//! A person's sign-in at an upstream server's authorization server: the
//! authorization-code flow with PKCE, the browser sent back to a loopback
//! address of this machine (RFC 8252), the tokens kept in the token cache
//! and refreshed from there when they expire.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use rmcp::transport::auth::{AuthorizationRequest, AuthorizationSession, OAuthClientConfig};
use tokio::sync::mpsc;

use super::token_cache::{CachedSignIn, TokenCache};
use super::{AuthorizedTransport, authorized_transport, discover, failed};
use crate::McpError;
use crate::config::{McpServerConfig, McpTransport, UpstreamLogin, expand_env};

impl UpstreamLogin {
    /// How long [`login`] waits, by default, for the browser to come back.
    pub const DEFAULT_WAIT: Duration = Duration::from_secs(300);
}

/// A sign-in that succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SignedIn {
    /// The server signed in to.
    pub server: String,
    /// The authorization server that made the tokens.
    pub issuer: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// The file the tokens are kept in.
    pub token_cache: PathBuf,
}

/// Signs a person in to `config`'s server: the authorization server its
/// protected resource metadata names is asked for a code with PKCE, `show`
/// is given the address to open in a browser, the browser's return to a
/// loopback port is awaited for up to `wait`, and the tokens it brings are
/// kept in the token cache, where connections to the server find them.
///
/// # Errors
/// [`McpError::Config`] when the server is not one reached over HTTP with
/// a `login` section; [`McpError::Startup`] when the authorization server
/// cannot be found or refuses, the browser does not come back in time, or
/// the token cache cannot be written.
pub async fn login(
    config: &McpServerConfig,
    wait: Duration,
    show: impl FnOnce(&str),
) -> Result<SignedIn, McpError> {
    let server = config.name.as_str();
    let (url, settings) = login_settings(config)?;
    let cache = cache_for(server, settings)?;
    let (mut manager, issuer) = discover(server, url).await?;
    manager.set_credential_store(CachedSignIn {
        cache: cache.clone(),
        issuer: issuer.clone(),
        resource: url.to_owned(),
    });
    let listener =
        tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, settings.callback_port.unwrap_or(0)))
            .await
            .map_err(|e| failed(server, "listening for the browser's return on loopback", e))?;
    let port = listener
        .local_addr()
        .map_err(|e| failed(server, "listening for the browser's return on loopback", e))?
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let mut request = AuthorizationRequest::new(redirect)
        .with_client_name("Iris")
        .with_application_type("native");
    if !settings.scopes.is_empty() {
        request = request.with_scopes(settings.scopes.iter().cloned());
    }
    if let Some(client_id) = &settings.client_id {
        request = request.with_preregistered_client(client_id.clone());
        if let Some(secret) = &settings.client_secret {
            request = request.with_client_secret(expand_env(server, secret)?);
        }
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| failed(server, "starting the sign-in", e))?;
    show(session.get_authorization_url());
    let returned = tokio::time::timeout(wait, browser_return(listener))
        .await
        .map_err(|_| McpError::Startup {
            server: server.to_owned(),
            message: format!(
                "the browser did not come back from the sign-in within {}: run `iris login {server}` again",
                humantime::format_duration(wait)
            ),
            source: None,
        })??;
    refused_by_authorization_server(server, &returned)?;
    session
        .handle_callback_url(&returned)
        .await
        .map_err(|e| failed(server, "exchanging the code for tokens", e))?;
    Ok(SignedIn {
        server: server.to_owned(),
        issuer,
        scopes: session.auth_manager.get_current_scopes().await,
        token_cache: cache.path().to_owned(),
    })
}

/// The transport of a server signed in to with `iris login`: the cached
/// tokens, refreshed when they expire.
pub(in crate::client) async fn signed_in_transport(
    server: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
    settings: &UpstreamLogin,
) -> Result<AuthorizedTransport, McpError> {
    let cache = cache_for(server, settings)?;
    let (mut manager, issuer) = discover(server, url).await?;
    manager.set_credential_store(CachedSignIn {
        cache: cache.clone(),
        issuer: issuer.clone(),
        resource: url.to_owned(),
    });
    let signed_in = manager
        .initialize_from_store()
        .await
        .map_err(|e| failed(server, "reading the token cache", e))?;
    if !signed_in {
        return Err(McpError::Startup {
            server: server.to_owned(),
            message: format!(
                "nobody has signed in to it at {issuer} yet (tokens are kept in {}): run `iris login {server}`",
                cache.path().display()
            ),
            source: None,
        });
    }
    // The stored registration keeps no secret; a confidential client needs
    // it again for refreshing.
    if let (Some(client_id), Some(secret)) = (&settings.client_id, &settings.client_secret) {
        manager
            .configure_client(
                OAuthClientConfig::new(client_id.clone(), url.to_owned())
                    .with_client_secret(expand_env(server, secret)?),
            )
            .map_err(|e| failed(server, "the client", e))?;
    }
    authorized_transport(server, url, headers, manager)
}

/// The server's address and sign-in settings, or what is missing.
fn login_settings(config: &McpServerConfig) -> Result<(&str, &UpstreamLogin), McpError> {
    let config_error = |message: String| McpError::Config {
        server: config.name.clone(),
        message,
        source: None,
    };
    match &config.transport {
        McpTransport::Stdio { .. } => Err(config_error(
            "it is started as a process, and signing in is for servers reached over HTTP"
                .to_owned(),
        )),
        McpTransport::Http {
            login: Some(_),
            oauth: Some(_),
            ..
        } => Err(config_error(
            super::OAUTH_AND_LOGIN.to_owned(),
        )),
        McpTransport::Http {
            url,
            login: Some(settings),
            ..
        } => Ok((url, settings)),
        McpTransport::Http { .. } => Err(config_error(
            "its transport has no `login:` section: add one (for example `login: { client_id: …, scopes: [tools:read] }`) to sign in to it".to_owned(),
        )),
    }
}

fn cache_for(server: &str, settings: &UpstreamLogin) -> Result<TokenCache, McpError> {
    match &settings.token_cache {
        Some(path) => Ok(TokenCache::at(path)),
        None => TokenCache::default_location().map_err(|e| McpError::Config {
            server: server.to_owned(),
            message: e.to_string(),
            source: Some(Box::new(e)),
        }),
    }
}

/// An error the authorization server sent back instead of a code (the
/// person declined, or the client is not allowed), in its own words.
fn refused_by_authorization_server(server: &str, returned: &str) -> Result<(), McpError> {
    let Ok(url) = reqwest::Url::parse(returned) else {
        return Ok(());
    };
    let said: BTreeMap<String, String> = url.query_pairs().into_owned().collect();
    match said.get("error") {
        None => Ok(()),
        Some(error) => Err(McpError::Startup {
            server: server.to_owned(),
            message: format!(
                "the authorization server refused the sign-in: {error}{}",
                said.get("error_description")
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            ),
            source: None,
        }),
    }
}

/// The address the browser came back to (`/callback` on the listener),
/// answering it with a page that says the window may be closed; any other
/// request (a favicon) gets 404 and the wait goes on.
async fn browser_return(listener: tokio::net::TcpListener) -> Result<String, McpError> {
    let origin = listener
        .local_addr()
        .map(|address| format!("http://{address}"))
        .unwrap_or_default();
    let (returned, mut came_back) = mpsc::channel::<String>(1);
    loop {
        tokio::select! {
            back = came_back.recv() => {
                if let Some(back) = back {
                    return Ok(back);
                }
            }
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let returned = returned.clone();
                let origin = origin.clone();
                tokio::spawn(async move {
                    let answer = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                        let returned = returned.clone();
                        let origin = origin.clone();
                        async move {
                            if request.uri().path() != "/callback" {
                                return Ok::<_, Infallible>(page(404, "Not found."));
                            }
                            let refused = request.uri().query().is_some_and(|q| q.contains("error="));
                            let back = format!("{origin}{}", request.uri());
                            let _ = returned.send(back).await;
                            Ok(page(200, if refused {
                                "The sign-in was refused; the terminal says why."
                            } else {
                                "Signed in. You can close this window and go back to the terminal."
                            }))
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), answer)
                        .await;
                });
            }
        }
    }
}

fn page(status: u16, text: &'static str) -> hyper::Response<Full<Bytes>> {
    let mut response = hyper::Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::NOT_FOUND);
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
