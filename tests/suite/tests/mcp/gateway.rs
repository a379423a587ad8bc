//! The gateway behind authentication, against a real `OpenID` provider
//! (oidc-provider on loopback, installed pinned by
//! `tests/oidc-provider/install.sh`): tokens checked every way a forger or
//! a careless client gets them wrong, 403 naming the scopes a call needs,
//! a key rotation picked up, principals kept apart (tools, sessions,
//! approvals, artifacts, limits), and an audit line per decision.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use iris::definition::Capability;
use iris::executor::CancellationToken;
use iris::mcp::gateway::{AccessRule, AuditConfig, GatewayAuth, PrincipalLimits, TokenIssuer};
use iris::mcp::server::ServeOptions;
use iris::{ToolExecutor, ToolRegistry};
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use super::oidc::Provider;
use super::peers;
use super::peers::Person;

/// The gateway's public URI: what tokens must be made out to.
pub(super) const AUDIENCE: &str = "https://gateway.test/mcp";

/// Looks a word up.
#[iris::tool(read_only)]
fn lookup(
    /// The word.
    word: String,
) -> String {
    format!("{word}: found")
}

/// Writes a note.
#[iris::tool(write)]
fn write_note(
    /// The note.
    text: String,
) -> String {
    format!("written: {text}")
}

/// Return a long report.
#[iris::tool(read_only)]
fn long_report() -> String {
    (0..2_000)
        .flat_map(|i| ["line ".to_owned(), i.to_string(), "\n".to_owned()])
        .collect()
}

/// The gateway's rules: readers get the read-only tools, writers
/// `write_note` too.
pub(super) fn auth(issuer: &str, audit: &Path) -> GatewayAuth {
    let mut issuer = TokenIssuer::new(issuer);
    issuer.introspection = Some(iris::mcp::gateway::Introspection::new(
        format!("{}/token/introspection", issuer.issuer),
        "gateway",
        "gateway-secret",
    ));
    GatewayAuth::new(AUDIENCE, vec![issuer])
        .rule(AccessRule {
            scopes: vec!["tools:read".to_owned()],
            capabilities: vec![Capability::ReadOnly],
            ..AccessRule::default()
        })
        .rule(AccessRule {
            scopes: vec!["tools:read".to_owned(), "tools:write".to_owned()],
            tools: vec!["write_note".to_owned()],
            ..AccessRule::default()
        })
        .limits(PrincipalLimits {
            pending_approvals: 2,
            ..PrincipalLimits::default()
        })
        .audit(AuditConfig::new(audit))
}

/// The gateway on a free loopback port; writes ask a person.
pub(super) async fn gateway(auth: GatewayAuth) -> (String, CancellationToken) {
    gateway_holding(auth, ServeOptions::default().max_sessions).await
}

/// As [`gateway`], holding at most `max_sessions` sessions.
pub(super) async fn gateway_holding(
    auth: GatewayAuth,
    max_sessions: usize,
) -> (String, CancellationToken) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut tools = ToolRegistry::new();
    tools.register(Lookup).unwrap();
    tools.register(WriteNote).unwrap();
    tools.register(LongReport).unwrap();
    tools.register(tenant_report()).unwrap();
    // The default policy: read-only tools run, writes ask a person.
    let executor = ToolExecutor::builder(tools)
        .max_result_chars(500)
        .build()
        .unwrap();
    let options = ServeOptions {
        auth: Some(auth),
        approval_timeout: Duration::from_secs(30),
        max_sessions,
        ..ServeOptions::default()
    };
    let (url, stop) = peers::serve_http(Arc::new(executor), options).await;
    (url, stop)
}

/// A raw POST of a `tools/list` with `authorization` (when given), and the
/// answer's status, `WWW-Authenticate` and body.
pub(super) async fn post(url: &str, authorization: Option<&str>) -> (u16, String, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#);
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, challenge, response.text().await.unwrap_or_default())
}

async fn client(url: &str, token: &str, person: Person) -> RunningService<RoleClient, Person> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token);
    person
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap()
}

fn call(name: &str, arguments: &Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().unwrap().clone())
}

fn listed(tools: &rmcp::model::ListToolsResult) -> Vec<String> {
    tools.tools.iter().map(|t| t.name.to_string()).collect()
}

