//! The Decision backend against a real HTTP server on loopback: a success
//! with its metadata, and every failure mode as a tool error with no
//! fallback to the local ranker.
//!
//! One test function on purpose: it sets the API key variable, which must
//! not race with other threads of this binary.
#![allow(
    clippy::unwrap_used,
    clippy::too_many_lines,
    reason = "a scripted scenario reads best in one piece"
)]

use std::sync::Arc;
use std::time::Duration;

use iris::discovery::decision::DecisionError;
use iris::discovery::decision::{DecisionBackend, DecisionConfig};
use iris::discovery::{Discovery, ToolSearch};
use iris::{
    RunId, ToolContext, ToolErrorKind, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock,
};
use serde_json::{Value, json};

/// Tell the current time.
#[iris::tool(read_only)]
fn current_time() -> &'static str {
    "12:00"
}

/// Get the weather forecast for a city.
#[iris::tool(read_only, deferred)]
fn weather_forecast(
    /// The city.
    city: String,
) -> String {
    format!("sunny in {city}")
}

/// Convert an amount of money from one currency to another.
#[iris::tool(read_only, deferred)]
fn convert_currency(
    /// The amount.
    amount: f64,
) -> String {
    amount.to_string()
}

#[path = "loopback.rs"]
mod loopback;

use loopback::{Reply, Script, serve};

fn completion(content: &str) -> Reply {
    Reply::Status(
        200,
        json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 9},
        })
        .to_string(),
    )
}

async fn search(endpoint: &str, timeout: f64, intents: Value) -> (ToolResult, Arc<Discovery>) {
    search_retrying(endpoint, timeout, 0, intents).await
}

async fn search_retrying(
    endpoint: &str,
    timeout: f64,
    retries: u32,
    intents: Value,
) -> (ToolResult, Arc<Discovery>) {
    let yaml = format!(
        "tools: {{discovery: true}}\nprovider: loopback\nmodel: choose-1\nendpoint: {endpoint}\ntimeout: {timeout}\nretries: {retries}\n"
    );
    let config = DecisionConfig::parse(&yaml, "decision.yaml".as_ref()).unwrap();
    let backend = DecisionBackend::for_discovery(config, "decision.yaml".as_ref()).unwrap();
    let mut registry = ToolRegistry::new();
    registry
        .register(ToolSearch)
        .unwrap()
        .register(CurrentTime)
        .unwrap()
        .register(WeatherForecast)
        .unwrap()
        .register(ConvertCurrency)
        .unwrap();
    let registry = Arc::new(registry);
    let discovery = Arc::new(
        Discovery::builder(Arc::clone(&registry))
            .backend(backend)
            .build()
            .unwrap(),
    );
    let run = RunId::new("run");
    let request = discovery.request(&registry.view(), &run);
    let cx = ToolContext::builder(".", run)
        .offered(request.offered)
        .shared_state(Arc::clone(&discovery))
        .build();
    let executor = ToolExecutor::builder(registry).build().unwrap();
    let outcome = executor
        .execute_one(
            ToolUseBlock::new("call_1", "tool_search", json!({"intents": intents})),
            &cx,
        )
        .await;
    (outcome.result().cloned().unwrap(), discovery)
}

