//! The protocol revisions served, checked with rmcp's own client: the
//! current one (2026-07-28, stateless: `server/discover`, no session,
//! approvals and questions as input requests with a sealed, single-use
//! `requestState`, lists with cache hints) and the one before it
//! (2025-11-25, a session, approvals by server-sent elicitation).

use std::sync::Arc;

use super::peers::{self, Person};
use iris::executor::CancellationToken;
use iris::mcp::server::{McpHttpServer, ServeOptions};
use iris::{ToolExecutor, ToolRegistry};
use rmcp::model::{CacheScope, CallToolRequestParams, CallToolResponse, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt as _, ServiceExt as _};
use serde_json::{Value, json};

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

async fn serving() -> (String, CancellationToken) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut tools = ToolRegistry::new();
    tools.register(Lookup).unwrap();
    tools.register(WriteNote).unwrap();
    let executor = ToolExecutor::builder(tools).build().unwrap();
    let options = ServeOptions {
        questions: true,
        ..ServeOptions::default()
    };
    let (url, stop) = peers::serve_http(Arc::new(executor), options).await;
    (url, stop)
}

async fn stateless(url: &str, person: Person) -> RunningService<RoleClient, Person> {
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    person
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(url.to_owned()),
            lifecycle,
        )
        .await
        .unwrap()
}

fn call(name: &str, arguments: &Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().unwrap().clone())
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_client_is_asked_through_input_requests() {
    let (url, stop) = serving().await;
    let client = stateless(&url, Person::Approves).await;
    assert_eq!(
        client.peer_info().map(|info| info.protocol_version.clone()),
        Some(ProtocolVersion::V_2026_07_28)
    );
    let listed = client.list_tools(None).await.unwrap();
    let names: Vec<&str> = listed.tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["lookup", "write_note", "ask_question"]);
    // The list depends on what the client can do (`ask_question` only to a
    // client that can elicit), so shared caches do not keep it.
    assert_eq!(listed.cache_scope, Some(CacheScope::Private));
    assert!(listed.ttl_ms.is_some_and(|ttl| ttl > 0));

    let found = client
        .call_tool(call("lookup", &json!({"word": "iris"})))
        .await
        .unwrap();
    assert_eq!(text(&found), "iris: found");
    // The write asks; the person approves through the input request, and
    // the client's second round runs it.
    let written = client
        .call_tool(call("write_note", &json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(text(&written), "written: hi", "{written:?}");

    let asked = json!({"questions": [{"question": "Which database?", "header": "Database",
        "options": ["Postgres", "SQLite"], "multi_select": false}]});
    let answered = client
        .call_tool(call("ask_question", &asked))
        .await
        .unwrap();
    assert!(text(&answered).contains("Postgres"), "{answered:?}");

    let refusing = stateless(&url, Person::Declines).await;
    let refused = refusing
        .call_tool(call("write_note", &json!({"text": "no"})))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("declined"), "{refused:?}");
    stop.cancel();
}