/// An opaque token's active answer is believed for the issuer's
/// `remember_seconds` (so a client's every request is not a round trip to
/// the issuer), and asked again on every request when that is 0: a revoked
/// token then fails at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opaque_token_is_believed_for_its_remember_time_and_no_longer() {
    let keys = tempfile::tempdir().unwrap();
    let audit = keys.path().join("decisions.jsonl");
    let provider = Provider::start(keys.path(), "first", None);
    let (remembering, stop_remembering) = gateway(auth(&provider.issuer(), &audit)).await;
    let mut asking = auth(&provider.issuer(), &audit);
    asking.issuers[0].introspection = asking.issuers[0]
        .introspection
        .take()
        .map(|i| i.remember_for(0));
    let (asking, stop_asking) = gateway(asking).await;

    let opaque = provider.token("dora", "tools:read", AUDIENCE).await;
    let bearer = format!("Bearer {opaque}");
    for url in [&remembering, &asking] {
        let (status, _, body) = post(url, Some(&bearer)).await;
        assert_eq!(status, 200, "{body}");
    }
    let revoked = reqwest::Client::new()
        .post(format!("{}/token/revocation", provider.issuer()))
        .basic_auth("dora", Some("dora-secret"))
        .form(&[("token", opaque.as_str())])
        .send()
        .await
        .unwrap();
    assert!(revoked.status().is_success(), "{}", revoked.status());
    let (status, _, body) = post(&remembering, Some(&bearer)).await;
    assert_eq!(status, 200, "still believed within its 30 s: {body}");
    let (status, _, body) = post(&asking, Some(&bearer)).await;
    assert_eq!(status, 401, "asked again, and revoked: {body}");
    assert!(body.contains("not active"), "{body}");
    stop_remembering.cancel();
    stop_asking.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(
    clippy::too_many_lines,
    reason = "one table of every way a token is wrong"
)]
async fn tokens_are_checked_every_way() {
    let keys = tempfile::tempdir().unwrap();
    let audit = keys.path().join("audit/decisions.jsonl");
    let provider = Provider::start(keys.path(), "first", None);
    let (url, stop) = gateway(auth(&provider.issuer(), &audit)).await;

    // No token: 401, pointing at the metadata, which names the issuer.
    let (status, challenge, _) = post(&url, None).await;
    assert_eq!(status, 401);
    let metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    assert!(
        challenge.contains(
            "resource_metadata=\"https://gateway.test/.well-known/oauth-protected-resource/mcp\""
        ) && challenge.contains("scope=\"tools:read tools:write\""),
        "{challenge}"
    );
    let metadata: Value = reqwest::get(&metadata_url)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["resource"], AUDIENCE);
    assert_eq!(
        metadata["authorization_servers"],
        json!([provider.issuer()])
    );
    assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));

    let good = provider
        .token("alice", "tools:read tools:write", AUDIENCE)
        .await;
    let (status, _, _) = post(&url, Some(&format!("Bearer {good}"))).await;
    assert_eq!(status, 200, "a token for this audience passes");

    let now = jsonwebtoken::get_current_timestamp();
    let claims = |changes: Value| {
        let mut claims = json!({"iss": provider.issuer(), "sub": "alice", "aud": AUDIENCE,
            "exp": now + 300, "iat": now, "scope": "tools:read"});
        for (key, value) in changes.as_object().unwrap() {
            claims[key] = value.clone();
        }
        claims
    };
    let public_pem = std::fs::read(keys.path().join("first.public.pem")).unwrap();
    let hs256 = {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
        header.kid = Some("first".to_owned());
        header.typ = Some("at+jwt".to_owned());
        let key = jsonwebtoken::EncodingKey::from_secret(&public_pem);
        jsonwebtoken::encode(&header, &claims(json!({})), &key).unwrap()
    };
    let unsigned = {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let header = b64.encode(br#"{"alg":"none","typ":"JWT","kid":"first"}"#);
        let payload = b64.encode(claims(json!({})).to_string());
        format!("{header}.{payload}.")
    };
    let wrong_audience = provider
        .token("alice", "tools:read", "https://elsewhere.test/mcp")
        .await;
    let cases = [
        ("wrong audience", wrong_audience, "audience"),
        (
            "wrong issuer",
            provider.sign("first", &claims(json!({"iss": "http://127.0.0.1:1"}))),
            "not trusted",
        ),
        (
            "expired",
            provider.sign("first", &claims(json!({"exp": now - 3_600}))),
            "expired",
        ),
        (
            "not yet valid",
            provider.sign("first", &claims(json!({"nbf": now + 3_600}))),
            "not valid yet",
        ),
        ("alg none", unsigned, "algorithm"),
        ("HS256 with the public key", hs256, "HS256"),
        (
            "unknown kid",
            provider.sign("first", &claims(json!({}))).replacen(
                &{
                    use base64::Engine as _;
                    base64::engine::general_purpose::URL_SAFE_NO_PAD
                        .encode(br#"{"typ":"at+jwt","alg":"RS256","kid":"first"}"#)
                },
                &{
                    use base64::Engine as _;
                    base64::engine::general_purpose::URL_SAFE_NO_PAD
                        .encode(br#"{"typ":"at+jwt","alg":"RS256","kid":"made-up"}"#)
                },
                1,
            ),
            "does not publish",
        ),
        ("garbage", "not-a-token".to_owned(), "not active"),
        (
            "an ID token of the trusted issuer",
            retyped(&provider.sign("first", &claims(json!({}))), "id_token+jwt"),
            "not an access token",
        ),
        (
            "a plain JWT from an issuer that types its tokens",
            retyped(&provider.sign("first", &claims(json!({}))), "JWT"),
            "mints access tokens typed `at+jwt`",
        ),
    ];
    for (case, token, why) in cases {
        let (status, challenge, body) = post(&url, Some(&format!("Bearer {token}"))).await;
        assert_eq!(status, 401, "{case}: {body}");
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{case}: {challenge}"
        );
        assert!(body.contains(why), "{case}: {body}");
    }
    // A token in the URL is refused even when it is good.
    let response = reqwest::Client::new()
        .post(format!("{url}?access_token={good}"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
    assert!(
        response
            .text()
            .await
            .unwrap()
            .contains("Authorization header")
    );

    // Opaque tokens, checked through the issuer's introspection endpoint.
    let opaque = provider.token("dora", "tools:read", AUDIENCE).await;
    assert!(!opaque.contains('.'), "an opaque token: {opaque}");
    let (status, _, body) = post(&url, Some(&format!("Bearer {opaque}"))).await;
    assert_eq!(
        status, 200,
        "an active opaque token for this audience passes: {body}"
    );
    let elsewhere = provider
        .token("dora", "tools:read", "https://elsewhere.test/mcp")
        .await;
    let (status, _, body) = post(&url, Some(&format!("Bearer {elsewhere}"))).await;
    assert_eq!(
        status, 401,
        "introspected, but made out to another resource: {body}"
    );
    assert!(body.contains("audience"), "{body}");

    // One audit line per refusal, and never a token.
    let log = std::fs::read_to_string(&audit).unwrap();
    for token in [&good, &opaque, &elsewhere] {
        assert!(
            !log.contains(token.as_str()),
            "a token reached the audit log"
        );
    }
    let refused_401 = log
        .lines()
        .filter(|l| l.contains(r#""outcome":"401""#))
        .count();
    assert_eq!(refused_401, 13, "{log}");
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_scope_is_named_and_every_decision_is_audited() {
    let keys = tempfile::tempdir().unwrap();
    let audit = keys.path().join("decisions.jsonl");
    let provider = Provider::start(keys.path(), "first", None);
    let (url, stop) = gateway(auth(&provider.issuer(), &audit)).await;

    // A missing scope: 403 naming every scope the call needs.
    let reader = provider.token("carol", "tools:read", AUDIENCE).await;
    let carol = client(&url, &reader, Person::Approves).await;
    assert_eq!(
        listed(&carol.list_tools(None).await.unwrap()),
        ["lookup", "long_report"]
    );
    let refused = carol
        .call_tool(call("write_note", &json!({"text": "hi"})))
        .await
        .expect_err("a reader cannot write");
    assert!(
        refused.to_string().contains("Insufficient scope"),
        "{refused}"
    );
    let response = reqwest::Client::new()
        .post(&url)
        .header("authorization", format!("Bearer {reader}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_note","arguments":{"text":"hi"}}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 403);
    let challenge = response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"tools:read tools:write\""),
        "{challenge}"
    );

    // A granted call runs, and is written down with its rule and what
    // the policy said.
    let found = carol
        .call_tool(call("lookup", &json!({"word": "iris"})))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&found).unwrap()["content"][0]["text"],
        "iris: found"
    );

    // One audit line per decision, and never a token.
    let log = std::fs::read_to_string(&audit).unwrap();
    assert!(
        !log.contains(reader.as_str()),
        "a token reached the audit log"
    );
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // (Besides the listings, each audited too.)
    let lines: Vec<Value> = lines
        .into_iter()
        .filter(|l| l["method"] != "tools/list")
        .collect();
    assert_eq!(lines.len(), 3, "two refusals and one call: {log}");
    assert!(
        lines.iter().any(|l| l["tool"] == "lookup"
            && l["outcome"] == "ok"
            && l["rule"] == 0
            && l["policy_decision"] == "allow"
            && l["arguments"].is_null()),
        "{log}"
    );
    assert!(lines.iter().any(|l| l["outcome"] == "403"
        && l["tool"] == "write_note"
        && l["principal"] == format!("{}#carol", provider.issuer())));
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_rotation_at_the_provider_is_picked_up() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let port = provider.port;
    let (url, stop) = gateway(auth(&provider.issuer(), &keys.path().join("audit.jsonl"))).await;
    let before = provider.token("alice", "tools:read", AUDIENCE).await;
    let (status, _, _) = post(&url, Some(&format!("Bearer {before}"))).await;
    assert_eq!(status, 200);
    let fetched = std::time::Instant::now();

    // The provider comes back signing with a new key, and publishes only
    // that one.
    drop(provider);
    let provider = Provider::start(keys.path(), "second", Some(port));
    // Unknown keys are looked up at most every 2 s.
    tokio::time::sleep(Duration::from_secs(2).saturating_sub(fetched.elapsed())).await;
    let after = provider.token("alice", "tools:read", AUDIENCE).await;
    let (status, _, body) = post(&url, Some(&format!("Bearer {after}"))).await;
    assert_eq!(
        status, 200,
        "a token signed with the new key passes: {body}"
    );
    let (status, _, body) = post(&url, Some(&format!("Bearer {before}"))).await;
    assert_eq!(status, 401, "the withdrawn key no longer vouches: {body}");
    stop.cancel();
}

/// A key the issuer stops publishing stops vouching within the issuer's
/// key refresh, even for a token signed with it just now and with no token
/// of a new key arriving to prompt a fetch (finding: it kept working for
/// up to an hour).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdrawn_key_stops_vouching_without_an_unknown_key_arriving() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let port = provider.port;
    let mut rules = auth(&provider.issuer(), &keys.path().join("audit.jsonl"));
    rules.issuers[0] = rules.issuers[0].clone().refresh_keys_every(2);
    let (url, stop) = gateway(rules).await;
    let forged = |provider: &Provider| {
        let now = jsonwebtoken::get_current_timestamp();
        provider.sign(
            "first",
            &json!({"iss": provider.issuer(), "sub": "mallory", "aud": AUDIENCE,
                "exp": now + 300, "iat": now, "scope": "tools:read"}),
        )
    };
    let (status, _, body) = post(&url, Some(&format!("Bearer {}", forged(&provider)))).await;
    assert_eq!(status, 200, "signed with a published key: {body}");

    // The key leaks and the issuer withdraws it: it publishes only a new
    // one. Nobody presents a token of the new key.
    drop(provider);
    let provider = Provider::start(keys.path(), "second", Some(port));
    tokio::time::sleep(Duration::from_millis(2_300)).await;
    let (status, _, body) = post(&url, Some(&format!("Bearer {}", forged(&provider)))).await;
    assert_eq!(
        status, 401,
        "a token signed with the withdrawn key just now: {body}"
    );
    assert!(body.contains("does not publish"), "{body}");
    stop.cancel();
}

/// A key the issuer replaces under the same id ends the tokens it
/// verified, remembered or not (finding: a remembered token was checked
/// only by its key id still being published).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_replaced_under_its_id_ends_the_tokens_it_verified() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let port = provider.port;
    let mut rules = auth(&provider.issuer(), &keys.path().join("audit.jsonl"));
    rules.issuers[0] = rules.issuers[0].clone().refresh_keys_every(2);
    let (url, stop) = gateway(rules).await;
    let now = jsonwebtoken::get_current_timestamp();
    // Forged with the leaked key, valid for a day, and remembered.
    let forged = provider.sign(
        "first",
        &json!({"iss": provider.issuer(), "sub": "mallory", "aud": AUDIENCE,
            "exp": now + 86_400, "iat": now, "scope": "tools:read"}),
    );
    let (status, _, body) = post(&url, Some(&format!("Bearer {forged}"))).await;
    assert_eq!(status, 200, "{body}");

    // The issuer makes a new key and publishes it under the same id.
    drop(provider);
    std::fs::remove_file(keys.path().join("first.pem")).unwrap();
    let _provider = Provider::start(keys.path(), "first", Some(port));
    tokio::time::sleep(Duration::from_millis(2_300)).await;
    let (status, _, body) = post(&url, Some(&format!("Bearer {forged}"))).await;
    assert_eq!(status, 401, "the replaced key no longer vouches: {body}");
    stop.cancel();
}

