//! Cassettes through the real adapters: one per wire format (OpenAI Chat
//! Completions, OpenAI Responses, Anthropic Messages and Gemini streamed), their
//! answers written from the providers' documented examples, replayed
//! through a run; a drifted request fails naming its first difference; a
//! recording keeps no key header and refuses to save a key; real requests
//! can be blocked.
//!
//! The committed cassettes were recorded by `IRIS_RECORD_CASSETTES=1 cargo
//! test -p iris-test-suite --test suite cassettes`, through a loopback
//! provider answering with the documented examples; set
//! `IRIS_CASSETTE_UPSTREAM_OPENAI`, `IRIS_CASSETTE_UPSTREAM_ANTHROPIC` or
//! `IRIS_CASSETTE_UPSTREAM_GEMINI` to record from a real provider instead.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use iris::agent::{Agent, AgentRunner, RunContext};
use iris::model::{AnthropicMessages, GeminiModel, Model, OpenAiChat, OpenAiResponses};
use iris::serde_json::{Value, json};
use iris::testing::cassette::{CASSETTE_FORMAT, Cassette, CassetteServer, Interaction};
use iris::testing::{approve_all, run_to_end};
use iris::{RunId, ToolExecutor, ToolRegistry};

use crate::loopback::{Reply, Script, serve};

/// Look up an order.
#[iris::tool(read_only)]
fn order_status(
    /// The order number.
    number: u32,
) -> String {
    format!("order {number}: 2 teas, unpaid")
}

fn cassette_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/cassettes/{name}.json"))
}

/// The run every cassette holds: the model looks the order up, then answers.
async fn run_with(
    model: Arc<dyn Model>,
) -> Result<iris::testing::Transcript, iris::agent::RunError> {
    let mut registry = ToolRegistry::new();
    registry.register(OrderStatus).unwrap();
    // An observer makes the runner stream, so a streaming adapter reads
    // the cassette's events.
    let executor = ToolExecutor::builder(registry)
        .observer(iris::testing::EventLog::new())
        .build()
        .unwrap();
    let agent = Agent::builder(executor)
        .name("orders")
        .instructions("Answer questions about orders.")
        .build()
        .unwrap();
    let runner = AgentRunner::new(agent, model);
    let dir = tempfile::tempdir().unwrap();
    let cx = RunContext::new(dir.path(), RunId::new("cassette-run"));
    run_to_end(&runner, "What is the state of order 7?", &cx, approve_all())
        .await
        .map(|(_, transcript)| transcript)
}

/// The adapter of `wire` at `base` (Gemini and Anthropic streaming).
pub(crate) fn adapter(wire: &str, base: &str) -> Arc<dyn Model> {
    let timeout = Duration::from_secs(30);
    let no_retries = iris::model::RetryPolicy {
        retries: 0,
        ..iris::model::RetryPolicy::default()
    };
    match wire {
        "openai_chat" => Arc::new(
            OpenAiChat::new("gpt-4.1-mini", "", base, timeout)
                .unwrap()
                .with_retries(no_retries),
        ),
        "openai_responses" => Arc::new(
            OpenAiResponses::new("gpt-4.1-mini", "", base, timeout)
                .unwrap()
                .with_retries(no_retries),
        ),
        "gemini" => Arc::new(
            GeminiModel::new("gemini-2.5-flash", "", base, timeout)
                .unwrap()
                .with_retries(no_retries)
                .streaming(true),
        ),
        _ => Arc::new(
            AnthropicMessages::new("claude-sonnet-4-5", "", base, timeout)
                .unwrap()
                .with_retries(no_retries)
                .streaming(true),
        ),
    }
}

const WIRES: [&str; 4] = ["openai_chat", "openai_responses", "anthropic", "gemini"];

#[tokio::test]
async fn each_wire_format_replays_through_its_adapter() {
    if std::env::var("IRIS_RECORD_CASSETTES").is_ok() {
        record_all().await;
    }
    for wire in WIRES {
        let cassette = Cassette::load(cassette_path(wire)).unwrap();
        let server = CassetteServer::replay(cassette).await.unwrap();
        let transcript = run_with(adapter(wire, &format!("{}/v1", server.url())))
            .await
            .unwrap_or_else(|e| panic!("{wire}: {e}"));
        server.finish();
        transcript
            .assert_called_with("order_status", &json!({"number": 7}))
            .assert_answer_contains("2 teas and is unpaid");
    }
}

#[tokio::test]
async fn a_drifted_request_fails_naming_the_difference() {
    let mut cassette = Cassette::load(cassette_path("openai_chat")).unwrap();
    // The instructions the cassette expects are not the ones the run sends.
    let messages = cassette.interactions[0].request.body["messages"]
        .as_array_mut()
        .unwrap();
    messages[0]["content"] = json!("Answer questions about invoices.");
    let server = CassetteServer::replay(cassette).await.unwrap();
    let error = run_with(adapter("openai_chat", &format!("{}/v1", server.url())))
        .await
        .unwrap_err()
        .to_string();
    let difference = r#"$.messages[0].content: expected "Answer questions about invoices.", got "Answer questions about orders.""#;
    assert!(error.contains(difference), "{error}");
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.finish()))
        .expect_err("finish fails on a drifted request");
    let message = failed.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("request 1 differs from the cassette at"),
        "{message}"
    );
    assert!(message.contains(difference), "{message}");
}