#[tokio::test]
async fn decision_backend_over_loopback_http() {
    // No key: refused when the backend is built, naming the variable.
    let config = DecisionConfig::parse(
        "tools: {discovery: true}\nprovider: loopback\nmodel: m\nendpoint: http://127.0.0.1:9/\n",
        "decision.yaml".as_ref(),
    )
    .unwrap();
    let err = DecisionBackend::for_discovery(config.clone(), "decision.yaml".as_ref()).unwrap_err();
    assert!(matches!(err, DecisionError::MissingApiKey { .. }));
    assert!(
        err.to_string().contains("IRIS_PROVIDER_API_KEYS__LOOPBACK"),
        "{err}"
    );
    let off = DecisionConfig {
        tools: iris::discovery::decision::DecisionFeatures { discovery: false },
        ..config
    };
    assert!(matches!(
        DecisionBackend::for_discovery(off, "decision.yaml".as_ref()),
        Err(DecisionError::DecisionFeatureOff { .. })
    ));

    #[allow(
        unsafe_code,
        reason = "the only test of this binary sets the variable before any other thread reads the environment"
    )]
    unsafe {
        std::env::set_var("IRIS_PROVIDER_API_KEYS__LOOPBACK", "sk-loopback");
    }
    let script = Arc::new(Script::default());
    let endpoint = serve(Arc::clone(&script)).await;
    let intents = json!(["what will the weather be in Oslo", "book a flight to Rome"]);

    // Success: one structured request for both intents, metadata on the result.
    script
        .replies
        .lock()
        .unwrap()
        .push_back(completion(r#"{"choices": ["weather_forecast", null]}"#));
    let (result, discovery) = search(&endpoint, 5.0, intents.clone()).await;
    assert!(!result.is_error(), "{}", result.text_content());
    let data = result.data().unwrap();
    assert_eq!(data["intents"][0]["selected"], "weather_forecast");
    assert!(data["intents"][1]["selected"].is_null());
    assert_eq!(data["backend"], "decision");
    assert_eq!(
        result.stats()["decision"],
        json!({
            "feature": "discovery",
            "provider": "loopback",
            "model": "choose-1",
            "question_count": 2,
            "usage": {"input_tokens": 120, "output_tokens": 9},
        })
    );
    assert_eq!(discovery.disclosed(&RunId::new("run")).len(), 1);
    let (head, body) = script.requests.lock().unwrap().pop().unwrap();
    assert!(
        head.to_ascii_lowercase()
            .contains("authorization: bearer sk-loopback"),
        "{head}"
    );
    assert_eq!(body["model"], "choose-1");
    assert_eq!(body["response_format"]["type"], "json_schema");
    let choices = &body["response_format"]["json_schema"]["schema"]["properties"]["choices"];
    assert_eq!(
        choices["items"]["anyOf"][0]["enum"],
        json!(["weather_forecast", "convert_currency"])
    );
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("1. what will the weather be in Oslo") && user.contains("2. book a flight")
    );
    assert!(
        !user.contains("current_time"),
        "eager tools are no candidates"
    );

    // A server error is retried, as for every model: the second answer counts.
    script.replies.lock().unwrap().extend([
        Reply::Status(503, r#"{"error": "overloaded"}"#.into()),
        completion(r#"{"choices": ["weather_forecast", "convert_currency"]}"#),
    ]);
    let asked_before = script.requests.lock().unwrap().len();
    let (result, _) = search_retrying(&endpoint, 5.0, 1, intents.clone()).await;
    assert!(!result.is_error(), "{}", result.text_content());
    assert_eq!(
        result.data().unwrap()["intents"][1]["selected"],
        "convert_currency"
    );
    assert_eq!(script.requests.lock().unwrap().len() - asked_before, 2);

    // Every failure (retries off) is a tool error with the metadata, and
    // nothing local.
    let failures: Vec<(Reply, f64, &str)> = vec![
        (
            completion(r#"{"choices": ["current_time", null]}"#),
            5.0,
            "not among the tools",
        ),
        (
            completion(r#"{"choices": ["weather_forecast"]}"#),
            5.0,
            "holds 1 choices for 2 intents",
        ),
        (
            completion("weather_forecast, probably"),
            5.0,
            "not the JSON asked for",
        ),
        (
            Reply::Status(500, r#"{"error": "overloaded"}"#.into()),
            5.0,
            "HTTP 500",
        ),
        (
            Reply::Sleep(Duration::from_secs(3)),
            0.3,
            "did not answer within 0.3 seconds",
        ),
    ];
    for (reply, timeout, expected) in failures {
        script.replies.lock().unwrap().push_back(reply);
        let (result, discovery) = search(&endpoint, timeout, intents.clone()).await;
        assert_eq!(
            result.error_kind(),
            Some(ToolErrorKind::Execution),
            "{}",
            result.text_content()
        );
        let text = result.text_content();
        assert!(
            text.starts_with("tool_search failed: ") && text.contains(expected),
            "{text}"
        );
        assert!(
            result.data().is_none(),
            "no candidates from anywhere else: {text}"
        );
        assert_eq!(result.stats()["decision"]["question_count"], 2);
        assert!(discovery.disclosed(&RunId::new("run")).is_empty());
    }

    // An unreachable endpoint is a tool error too: a port that was just
    // free, so nothing answers on it.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let (result, _) = search(
        &format!("http://{closed}/v1/chat/completions"),
        2.0,
        intents,
    )
    .await;
    assert!(
        result.text_content().contains("could not be reached"),
        "{}",
        result.text_content()
    );
}