/// A write no rule grants, whose input schema asks for a header
/// (`x-mcp-header`, 2026-07-28): hidden from every caller.
fn tenant_report() -> iris::tool::DynamicTool {
    let definition = iris::definition::ToolDefinition::builder(
        iris::definition::ToolName::new("tenant_report").unwrap(),
        "Write a tenant's report.",
    )
    .input_schema(json!({
        "type": "object",
        "properties": {"tenant": {"type": "string", "x-mcp-header": "Tenant"}},
        "required": ["tenant"]
    }))
    .capability(Capability::Write)
    .build()
    .unwrap();
    iris::tool::DynamicTool::new(definition, |_, _| async {
        iris::ToolResult::text("written")
    })
}

/// Finding: a hidden tool whose schema asks for a header could be told
/// from one that does not exist: the MCP service looked its schema up
/// unfiltered and answered "missing Mcp-Param header". It reads as unknown
/// on every path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hidden_tool_reads_as_unknown_even_where_its_schema_asks_for_headers() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let (url, stop) = gateway(auth(&provider.issuer(), &keys.path().join("audit.jsonl"))).await;
    let token = provider.token("carol", "tools:read", AUDIENCE).await;
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let mut answers = Vec::new();
    for name in ["tenant_report", "no_such_tool"] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"{name}","arguments":{{"tenant":"acme"}},{meta}}}}}"#
        );
        let answer = reqwest::Client::new()
            .post(&url)
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", name)
            .body(body)
            .send()
            .await
            .unwrap();
        let status = answer.status().as_u16();
        let text = answer.text().await.unwrap();
        assert!(!text.contains("Mcp-Param"), "{name}: {text}");
        assert!(
            text.contains("-32602") && text.contains("no tool is named"),
            "{name}: {status} {text}"
        );
        answers.push(status);
    }
    assert_eq!(
        answers[0], answers[1],
        "the same status for hidden and unknown"
    );
    stop.cancel();
}

