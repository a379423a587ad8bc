//! Model endpoints that attack the host, each from a finding: an answer
//! that never ends, whole or streamed; an error body that never ends; a
//! `Retry-After` of 1e20 seconds; a redirect to another host, which must
//! not carry the key there.

use std::sync::Arc;
use std::time::Duration;

use crate::loopback::{Reply, Script, serve};
use iris::model::{
    AnthropicMessages, MAX_ANSWER_BYTES, Message, Model, ModelDelta, ModelError, ModelOptions,
    ModelRequest, OpenAiChat, RetryPolicy,
};

const KEY: &str = "sk-hostile-secret";

const ONCE: RetryPolicy = RetryPolicy {
    retries: 0,
    base_delay: Duration::from_millis(10),
    max_delay: Duration::from_millis(200),
};

async fn openai(script: &Arc<Script>) -> OpenAiChat {
    let endpoint = serve(Arc::clone(script)).await;
    let base = endpoint.trim_end_matches("/chat/completions").to_owned();
    OpenAiChat::new("gpt-test", KEY, &base, Duration::from_secs(60))
        .unwrap()
        .with_retries(ONCE)
}

async fn ask(model: &impl Model, streamed: bool) -> Result<String, ModelError> {
    let messages = vec![Message::User { text: "Hi".into() }];
    let options = ModelOptions::default();
    let request = ModelRequest {
        instructions: None,
        messages: &messages,
        tools: &[],
        options: &options,
        output: None,
    };
    let answer = if streamed {
        model
            .complete_streaming(request, &|_: ModelDelta<'_>| {})
            .await
    } else {
        model.complete(request).await
    };
    answer.map(|a| a.text.unwrap_or_default())
}

fn endless(status: u16, content_type: &'static str, chunk: &str) -> Reply {
    Reply::Endless(
        status,
        content_type,
        chunk.as_bytes().repeat((64 << 10) / chunk.len() + 1),
    )
}

#[tokio::test]
async fn an_answer_that_never_ends_is_cut_at_the_bound() {
    let script = Arc::new(Script::default());
    let model = openai(&script).await;
    script.replies.lock().unwrap().push_back(endless(
        200,
        "application/json",
        r#"{"padding": "xxxxxxxx"}, "#,
    ));
    let err = ask(&model, false)
        .await
        .expect_err("no answer is that long");
    let limit = format!("{} MiB", MAX_ANSWER_BYTES >> 20);
    assert!(err.to_string().contains(&limit), "{err}");

    // Streamed: events that each fit, but never stop coming.
    let model = model.streaming(true);
    // Each padded to 64 KiB: the bound is reached in a few hundred events.
    let event = format!(
        r#"data: {{"choices": [{{"index": 0, "delta": {{"content": "la"}}, "finish_reason": null}}], "padding": "{}"}}"#,
        "x".repeat(64 << 10)
    );
    script.replies.lock().unwrap().push_back(endless(
        200,
        "text/event-stream",
        &format!("{event}\n\n"),
    ));
    let err = ask(&model, true).await.expect_err("no stream is that long");
    assert!(err.to_string().contains(&limit), "{err}");
}

#[tokio::test]
async fn an_error_body_that_never_ends_is_quoted_from_its_start() {
    let script = Arc::new(Script::default());
    let model = openai(&script).await;
    script
        .replies
        .lock()
        .unwrap()
        .push_back(endless(500, "application/json", "down "));
    let err = ask(&model, false).await.expect_err("a server error");
    let message = err.to_string();
    assert!(
        message.contains("HTTP 500") && message.contains("down down"),
        "{message}"
    );
    assert!(
        message.len() < 1_000,
        "only the start is quoted: {} bytes",
        message.len()
    );
}

#[tokio::test]
async fn a_retry_after_of_any_size_waits_the_longest_wait_at_most() {
    let script = Arc::new(Script::default());
    let model = openai(&script)
        .await
        .with_retries(RetryPolicy { retries: 1, ..ONCE });
    script.replies.lock().unwrap().extend([
        Reply::WithHeaders(429, "Retry-After: 1e20\r\n".into(), "{}".into()),
        Reply::Status(
            200,
            r#"{"choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello."}, "finish_reason": "stop"}]}"#.into(),
        ),
    ]);
    let answer = tokio::time::timeout(Duration::from_secs(10), ask(&model, false))
        .await
        .expect("the policy's longest wait bounds Retry-After")
        .expect("the retry succeeds");
    assert_eq!(answer, "Hello.");
}

#[tokio::test]
async fn a_redirect_is_reported_and_never_followed_with_the_key() {
    let elsewhere = Arc::new(Script::default());
    let target = serve(Arc::clone(&elsewhere)).await;
    let script = Arc::new(Script::default());
    let endpoint = serve(Arc::clone(&script)).await;
    let base = endpoint.trim_end_matches("/chat/completions").to_owned();
    let model = AnthropicMessages::new("claude-test", KEY, &base, Duration::from_secs(5))
        .unwrap()
        .with_retries(ONCE);
    script.replies.lock().unwrap().push_back(Reply::WithHeaders(
        307,
        format!("Location: {target}\r\n"),
        "{}".into(),
    ));
    let err = ask(&model, false)
        .await
        .expect_err("a redirect is not an answer");
    let message = err.to_string();
    assert!(
        message.contains("HTTP 307") && message.contains("redirect") && message.contains(&target),
        "{message}"
    );
    assert!(!message.contains(KEY));
    assert!(
        elsewhere.requests.lock().unwrap().is_empty(),
        "nothing, and so no key, went to the other host"
    );
}

/// A stream with more tool calls than an answer may hold fails, naming the
/// bound, instead of silently dropping the calls past it.
#[tokio::test]
async fn a_stream_past_the_call_bound_fails_instead_of_dropping_calls() {
    let script = Arc::new(Script::default());
    let mut body = String::new();
    for index in 0..1_025 {
        let chunk = serde_json::json!({"choices": [{"delta": {"tool_calls": [{
            "index": index, "id": format!("call_{index}"),
            "function": {"name": "ping", "arguments": "{}"}
        }]}}]});
        body.push_str("data: ");
        body.push_str(&chunk.to_string());
        body.push_str("\n\n");
    }
    body.push_str("data: [DONE]\n\n");
    script
        .replies
        .lock()
        .unwrap()
        .push_back(Reply::Events(body));
    let error = ask(&openai(&script).await.streaming(true), true)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("more than 1024 tool calls"),
        "{error}"
    );
}