#[tokio::test]
async fn a_recording_keeps_no_key_and_refuses_to_save_one() {
    let provider = documented_provider("openai_chat");
    let upstream = serve(Arc::clone(&provider)).await;
    let upstream = upstream.trim_end_matches("/chat/completions").to_owned();
    let through = CassetteServer::record(&upstream).await.unwrap();
    let key = "sk-test-0123456789abcdefghijklmnop";
    let model: Arc<dyn Model> = Arc::new(
        OpenAiChat::new(
            "gpt-4.1-mini",
            key,
            &format!("{}/v1", through.url()),
            Duration::from_secs(30),
        )
        .unwrap(),
    );
    run_with(model).await.unwrap();
    // The key went to the provider, in its header, and nowhere else.
    let first_head = provider.requests.lock().unwrap()[0].0.to_ascii_lowercase();
    assert!(first_head.contains(&format!("authorization: bearer {key}")));
    let kept = through.recorded();
    assert_eq!(kept.interactions.len(), 2);
    assert!(!iris::serde_json::to_string(&kept).unwrap().contains(key));
    let dir = tempfile::tempdir().unwrap();
    through.save(dir.path().join("clean.json")).unwrap();
    assert_eq!(Cassette::load(dir.path().join("clean.json")).unwrap(), kept);

    // A key in a request body is refused, with where it was.
    let provider = documented_provider("openai_chat");
    let upstream = serve(Arc::clone(&provider)).await;
    let leaky = CassetteServer::record(upstream.trim_end_matches("/chat/completions"))
        .await
        .unwrap();
    let model = adapter("openai_chat", &format!("{}/v1", leaky.url()));
    let mut registry = ToolRegistry::new();
    registry.register(OrderStatus).unwrap();
    let agent = Agent::builder(ToolExecutor::builder(registry).build().unwrap())
        .name("orders")
        .build()
        .unwrap();
    let runner = AgentRunner::new(agent, model);
    let cx = RunContext::new(dir.path(), RunId::new("leaky"));
    let _ = runner.run(format!("my key is {key}"), &cx).await;
    let refused = leaky
        .save(dir.path().join("leaky.json"))
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains(
            "shaped like a key (sk-tes… at $.interactions[0].request.body.messages[0].content)"
        ),
        "{refused}"
    );
    assert!(!dir.path().join("leaky.json").exists());
}

#[tokio::test]
async fn real_model_requests_can_be_blocked() {
    // Only this test's process-wide switch; loopback servers still answer.
    iris::testing::block_real_model_requests();
    let model = OpenAiChat::new(
        "gpt-4.1-mini",
        "",
        "https://api.openai.com/v1",
        Duration::from_secs(5),
    )
    .unwrap();
    let error = run_with(Arc::new(model)).await.unwrap_err().to_string();
    assert!(
        error.contains("model requests to other machines are blocked"),
        "{error}"
    );
    let cassette = Cassette::load(cassette_path("openai_chat")).unwrap();
    let server = CassetteServer::replay(cassette).await.unwrap();
    run_with(adapter("openai_chat", &format!("{}/v1", server.url())))
        .await
        .unwrap();
    server.finish();
}

/// The documented answers of `wire`: JSON bodies, or event streams.
fn documented(wire: &str) -> Vec<Value> {
    let all: Value =
        iris::serde_json::from_str(include_str!("cassettes/documented_answers.json")).unwrap();
    all[wire].as_array().unwrap().clone()
}

/// A loopback provider answering with the documented answers of `wire`.
fn documented_provider(wire: &str) -> Arc<Script> {
    let provider = Arc::new(Script::default());
    provider
        .replies
        .lock()
        .unwrap()
        .extend(documented(wire).into_iter().map(as_reply));
    provider
}

fn as_reply(answer: Value) -> Reply {
    use std::fmt::Write as _;
    match answer {
        Value::Array(events) => {
            let mut body = String::new();
            for event in events {
                // Gemini's events have no name.
                if let Some(name) = event["event"].as_str() {
                    let _ = writeln!(body, "event: {name}");
                }
                let _ = write!(body, "data: {}\n\n", event["data"]);
            }
            Reply::Events(body)
        }
        body => Reply::Status(200, body.to_string()),
    }
}

/// Records each wire's cassette through a loopback provider that answers
/// with the documented examples (or the real provider at
/// `IRIS_CASSETTE_UPSTREAM_OPENAI` / `_ANTHROPIC`, whose key the recorder
/// forwards from the adapter's header and never keeps), and writes it.
async fn record_all() {
    for wire in WIRES {
        let real = match wire {
            "anthropic" => "IRIS_CASSETTE_UPSTREAM_ANTHROPIC",
            "gemini" => "IRIS_CASSETTE_UPSTREAM_GEMINI",
            _ => "IRIS_CASSETTE_UPSTREAM_OPENAI",
        };
        let upstream = if let Ok(upstream) = std::env::var(real) {
            upstream
        } else {
            serve(documented_provider(wire))
                .await
                .trim_end_matches("/chat/completions")
                .to_owned()
        };
        let through = CassetteServer::record(&upstream).await.unwrap();
        run_with(adapter(wire, &format!("{}/v1", through.url())))
            .await
            .unwrap_or_else(|e| panic!("recording {wire}: {e}"));
        let kept = through.recorded();
        assert_eq!(kept.format, CASSETTE_FORMAT);
        assert!(
            kept.interactions
                .iter()
                .all(|i: &Interaction| i.response.status == 200)
        );
        through.save(cassette_path(wire)).unwrap();
    }
}