/// An `initialize` sent by hand as the holder of `token`: the status and
/// the session it opened.
pub(super) async fn open_session(url: &str, token: &str) -> (u16, Option<String>) {
    let response = initialize(url, token).await;
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    (response.status().as_u16(), session)
}

/// The answer to an `initialize` sent by hand as the holder of `token`.
pub(super) async fn initialize(url: &str, token: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#)
        .send()
        .await
        .unwrap()
}

/// A `tools/list` in `session` as the holder of `token`: the status.
pub(super) async fn list_in(url: &str, token: &str, session: &str) -> u16 {
    reqwest::Client::new()
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-06-18")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn principals_cannot_see_answer_or_exhaust_each_other() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let mut rules = auth(&provider.issuer(), &keys.path().join("audit.jsonl"));
    rules.limits.sessions = 3;
    let (url, stop) = gateway(rules).await;
    let alice_token = provider
        .token("alice", "tools:read tools:write", AUDIENCE)
        .await;
    let bob_token = provider
        .token("bob", "tools:read tools:write", AUDIENCE)
        .await;

    // Alice's person is away: her writes wait, up to her cap of two.
    let alice = Arc::new(client(&url, &alice_token, Person::Away).await);
    let mut waiting = Vec::new();
    for i in 0..2 {
        let alice = Arc::clone(&alice);
        waiting.push(tokio::spawn(async move {
            alice
                .call_tool(call("write_note", &json!({"text": format!("alice {i}")})))
                .await
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let third = alice
        .call_tool(call("write_note", &json!({"text": "alice 3"})))
        .await
        .unwrap();
    let third = serde_json::to_value(&third).unwrap();
    assert_eq!(third["isError"], true, "{third}");
    assert!(
        third["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("already wait for a person"),
        "{third}"
    );

    // Bob's approved write runs meanwhile: Alice's waiting calls fill only
    // her own places.
    let bob = client(&url, &bob_token, Person::Approves).await;
    let written = bob
        .call_tool(call("write_note", &json!({"text": "bob"})))
        .await
        .unwrap();
    let written = serde_json::to_value(&written).unwrap();
    assert_eq!(written["content"][0]["text"], "written: bob", "{written}");

    // Alice's artifacts are hers.
    let preview = alice
        .call_tool(CallToolRequestParams::new("long_report"))
        .await
        .unwrap();
    let handle = artifact_named(&preview);
    alice
        .read_resource(rmcp::model::ReadResourceRequestParams::new(handle.clone()))
        .await
        .expect("alice reads what her call produced");
    bob.read_resource(rmcp::model::ReadResourceRequestParams::new(handle))
        .await
        .expect_err("bob cannot read alice's artifact");

    // Sessions are bound to who opened them, and capped per principal:
    // Alice holds one (her client) and opens two more, the fourth is
    // refused, and Bob still opens his.
    let (status, alice_session) = open_session(&url, &alice_token).await;
    assert_eq!(status, 200);
    let alice_session = alice_session.unwrap();
    assert_eq!(open_session(&url, &alice_token).await.0, 200);
    assert_eq!(open_session(&url, &alice_token).await.0, 429);
    assert_eq!(open_session(&url, &bob_token).await.0, 200);
    assert_eq!(
        list_in(&url, &bob_token, &alice_session).await,
        404,
        "bob cannot use alice's session"
    );
    assert_ne!(list_in(&url, &alice_token, &alice_session).await, 404);

    for call in waiting {
        call.abort();
    }
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_principal_past_its_rate_is_slowed_and_no_other() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let mut rules = auth(&provider.issuer(), &keys.path().join("audit.jsonl"));
    // Bursts of one request.
    rules.limits.requests_per_minute = 6;
    let (url, stop) = gateway(rules).await;
    let alice = provider.token("alice", "tools:read", AUDIENCE).await;
    let bob = provider.token("bob", "tools:read", AUDIENCE).await;
    assert_eq!(post(&url, Some(&format!("Bearer {alice}"))).await.0, 200);
    let (status, _, body) = post(&url, Some(&format!("Bearer {alice}"))).await;
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("requests a minute"), "{body}");
    assert_eq!(post(&url, Some(&format!("Bearer {bob}"))).await.0, 200);
    stop.cancel();
}

/// Delete every note.
#[iris::tool(write, deferred)]
fn purge_notes() -> &'static str {
    "purged"
}

/// Behind a gate, `tool_search` searches only what the caller may call:
/// a reader never learns the name of a writer's tool. A stateless client's
/// artifacts stay readable by its principal across requests, and by no
/// one else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_finds_only_granted_tools_and_stateless_artifacts_stay_the_callers() {
    use rmcp::{ClientLifecycleMode, ClientServiceExt as _};
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut tools = ToolRegistry::new();
    tools.register(Lookup).unwrap();
    tools.register(LongReport).unwrap();
    tools.register(PurgeNotes).unwrap();
    tools.register(iris::discovery::ToolSearch).unwrap();
    let executor = ToolExecutor::builder(tools)
        .max_result_chars(500)
        .build()
        .unwrap();
    let mut rules = auth(&provider.issuer(), &keys.path().join("audit.jsonl"));
    rules.rules.push(AccessRule {
        scopes: vec!["tools:read".to_owned()],
        tools: vec!["tool_search".to_owned()],
        ..AccessRule::default()
    });
    rules.rules.push(AccessRule {
        scopes: vec!["tools:write".to_owned()],
        tools: vec!["purge_notes".to_owned()],
        ..AccessRule::default()
    });
    let options = ServeOptions {
        auth: Some(rules),
        tools: iris::mcp::server::ServedTools::EagerAndSearch,
        ..ServeOptions::default()
    };
    let (url, stop) = peers::serve_http(Arc::new(executor), options).await;

    let stateless = |token: String| {
        let url = url.clone();
        async move {
            let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token);
            Person::Approves
                .serve_with_lifecycle(
                    StreamableHttpClientTransport::from_config(config),
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
                .unwrap()
        }
    };
    let carol = stateless(provider.token("carol", "tools:read", AUDIENCE).await).await;
    let alice = stateless(
        provider
            .token("alice", "tools:read tools:write", AUDIENCE)
            .await,
    )
    .await;
    let search = call("tool_search", &json!({"intents": ["purge notes"]}));
    let unseen = carol.call_tool(search.clone()).await.unwrap();
    assert!(
        !serde_json::to_string(&unseen)
            .unwrap()
            .contains("purge_notes"),
        "{unseen:?}"
    );
    // Named exactly, it asks for the scope that would grant it (step-up).
    let refused = carol
        .call_tool(call("purge_notes", &json!({})))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("Insufficient scope"),
        "{refused}"
    );
    let seen = alice.call_tool(search).await.unwrap();
    assert!(
        serde_json::to_string(&seen)
            .unwrap()
            .contains("purge_notes"),
        "{seen:?}"
    );

    // Alice's report, read back in a later stateless request; Carol cannot.
    let preview = alice
        .call_tool(CallToolRequestParams::new("long_report"))
        .await
        .unwrap();
    let handle = artifact_named(&preview);
    alice
        .read_resource(rmcp::model::ReadResourceRequestParams::new(handle.clone()))
        .await
        .expect("alice reads what her earlier request produced");
    carol
        .read_resource(rmcp::model::ReadResourceRequestParams::new(handle))
        .await
        .expect_err("carol cannot read alice's artifact");
    stop.cancel();
}

/// The artifact handle a result's preview names.
fn artifact_named(preview: &rmcp::model::CallToolResult) -> String {
    let preview = serde_json::to_value(preview).unwrap();
    let text = preview["content"][0]["text"].as_str().unwrap();
    let start = text
        .find("artifact://")
        .unwrap_or_else(|| panic!("the preview names its artifact: {text}"));
    text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '/'))
        .collect()
}

