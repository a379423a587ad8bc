//! Model endpoints that attack the host, each from a finding: an answer
//! that never ends, whole or streamed; an error body that never ends; a
//! `Retry-After` of 1e20 seconds; a redirect to another host, which must
//! not carry the key there.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a scripted scenario fails loudly"
)]

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
