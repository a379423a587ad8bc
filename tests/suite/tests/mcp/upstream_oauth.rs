//! An upstream MCP server that needs OAuth (here another Iris gateway
//! behind a real `OpenID` provider), reached two ways: with this gateway's
//! own client credentials, and with a person's sign-in done once with
//! `iris login` (the authorization-code flow with PKCE through the
//! provider's pages), its tokens cached in a file only its owner reads and
//! refreshed from there.

use std::sync::Arc;
use std::time::Duration;

use iris::definition::Capability;
use iris::executor::CancellationToken;
use iris::mcp::client::{McpClient, McpServerConfig, UpstreamLogin, UpstreamOAuth};
use iris::mcp::gateway::{AccessRule, GatewayAuth, TokenIssuer};
use iris::mcp::server::{McpHttpServer, ServeOptions};
use iris::{ToolExecutor, ToolRegistry};
use serde_json::{Value, json};

use super::oidc::Provider;

/// Looks a word up.
#[iris::tool(read_only)]
fn lookup(
    /// The word.
    word: String,
) -> String {
    format!("{word}: found")
}

/// An Iris gateway on a loopback port of its own, letting in holders of a
/// `tools:read` token from `issuer` made out to it; its URL.
async fn upstream(issuer: String) -> (String, CancellationToken) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut tools = ToolRegistry::new();
    tools.register(Lookup).unwrap();
    let executor = ToolExecutor::builder(tools).build().unwrap();
    let auth = GatewayAuth::new(url.clone(), vec![TokenIssuer::new(issuer)]).rule(AccessRule {
        scopes: vec!["tools:read".to_owned()],
        capabilities: vec![Capability::ReadOnly],
        ..AccessRule::default()
    });
    let options = ServeOptions {
        auth: Some(auth),
        ..ServeOptions::default()
    };
    let http = McpHttpServer::bind(Arc::new(executor), ([127, 0, 0, 1], port).into(), options)
        .await
        .unwrap();
    let stop = http.shutdown_token();
    tokio::spawn(http.run());
    (url, stop)
}

/// Calls the upstream's `lookup` through `client`.
async fn look_up_through(client: &McpClient) -> String {
    let mut registry = ToolRegistry::new();
    for tool in client.tools() {
        registry.register_dyn(tool).unwrap();
    }
    // The upstream's annotations are not trusted, so its tools count as
    // writing.
    let executor = ToolExecutor::builder(registry)
        .policy(iris::RulePolicy::new().write(iris::Rule::Allow))
        .build()
        .unwrap();
    let cx = iris::ToolContext::builder(".", iris::RunId::new("relay")).build();
    let found = executor
        .execute_one(
            iris::ToolUseBlock::new("c1", "upstream__lookup", json!({"word": "iris"})),
            &cx,
        )
        .await;
    found.result().unwrap().text_content()
}

/// Reached with this gateway's own client credentials: the server's
/// metadata names the authorization server, a token is fetched there, and
/// calls carry it. Without credentials the server is refused, saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_server_that_needs_oauth_is_reached_with_client_credentials() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (url, stop) = upstream(provider.issuer()).await;

    let refused = McpClient::connect(McpServerConfig::http("upstream", url.clone()))
        .await
        .expect_err("no credentials, no entry");
    assert!(
        refused.to_string().contains("the server needs OAuth"),
        "{refused}"
    );

    let config = McpServerConfig::http("upstream", url).with_oauth(UpstreamOAuth {
        client_id: "relay".to_owned(),
        client_secret: "relay-secret".to_owned(),
        scopes: vec!["tools:read".to_owned()],
        resource: None,
    });
    let client = McpClient::connect(config).await.unwrap();
    let names: Vec<String> = client
        .tools()
        .iter()
        .map(|t| t.definition_dyn().name().to_string())
        .collect();
    assert_eq!(names, ["upstream__lookup"]);
    assert_eq!(look_up_through(&client).await, "iris: found");
    stop.cancel();
}