/// Run control passes the rules like every tool: a principal no rule
/// grants `activate_skill` or `ask_question` neither sees nor uses them,
/// nor lists or reads a skill's files; one the rules grant them (here by
/// capability: both only read) does. Every use and refusal is audited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(
    clippy::too_many_lines,
    reason = "two gateways, walked as one attack and its counterpart"
)]
async fn run_control_and_skill_files_pass_the_rules_and_the_audit() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let skills_dir = keys.path().join("skills/expenses");
    std::fs::create_dir_all(&skills_dir).unwrap();
    std::fs::write(
        skills_dir.join("SKILL.md"),
        "---\nname: expenses\ndescription: File expenses.\n---\nFile them by date.\n",
    )
    .unwrap();
    let found = iris::skills::SkillRoots::new()
        .with_root(
            keys.path().join("skills"),
            iris::skills::SkillScope::User,
            iris::skills::Strictness::Strict,
        )
        .find();
    let skills = iris::skills::Skills::new(found.skills);
    let serve = |auth: GatewayAuth| {
        let skills = skills.clone();
        async move {
            let mut tools = ToolRegistry::new();
            tools.register(Lookup).unwrap();
            tools.register(WriteNote).unwrap();
            let executor = ToolExecutor::builder(tools).build().unwrap();
            let options = ServeOptions {
                auth: Some(auth),
                questions: true,
                skills: Some(skills),
                ..ServeOptions::default()
            };
            let (url, stop) = peers::serve_http(Arc::new(executor), options).await;
            (url, stop)
        }
    };
    let _ = rustls::crypto::ring::default_provider().install_default();

    // Rules that grant a reader nothing.
    let audit = keys.path().join("writers-only.jsonl");
    let writers_only = GatewayAuth::new(AUDIENCE, vec![TokenIssuer::new(provider.issuer())])
        .rule(AccessRule {
            scopes: vec!["tools:write".to_owned()],
            tools: vec!["write_note".to_owned()],
            ..AccessRule::default()
        })
        .audit(AuditConfig::new(&audit));
    let (url, stop) = serve(writers_only).await;
    let token = provider.token("carol", "tools:read", AUDIENCE).await;
    let dave = client(&url, &token, Person::Approves).await;
    let tools = listed(&dave.list_tools(None).await.unwrap());
    assert!(
        !tools
            .iter()
            .any(|t| t == "activate_skill" || t == "ask_question"),
        "{tools:?}"
    );
    // Called anyway, it reads as a tool that does not exist (MCP's -32602).
    let refused = dave
        .call_tool(call(
            "activate_skill",
            &json!({"name": "expenses", "file": null}),
        ))
        .await
        .expect_err("a hidden tool is an unknown tool");
    let said = refused.to_string();
    assert!(said.contains("no tool is named"), "{said}");
    assert!(said.contains("-32602"), "{said}");
    assert!(
        dave.list_resources(None)
            .await
            .unwrap()
            .resources
            .is_empty(),
        "no skill file is listed"
    );
    dave.read_resource(rmcp::model::ReadResourceRequestParams::new(
        "skill://expenses/SKILL.md",
    ))
    .await
    .expect_err("nor read");
    let log = std::fs::read_to_string(&audit).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("\"tool\":\"activate_skill\"")
                && l.contains("\"rule_decision\":\"hidden\"")),
        "{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains("\"method\":\"resources/read\"")
                && l.contains("\"rule_decision\":\"hidden\"")),
        "{log}"
    );
    stop.cancel();

    // Rules that grant readers what only reads: run control included.
    let audit = keys.path().join("readers.jsonl");
    let readers = GatewayAuth::new(AUDIENCE, vec![TokenIssuer::new(provider.issuer())])
        .rule(AccessRule {
            scopes: vec!["tools:read".to_owned()],
            capabilities: vec![Capability::ReadOnly],
            ..AccessRule::default()
        })
        .audit(AuditConfig::new(&audit));
    let (url, stop) = serve(readers).await;
    let carol = client(&url, &token, Person::Approves).await;
    let tools = listed(&carol.list_tools(None).await.unwrap());
    assert!(tools.iter().any(|t| t == "activate_skill"), "{tools:?}");
    assert!(tools.iter().any(|t| t == "ask_question"), "{tools:?}");
    let activated = carol
        .call_tool(call(
            "activate_skill",
            &json!({"name": "expenses", "file": null}),
        ))
        .await
        .unwrap();
    assert_ne!(activated.is_error, Some(true), "{activated:?}");
    let file = carol
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "skill://expenses/SKILL.md",
        ))
        .await
        .unwrap();
    assert!(format!("{file:?}").contains("File them by date."));
    let log = std::fs::read_to_string(&audit).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("\"tool\":\"activate_skill\"")
                && l.contains("\"rule_decision\":\"allowed\"")
                && l.contains("\"outcome\":\"ok\"")),
        "{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains("\"method\":\"resources/read\"")
                && l.contains("\"rule_decision\":\"allowed\"")),
        "{log}"
    );
    stop.cancel();
}

