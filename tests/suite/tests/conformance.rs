//! The conformance scenarios: the kit's scripted model and the OpenAI Chat
//! Completions adapter (through a fake provider answering in its wire
//! format) pass every one; a model that drops calls fails, named.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use iris::model::{Model, ModelResponse, OpenAiChat};
use iris::serde_json::{Value, json};
use iris::testing::cassette::{CassetteServer, RecordedHttpResponse};
use iris::testing::conformance::{self, SCENARIOS};
use iris::testing::{FnModel, ScriptedModel, Turn};
use iris::tool::BoxFuture;

#[tokio::test]
async fn the_scripted_model_conforms() {
    let make = |answers: Vec<ModelResponse>| -> BoxFuture<'static, Arc<dyn Model>> {
        Box::pin(async move {
            Arc::new(ScriptedModel::new(answers.into_iter().map(Turn::from))) as Arc<dyn Model>
        })
    };
    let report = conformance::check(&make).await;
    assert_eq!(report.passed, SCENARIOS, "{report:?}");
    report.assert_conformant();
}

#[tokio::test]
async fn a_model_that_drops_calls_fails_named() {
    let make = |answers: Vec<ModelResponse>| -> BoxFuture<'static, Arc<dyn Model>> {
        Box::pin(async move {
            let answers = Mutex::new(answers.into_iter());
            Arc::new(FnModel::new(move |_| {
                let mut answer = answers.lock().unwrap().next().unwrap_or_default();
                answer.tool_calls.truncate(1);
                Ok(answer)
            })) as Arc<dyn Model>
        })
    };
    let report = conformance::check(&make).await;
    let failed: Vec<&str> = report.failed.iter().map(|(name, _)| *name).collect();
    assert_eq!(failed, ["parallel calls"], "{report:?}");
    assert!(
        report.failed[0]
            .1
            .contains("three calls (a, b, c) in order; it held [\"a\"]"),
        "{}",
        report.failed[0].1
    );
    let panic = std::panic::catch_unwind(|| report.assert_conformant()).unwrap_err();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("fails 1 of 8 conformance scenarios:\n- parallel calls:"),
        "{message}"
    );
}

/// `answer` in the Chat Completions wire format.
fn chat_completion(answer: &ModelResponse) -> Value {
    let tool_calls: Vec<Value> = answer
        .tool_calls
        .iter()
        .map(|call| {
            json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.input.to_string()}
            })
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": answer.text});
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    json!({
        "id": "chatcmpl-conformance",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-4.1-mini",
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": if answer.tool_calls.is_empty() { "stop" } else { "tool_calls" }
        }],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}

/// Runs the conformance scenarios on the adapter `adapter` makes for a
/// base URL, each scenario's answers served whole, in the provider's wire
/// format as `wire` writes them, by a fake provider at `version_path`.
pub(crate) async fn conforms_through_a_fake_provider(
    wire: fn(&ModelResponse) -> Value,
    version_path: &'static str,
    adapter: fn(&str) -> Arc<dyn Model>,
) {
    // The fake providers live as long as the check.
    let servers: Arc<Mutex<Vec<CassetteServer>>> = Arc::default();
    let make = move |answers: Vec<ModelResponse>| -> BoxFuture<'static, Arc<dyn Model>> {
        let servers = Arc::clone(&servers);
        Box::pin(async move {
            let responses = answers
                .iter()
                .map(|answer| RecordedHttpResponse {
                    status: 200,
                    body: Some(wire(answer)),
                    events: None,
                })
                .collect();
            let server = CassetteServer::answering(responses).await.unwrap();
            let base = format!("{}{version_path}", server.url());
            servers.lock().unwrap().push(server);
            adapter(&base)
        })
    };
    conformance::check(&make).await.assert_conformant();
}

#[tokio::test]
async fn the_openai_chat_adapter_conforms_through_a_fake_provider() {
    conforms_through_a_fake_provider(chat_completion, "/v1", |base| {
        Arc::new(OpenAiChat::new("gpt-4.1-mini", "", base, Duration::from_secs(30)).unwrap())
    })
    .await;
}