/// The message of a -32602 answer.
fn invalid_params(error: &rmcp::service::ServiceError) -> String {
    match error {
        rmcp::service::ServiceError::McpError(data) => {
            assert_eq!(data.code.0, -32602, "{data:?}");
            data.message.to_string()
        }
        other => panic!("expected -32602, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_state_counts_once_and_only_for_its_own_call() {
    let (url, stop) = serving().await;
    let client = stateless(&url, Person::Approves).await;
    let arguments = json!({"text": "once"});
    let CallToolResponse::InputRequired(asked) = client
        .call_tool_once(call("write_note", &arguments))
        .await
        .unwrap()
    else {
        panic!("a write asks first");
    };
    let state = asked.request_state.clone().expect("a sealed state");
    let request_keys: Vec<&String> = asked.input_requests.as_ref().unwrap().keys().collect();
    assert_eq!(request_keys, ["approval"]);
    let approve = |arguments: &Value| {
        let mut responses = rmcp::model::InputResponses::new();
        responses.insert(
            "approval".to_owned(),
            json!({"action": "accept", "content": {"approve": true}}),
        );
        call("write_note", arguments)
            .with_input_responses(responses)
            .with_request_state(state.clone())
    };
    // Another call's arguments: refused as invalid params (SEP-2322: a
    // state that fails its check is an error, never run), and the state
    // stays good.
    let other = client
        .call_tool_once(approve(&json!({"text": "something else"})))
        .await
        .unwrap_err();
    let said = invalid_params(&other);
    assert!(
        said.contains("not one this server gave for this call"),
        "{said}"
    );
    let CallToolResponse::Complete(ran) = client.call_tool_once(approve(&arguments)).await.unwrap()
    else {
        panic!("the approved call runs");
    };
    assert_eq!(text(&ran), "written: once");
    let replayed = client
        .call_tool_once(approve(&arguments))
        .await
        .unwrap_err();
    assert!(invalid_params(&replayed).contains("used already"));
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_of_the_revision_before_keeps_its_session() {
    let (url, stop) = serving().await;
    let person = Person::Approves;
    let client = person
        .serve(StreamableHttpClientTransport::from_uri(url.clone()))
        .await
        .unwrap();
    // rmcp's `serve` opens a session with the newest revision that has one.
    assert_eq!(
        client.peer_info().map(|info| info.protocol_version.clone()),
        Some(ProtocolVersion::V_2025_11_25)
    );
    let written = client
        .call_tool(call("write_note", &json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(text(&written), "written: hi");
    stop.cancel();
}

/// Convert a temperature from Celsius to Fahrenheit.
#[iris::tool(read_only, deferred)]
fn celsius_to_fahrenheit(
    /// Degrees Celsius.
    celsius: f64,
) -> f64 {
    celsius * 9.0 / 5.0 + 32.0
}

/// Decided: on 2026-07-28 a list is the same for every request with the
/// same authorization, so `tool_search` never changes it. A stateless
/// client finds a deferred tool's name and schema with `tool_search` and
/// calls it by that name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_client_reaches_deferred_tools_by_the_name_search_gave() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut tools = ToolRegistry::new();
    tools.register(Lookup).unwrap();
    tools.register(CelsiusToFahrenheit).unwrap();
    tools.register(iris::discovery::ToolSearch).unwrap();
    let executor = ToolExecutor::builder(tools).build().unwrap();
    let options = ServeOptions {
        tools: iris::mcp::server::ServedTools::EagerAndSearch,
        ..ServeOptions::default()
    };
    let (url, stop) = peers::serve_http(Arc::new(executor), options).await;

    let client = stateless(&url, Person::Approves).await;
    let names = |listed: rmcp::model::ListToolsResult| -> Vec<String> {
        listed.tools.iter().map(|t| t.name.to_string()).collect()
    };
    let before = names(client.list_tools(None).await.unwrap());
    assert_eq!(before, ["lookup", "tool_search"]);
    let found = client
        .call_tool(call(
            "tool_search",
            &json!({"intents": ["convert celsius to fahrenheit"]}),
        ))
        .await
        .unwrap();
    assert!(text(&found).contains("celsius_to_fahrenheit"), "{found:?}");
    let converted = client
        .call_tool(call("celsius_to_fahrenheit", &json!({"celsius": 100.0})))
        .await
        .unwrap();
    assert_eq!(text(&converted), "212.0", "{converted:?}");
    assert_eq!(
        names(client.list_tools(None).await.unwrap()),
        before,
        "the list never changes"
    );
    stop.cancel();
}

/// On 2026-07-28 a call that needs a person's approval, from a client that
/// declared no elicitation, is refused as the revision says: -32021 naming
/// the capability it lacks, and the write does not run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_client_without_elicitation_is_told_the_capability_it_lacks() {
    let (url, stop) = serving().await;
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = ()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(url.clone()),
            lifecycle,
        )
        .await
        .unwrap();
    let found = client
        .call_tool(call("lookup", &json!({"word": "iris"})))
        .await
        .unwrap();
    assert_eq!(text(&found), "iris: found", "reads need nobody");
    let refused = client
        .call_tool(call("write_note", &json!({"text": "hi"})))
        .await
        .expect_err("nobody can be asked");
    let rmcp::service::ServiceError::McpError(error) = refused else {
        panic!("a protocol error: {refused:?}");
    };
    assert_eq!(error.code.0, -32021, "{error:?}");
    assert_eq!(
        error.data.unwrap()["requiredCapabilities"],
        json!({"elicitation": {}})
    );
    assert!(error.message.contains("write_note"), "{}", error.message);
    stop.cancel();
}

/// A stateless client listening (`subscriptions/listen`) hears that the
/// tools changed when the served catalog changes, tagged with its
/// subscription, and only what it subscribed to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listening_client_hears_when_the_tools_change() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut tools = ToolRegistry::new();
    tools.register(Lookup).unwrap();
    let executor = Arc::new(ToolExecutor::builder(tools).build().unwrap());
    let http = McpHttpServer::bind(
        Arc::clone(&executor),
        ([127, 0, 0, 1], 0).into(),
        ServeOptions::default(),
    )
    .await
    .unwrap();
    let url = http.url();
    let stop = http.shutdown_token();
    tokio::spawn(http.run());
    let client = stateless(&url, Person::Approves).await;

    let filter = rmcp::model::SubscriptionFilter::builder()
        .tools_list_changed()
        .prompts_list_changed()
        .build();
    let mut listening = client.peer().listen(filter).await.unwrap();
    assert_eq!(
        listening.acknowledged(),
        &rmcp::model::SubscriptionFilter::builder()
            .tools_list_changed()
            .build(),
        "only what the server offers"
    );
    executor
        .shared_registry()
        .update(|tools| tools.register(WriteNote).map(drop))
        .unwrap();
    let heard = tokio::time::timeout(std::time::Duration::from_secs(10), listening.next())
        .await
        .expect("told within seconds")
        .unwrap()
        .expect("a notification");
    assert!(
        matches!(
            heard,
            rmcp::model::ServerNotification::ToolListChangedNotification(_)
        ),
        "{heard:?}"
    );
    let listed = client.list_tools(None).await.unwrap();
    let names: Vec<&str> = listed.tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.contains(&"write_note"), "{names:?}");
    stop.cancel();
}