/// An introspection endpoint on loopback that answers every token
/// inactive and counts the tokens it was shown.
async fn recording_introspection() -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/introspect", listener.local_addr().unwrap());
    let shown = Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = Arc::clone(&shown);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut request = vec![0_u8; 8192];
            let read = stream.read(&mut request).await.unwrap_or(0);
            let text = String::from_utf8_lossy(&request[..read]).into_owned();
            let token = text
                .split("token=")
                .nth(1)
                .and_then(|rest| rest.split('&').next())
                .unwrap_or_default()
                .to_owned();
            kept.lock().unwrap().push(token);
            let body = r#"{"active":false}"#;
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    });
    (url, shown)
}

/// A token is shown only to the issuer that minted it: with two issuers
/// that introspect, each names the prefix of its tokens (a configuration
/// without them is refused), a token goes to the one whose prefix it
/// has, and a token of neither form to none (one issuer's token was
/// posted to the other's endpoint).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opaque_token_is_shown_only_to_the_issuer_it_looks_minted_by() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (a_url, a_shown) = recording_introspection().await;
    let (b_url, b_shown) = recording_introspection().await;
    let issuer = |name: &str, url: &str, prefix: Option<&str>| {
        let mut issuer = TokenIssuer::new(format!("https://{name}.test"));
        let mut introspection = iris::mcp::gateway::Introspection::new(url, "gateway", "secret");
        if let Some(prefix) = prefix {
            introspection = introspection.for_tokens_starting(prefix);
        }
        issuer.introspection = Some(introspection);
        issuer
    };
    let rule = AccessRule {
        tools: vec!["*".to_owned()],
        ..AccessRule::default()
    };
    let unrouted = GatewayAuth::new(
        AUDIENCE,
        vec![issuer("a", &a_url, None), issuer("b", &b_url, Some("b_"))],
    )
    .rule(rule.clone());
    let problems = unrouted.check().join("\n");
    assert!(
        problems.contains("auth.issuers[0].introspection.token_prefix is missing"),
        "{problems}"
    );
    let overlapping = GatewayAuth::new(
        AUDIENCE,
        vec![
            issuer("a", &a_url, Some("b")),
            issuer("b", &b_url, Some("b_")),
        ],
    )
    .rule(rule.clone());
    assert!(
        overlapping
            .check()
            .join("\n")
            .contains("which one token could both start with"),
        "{:?}",
        overlapping.check()
    );

    let routed = GatewayAuth::new(
        AUDIENCE,
        vec![
            issuer("a", &a_url, Some("a_")),
            issuer("b", &b_url, Some("b_")),
        ],
    )
    .rule(rule);
    assert!(routed.check().is_empty(), "{:?}", routed.check());
    let (url, stop) = gateway(routed).await;
    let (status, _, _) = post(&url, Some("Bearer a_minted_by_a")).await;
    assert_eq!(status, 401);
    let (status, _, _) = post(&url, Some("Bearer c_minted_elsewhere")).await;
    assert_eq!(status, 401);
    assert_eq!(*a_shown.lock().unwrap(), ["a_minted_by_a"]);
    assert!(
        b_shown.lock().unwrap().is_empty(),
        "b was shown {:?}",
        b_shown.lock().unwrap()
    );
    stop.cancel();
}