/// A server that quotes the key it was sent, in an error body or in a
/// stream's error event: the error the host sees never holds the key.
#[tokio::test]
async fn a_key_the_server_echoes_never_reaches_the_error() {
    let script = Arc::new(Script::default());
    let echoed = format!(r#"{{"error": {{"message": "key {KEY} is not valid"}}}}"#);
    script
        .replies
        .lock()
        .unwrap()
        .push_back(Reply::Status(401, echoed.clone()));
    let whole = ask(&openai(&script).await, false).await.unwrap_err();
    assert!(!whole.to_string().contains(KEY), "{whole}");
    assert!(whole.to_string().contains("[redacted]"), "{whole}");

    let script = Arc::new(Script::default());
    script
        .replies
        .lock()
        .unwrap()
        .push_back(Reply::Events(format!("data: {echoed}\n\n")));
    let streamed = ask(&openai(&script).await.streaming(true), true)
        .await
        .unwrap_err();
    assert!(!streamed.to_string().contains(KEY), "{streamed}");
    assert!(streamed.to_string().contains("[redacted]"), "{streamed}");
}

/// A key never travels in clear text to another machine; a local server
/// on plain HTTP still works.
#[test]
fn a_key_is_never_sent_over_plain_http_to_another_machine() {
    let timeout = Duration::from_secs(5);
    for remote in ["http://192.0.2.1/v1", "http://models.example.com/v1"] {
        let error = OpenAiChat::new("m", KEY, remote, timeout).unwrap_err();
        assert!(error.to_string().contains("clear text"), "{error}");
    }
    for local in [
        "http://127.0.0.1:9/v1",
        "http://localhost:9/v1",
        "http://[::1]:9/v1",
        "https://models.example.com/v1",
    ] {
        assert!(OpenAiChat::new("m", KEY, local, timeout).is_ok(), "{local}");
    }
    // Without a key nothing secret travels: a plain-HTTP server on the
    // network is the host's choice.
    assert!(OpenAiChat::new("m", "", "http://192.0.2.1/v1", timeout).is_ok());
    let error = OpenAiChat::new("m", KEY, "file:///etc/passwd", timeout).unwrap_err();
    assert!(error.to_string().contains("uses `file`"), "{error}");
}