/// A person at a browser: follows the sign-in address through the
/// provider's development login page (any name passes) and consent page to
/// the loopback address it ends at, or declines at the consent page.
async fn sign_in_at_browser(address: String, name: &str, consent: bool) {
    let browser = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap();
    let mut page = browser.get(&address).send().await.unwrap();
    for _ in 0..6 {
        let at = page.url().clone();
        if at.path() == "/callback" {
            assert!(page.status().is_success(), "{}", page.status());
            return;
        }
        let html = page.text().await.unwrap();
        let action = html
            .split("action=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_else(|| panic!("no form at {at}: {html}"));
        let target = at.join(action).unwrap();
        page = if html.contains("name=\"prompt\" value=\"login\"") {
            browser
                .post(target)
                .form(&[("prompt", "login"), ("login", name), ("password", "any")])
                .send()
        } else if consent {
            browser.post(target).form(&[("prompt", "consent")]).send()
        } else {
            browser.get(format!("{target}/abort")).send()
        }
        .await
        .unwrap();
    }
    panic!("the sign-in did not end at the loopback address");
}

/// The cached sign-in for `url` in the token cache at `path`.
fn cached(path: &std::path::Path, issuer: &str, url: &str) -> Value {
    let file: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    file["issuers"][issuer][url].clone()
}

/// `iris login` once: the browser goes through the provider's pages, the
/// tokens land in a cache file only its owner can read (keyed by issuer and
/// server), a connection finds them there, and an expired access token is
/// refreshed from the cached refresh token without the person. Before the
/// sign-in the connection says to run `iris login`; a declined consent
/// says it was refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_signs_in_once_and_later_connections_use_the_cached_tokens() {
    let keys = tempfile::tempdir().unwrap();
    // Access tokens that expire within the test, so that refreshing is seen.
    let provider = Provider::start_with_ttl(keys.path(), "first", None, 4);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (url, stop) = upstream(provider.issuer()).await;
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("state").join("tokens.json");
    let config = McpServerConfig::http("upstream", url.clone()).with_login(UpstreamLogin {
        client_id: Some("cli".to_owned()),
        scopes: vec!["tools:read".to_owned()],
        token_cache: Some(cache.clone()),
        ..UpstreamLogin::default()
    });

    let before = McpClient::connect(config.clone())
        .await
        .expect_err("nobody signed in yet");
    assert!(
        before.to_string().contains("run `iris login upstream`"),
        "{before}"
    );

    let (shown, address) = tokio::sync::oneshot::channel();
    let declined = tokio::spawn({
        let config = config.clone();
        async move {
            iris::mcp::client::login(&config, Duration::from_secs(60), |a| {
                let _ = shown.send(a.to_owned());
            })
            .await
        }
    });
    sign_in_at_browser(address.await.unwrap(), "ada", false).await;
    let declined = declined.await.unwrap().expect_err("consent declined");
    assert!(
        declined
            .to_string()
            .contains("refused the sign-in: access_denied"),
        "{declined}"
    );

    let (shown, address) = tokio::sync::oneshot::channel();
    let signing_in = tokio::spawn({
        let config = config.clone();
        async move {
            iris::mcp::client::login(&config, Duration::from_secs(60), |a| {
                let _ = shown.send(a.to_owned());
            })
            .await
        }
    });
    let address = address.await.unwrap();
    assert!(address.contains("code_challenge_method=S256"), "{address}");
    assert!(address.contains("resource="), "{address}");
    sign_in_at_browser(address, "ada", true).await;
    let signed_in = signing_in.await.unwrap().unwrap();
    assert_eq!(signed_in.issuer, provider.issuer());
    assert_eq!(signed_in.token_cache, cache);
    assert!(
        signed_in.scopes.iter().any(|s| s == "tools:read"),
        "{signed_in:?}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&cache).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the token cache is the owner's alone");
    }
    let first = cached(&cache, &provider.issuer(), &url);
    let first_token = first["token_response"]["access_token"].clone();
    assert!(first_token.is_string(), "{first}");
    assert!(
        first["token_response"]["refresh_token"].is_string(),
        "{first}"
    );

    let client = McpClient::connect(config.clone()).await.unwrap();
    assert_eq!(look_up_through(&client).await, "iris: found");

    // Past the access token's life the refresh token gets a new one.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(look_up_through(&client).await, "iris: found");
    let refreshed = cached(&cache, &provider.issuer(), &url);
    assert_ne!(
        refreshed["token_response"]["access_token"], first_token,
        "a refreshed token is kept"
    );
    stop.cancel();
}