/// `token` with its header's type changed to `typ` (its signature then
/// fails, but the type is judged first, as a forger's would be).
fn retyped(token: &str, typ: &str) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header = format!(r#"{{"typ":"{typ}","alg":"RS256","kid":"first"}}"#);
    let rest = token.split_once('.').map_or("", |(_, rest)| rest);
    format!("{}.{rest}", b64.encode(header))
}

/// The gateway chapter's deployment, copied from the guide as a reader
/// copies it: only the issuer (here a real provider on loopback) and the
/// audit log's path are changed. A reader lists and reads the workspace but
/// is never offered `write_file`; a writer needs the write scope and the
/// `support` group; the agent file is never served; each decision is
/// written to the audit log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guides_deployment_serves_as_written() {
    let keys = tempfile::tempdir().unwrap();
    let provider = Provider::start(keys.path(), "first", None);
    let audit = keys.path().join("decisions.jsonl");
    let home = tempfile::tempdir().unwrap();
    let (url, stop) = guide_gateway(&provider, &audit, home.path()).await;
    let workspace = home.path().join("desk");

    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let token = |sub: &str, scope: &str, groups: Option<&str>| {
        let mut claims = json!({"iss": provider.issuer(), "sub": sub,
            "aud": "https://tools.example.com/mcp", "exp": now + 300, "iat": now, "scope": scope});
        if let Some(groups) = groups {
            claims["groups"] = json!(groups);
        }
        provider.sign("first", &claims)
    };

    // A reader: the read-only tools, never write_file.
    let reader = client(&url, &token("ann", "tools:read", None), Person::Approves).await;
    let offered = listed(&reader.list_tools(None).await.unwrap());
    assert!(offered.contains(&"read_file".to_owned()), "{offered:?}");
    assert!(!offered.contains(&"write_file".to_owned()), "{offered:?}");
    let read = reader
        .call_tool(call("read_file", &json!({"path": "ticket.txt"})))
        .await
        .unwrap();
    assert!(
        serde_json::to_value(&read)
            .unwrap()
            .to_string()
            .contains("printer on fire"),
        "{read:?}"
    );
    // The agent's own file is not the workspace's, wherever it lies.
    let outside = reader
        .call_tool(call("read_file", &json!({"path": "../agent.yaml"})))
        .await
        .unwrap();
    assert_eq!(outside.is_error, Some(true), "{outside:?}");

    // The write scope alone is not enough: the rule asks for the group.
    let no_group = client(
        &url,
        &token("bob", "tools:read tools:write", None),
        Person::Approves,
    )
    .await;
    let offered = listed(&no_group.list_tools(None).await.unwrap());
    assert!(!offered.contains(&"write_file".to_owned()), "{offered:?}");

    // A writer of the support group writes, approving her own call.
    let writer = client(
        &url,
        &token("cy", "tools:read tools:write", Some("support")),
        Person::Approves,
    )
    .await;
    let written = writer
        .call_tool(call(
            "write_file",
            &json!({"path": "reply.txt", "content": "on our way\n"}),
        ))
        .await
        .unwrap();
    assert_ne!(written.is_error, Some(true), "{written:?}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("reply.txt")).unwrap(),
        "on our way\n"
    );

    // Every decision is in the audit log, by principal.
    let log = std::fs::read_to_string(&audit).unwrap();
    for who in ["ann", "bob", "cy"] {
        assert!(
            log.contains(&format!("{}#{who}", provider.issuer())),
            "{who}: {log}"
        );
    }
    assert!(
        log.lines()
            .any(|line| line.contains("\"write_file\"") && line.contains("\"ok\"")),
        "{log}"
    );
    stop.cancel();
}

/// Serves the gateway chapter's deployment from `home` (its agent file and
/// a `desk` workspace holding `ticket.txt`), the issuer and the audit log's
/// path replaced by `provider`'s and `audit`.
async fn guide_gateway(
    provider: &Provider,
    audit: &Path,
    home: &Path,
) -> (String, CancellationToken) {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../src/guide/10-mcp.md"
    ))
    .unwrap();
    let start = guide
        .find("```yaml\n# /etc/iris/agent.yaml")
        .expect("the guide shows a deployment")
        + "```yaml\n".len();
    let end = start + guide[start..].find("```").unwrap();
    let written = &guide[start..end];
    let place = "https://login.example.com/realms/support";
    let log = "/var/log/iris/decisions.jsonl";
    assert!(
        written.contains(place) && written.contains(log),
        "{written}"
    );
    let file = written
        .replace(place, &provider.issuer())
        .replace(log, audit.to_str().unwrap());
    let workspace = home.join("desk");
    std::fs::create_dir(&workspace).unwrap();
    std::fs::write(workspace.join("ticket.txt"), "printer on fire\n").unwrap();
    let agent_file = home.join("agent.yaml");
    std::fs::write(&agent_file, &file).unwrap();

    let agent = iris::agent::Agent::connect(&agent_file).await.unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let options = ServeOptions {
        name: agent.name().to_owned(),
        workspace: workspace.clone(),
        hidden: agent.own_files(),
        auth: agent.gateway_auth().cloned(),
        ..ServeOptions::default()
    };
    let (url, stop) = peers::serve_http(Arc::new(agent.executor().clone()), options).await;

    (url, stop)
}
