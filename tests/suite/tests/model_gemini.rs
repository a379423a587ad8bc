//! The Gemini adapter against a loopback server: every request parses as
//! a strict model of `generateContent` (written from the API's public
//! reference; unknown fields refused), the key travels in its header only,
//! call ids are echoed with their responses, the responses of a step share
//! one turn, a call's thought signature goes back verbatim on its part (only
//! the first of parallel calls carries one), answers whole and streamed are
//! read with their usage, and the adapter passes the testing kit's
//! conformance scenarios through a fake provider speaking Gemini's wire.
//! (Its recorded exchange, streamed, is replayed in `cassettes.rs`.)

use std::sync::{Arc, Mutex};
use std::time::Duration;

use iris::model::{
    FinishReason, GeminiModel, Message, Model, ModelOptions, ModelRequest, ModelResponse,
    RetryPolicy,
};
use iris::serde_json::{Value, json};
use iris::testing::cassette::StreamEvent;
use iris::{Tool, ToolResult, ToolUseBlock};
use serde::Deserialize;

use crate::loopback::{Reply, Script, serve};
use crate::model_anthropic::Price;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Request {
    contents: Vec<Content>,
    #[serde(default)]
    system_instruction: Option<Content>,
    #[serde(default)]
    tools: Vec<Tools>,
    #[serde(default)]
    tool_config: Option<ToolConfig>,
    #[serde(default)]
    generation_config: Option<GenerationConfig>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Content {
    #[serde(default)]
    role: Option<String>,
    parts: Vec<Part>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Part {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    function_call: Option<FunctionCall>,
    #[serde(default)]
    function_response: Option<FunctionResponse>,
    #[serde(default)]
    inline_data: Option<Value>,
    #[serde(default)]
    thought_signature: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FunctionCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    args: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FunctionResponse {
    #[serde(default)]
    id: Option<String>,
    name: String,
    response: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Tools {
    function_declarations: Vec<Declaration>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Declaration {
    name: String,
    description: String,
    #[serde(default)]
    parameters_json_schema: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ToolConfig {
    function_calling_config: FunctionCallingConfig,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FunctionCallingConfig {
    mode: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct GenerationConfig {
    #[serde(default)]
    temperature: Option<f64>,
    #[serde(default)]
    max_output_tokens: Option<u32>,
}

const KEY: &str = "AIza-loopback-secret-key";

/// Two parallel calls, the first carrying the thought signature (as the
/// API documents), with usage that counts thinking apart.
fn two_calls() -> Value {
    json!({
        "candidates": [{
            "content": {"role": "model", "parts": [
                {"functionCall": {"id": "fc-1", "name": "price", "args": {"item": "tea"}}, "thoughtSignature": "c2lnbmF0dXJlLW9uZQ=="},
                {"functionCall": {"id": "fc-2", "name": "price", "args": {"item": "milk"}}}
            ]},
            "finishReason": "STOP", "index": 0
        }],
        "usageMetadata": {"promptTokenCount": 120, "cachedContentTokenCount": 100, "candidatesTokenCount": 20, "thoughtsTokenCount": 35, "totalTokenCount": 175},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "resp-1"
    })
}

fn said(text: &str) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 160, "candidatesTokenCount": 8, "totalTokenCount": 168},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "resp-2"
    })
}

fn request<'a>(
    messages: &'a [Message],
    tools: &'a [iris::definition::ToolSpec],
    options: &'a ModelOptions,
) -> ModelRequest<'a> {
    ModelRequest {
        instructions: Some("Be brief."),
        messages,
        tools,
        options,
        output: None,
    }
}

#[tokio::test]
async fn requests_follow_generate_content_and_signatures_go_back() {
    let script = Arc::new(Script::default());
    let endpoint = serve(Arc::clone(&script)).await;
    let base = endpoint.trim_end_matches("/chat/completions").to_owned();
    let model = GeminiModel::new("gemini-2.5-flash", KEY, &base, Duration::from_secs(5))
        .unwrap()
        .with_retries(RetryPolicy {
            retries: 1,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        });
    script.replies.lock().unwrap().extend([
        Reply::Status(
            503,
            r#"{"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}"#.into(),
        ),
        Reply::Status(200, two_calls().to_string()),
        Reply::Status(200, said("Tea costs 3; no milk.").to_string()),
    ]);
    let tools = [Price.definition().spec()];
    let options = ModelOptions {
        max_tokens: Some(300),
        temperature: Some(0.2),
        ..ModelOptions::default()
    };
    let mut messages = vec![Message::User {
        text: "Prices of tea and milk?".into(),
    }];
    let first = model
        .complete(request(&messages, &tools, &options))
        .await
        .expect("after one retry");
    assert_eq!(first.finish, FinishReason::ToolCalls);
    let calls: Vec<(&str, &Value, Option<&str>)> = first
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), &c.input, c.signature.as_deref()))
        .collect();
    assert_eq!(
        calls,
        [
            (
                "fc-1",
                &json!({"item": "tea"}),
                Some("c2lnbmF0dXJlLW9uZQ==")
            ),
            ("fc-2", &json!({"item": "milk"}), None),
        ]
    );
    assert_eq!(
        (first.usage.input_tokens, first.usage.cached_input_tokens),
        (120, 100),
        "the prompt count holds the cached tokens"
    );
    assert_eq!(
        (first.usage.output_tokens, first.usage.reasoning_tokens),
        (55, 35),
        "the answer's count holds the thinking"
    );
    messages.push(Message::Assistant {
        text: None,
        tool_calls: first.tool_calls.clone(),
    });
    messages.push(Message::Tool {
        call_id: "fc-1".into(),
        tool: "price".into(),
        result: ToolResult::text("tea: 3"),
    });
    messages.push(Message::Tool {
        call_id: "fc-2".into(),
        tool: "price".into(),
        result: ToolResult::error(iris::ToolErrorKind::NotFound, "no milk"),
    });
    let second = model
        .complete(request(&messages, &tools, &options))
        .await
        .unwrap();
    assert_eq!(second.text.as_deref(), Some("Tea costs 3; no milk."));
    assert_eq!(second.finish, FinishReason::Stop);

    let requests = script.requests.lock().unwrap();
    assert_eq!(requests.len(), 3, "the 503 was retried");
    check_second_request(&requests[1].0, &requests[2].1);
    assert!(!format!("{model:?}").contains(KEY));
}

/// The key in its header, and the turn after two calls: the responses in
/// one turn with their ids, the signature back on the first call's part.
fn check_second_request(head: &str, body: &Value) {
    assert!(
        head.starts_with("POST /v1/models/gemini-2.5-flash:generateContent HTTP/1.1"),
        "{head}"
    );
    assert!(
        head.to_ascii_lowercase()
            .contains(&format!("x-goog-api-key: {KEY}").to_ascii_lowercase())
    );
    assert!(
        !head.lines().next().unwrap().contains(KEY),
        "never in the URL"
    );
    let wire: Request = serde_json::from_value(body.clone()).expect("a valid request");
    assert_eq!(
        wire.system_instruction.unwrap().parts[0].text.as_deref(),
        Some("Be brief.")
    );
    let config = wire.generation_config.unwrap();
    assert_eq!(config.max_output_tokens, Some(300));
    assert_eq!(
        wire.tool_config.unwrap().function_calling_config.mode,
        "AUTO"
    );
    assert_eq!(wire.tools[0].function_declarations[0].name, "price");
    assert!(
        wire.tools[0].function_declarations[0]
            .parameters_json_schema
            .is_some()
    );
    let roles: Vec<&str> = wire
        .contents
        .iter()
        .filter_map(|c| c.role.as_deref())
        .collect();
    assert_eq!(
        roles,
        ["user", "model", "user"],
        "both responses share one turn"
    );
    let model_turn = &wire.contents[1].parts;
    assert_eq!(
        model_turn[0].thought_signature.as_deref(),
        Some("c2lnbmF0dXJlLW9uZQ=="),
        "the signature goes back on the part that carried it"
    );
    assert_eq!(model_turn[1].thought_signature, None);
    assert_eq!(
        model_turn[0].function_call.as_ref().unwrap().id.as_deref(),
        Some("fc-1")
    );
    let responses: Vec<(&str, &str)> = wire.contents[2]
        .parts
        .iter()
        .filter_map(|p| p.function_response.as_ref())
        .map(|r| (r.id.as_deref().unwrap(), r.name.as_str()))
        .collect();
    assert_eq!(responses, [("fc-1", "price"), ("fc-2", "price")]);
}

/// `answers` as Gemini would stream them: each text in pieces, each call
/// whole, usage and the finish reason in the last chunk.
fn gemini_stream(answer: &ModelResponse) -> Vec<StreamEvent> {
    let mut events = Vec::new();
    if let Some(text) = &answer.text {
        for piece in text.split_inclusive(' ') {
            events.push(json!({"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}], "responseId": "stream-1"}));
        }
    }
    let calls: Vec<Value> = answer
        .tool_calls
        .iter()
        .map(|c| json!({"functionCall": {"id": c.id, "name": c.name, "args": c.input}}))
        .collect();
    let mut last = json!({
        "candidates": [{"content": {"role": "model", "parts": calls}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "responseId": "stream-1"
    });
    if answer.tool_calls.is_empty() {
        last["candidates"][0]["content"]["parts"] = json!([{"text": ""}]);
    }
    events.push(last);
    events
        .into_iter()
        .map(|data| StreamEvent { event: None, data })
        .collect()
}

/// `events` as the body of a server-sent event stream.
fn sse(events: &[StreamEvent]) -> String {
    use std::fmt::Write as _;
    events.iter().fold(String::new(), |mut body, event| {
        let _ = write!(body, "data: {}\n\n", event.data);
        body
    })
}

/// `answer` in `generateContent`'s wire format.
fn generate_content(answer: &ModelResponse) -> Value {
    let mut parts: Vec<Value> = answer
        .text
        .iter()
        .map(|text| json!({"text": text}))
        .collect();
    parts.extend(
        answer
            .tool_calls
            .iter()
            .map(|c| json!({"functionCall": {"id": c.id, "name": c.name, "args": c.input}})),
    );
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "responseId": "conformance"
    })
}

/// The scenarios' runner asks whole answers (it has no observer to stream
/// to); the streamed wire is replayed through a run in `cassettes.rs`.
#[tokio::test]
async fn the_gemini_adapter_conforms() {
    crate::conformance::conforms_through_a_fake_provider(generate_content, "/v1beta", |base| {
        Arc::new(GeminiModel::new("gemini-2.5-flash", "", base, Duration::from_secs(30)).unwrap())
    })
    .await;
}

#[tokio::test]
async fn a_stream_is_read_as_it_arrives_and_a_broken_one_is_an_error() {
    let script = Arc::new(Script::default());
    let endpoint = serve(Arc::clone(&script)).await;
    let base = endpoint.trim_end_matches("/chat/completions").to_owned();
    let answer = ModelResponse {
        text: Some("Tea costs 3.".into()),
        ..ModelResponse::default()
    };
    let events = sse(&gemini_stream(&answer));
    // The same stream, broken off before its last chunk.
    let broken = sse(&gemini_stream(&answer)[..2]);
    script
        .replies
        .lock()
        .unwrap()
        .extend([Reply::Events(events), Reply::Events(broken)]);
    let model = GeminiModel::new("gemini-2.5-flash", KEY, &base, Duration::from_secs(5))
        .unwrap()
        .with_retries(RetryPolicy {
            retries: 0,
            ..RetryPolicy::default()
        })
        .streaming(true);
    let messages = vec![Message::User {
        text: "Tea?".into(),
    }];
    let options = ModelOptions::default();
    let pieces = Mutex::new(Vec::new());
    let read = model
        .complete_streaming(request(&messages, &[], &options), &|delta| {
            if let iris::model::ModelDelta::Text(piece) = delta {
                pieces.lock().unwrap().push(piece.to_owned());
            }
        })
        .await
        .unwrap();
    assert_eq!(read.text.as_deref(), Some("Tea costs 3."));
    assert_eq!(pieces.lock().unwrap().len(), 3, "handed on as it arrived");
    assert_eq!(read.usage.total(), 15);
    let error = model
        .complete_streaming(request(&messages, &[], &options), &|_| {})
        .await
        .unwrap_err();
    assert!(
        error.message.contains("ended before it finished"),
        "{error}"
    );
    let head = &script.requests.lock().unwrap()[0].0;
    assert!(
        head.starts_with("POST /v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse "),
        "{head}"
    );
}

#[tokio::test]
async fn blocked_cut_and_malformed_answers_say_so() {
    let script = Arc::new(Script::default());
    let endpoint = serve(Arc::clone(&script)).await;
    let base = endpoint.trim_end_matches("/chat/completions").to_owned();
    script.replies.lock().unwrap().extend([
        Reply::Status(200, json!({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9}}).to_string()),
        Reply::Status(200, json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Tea costs"}]}, "finishReason": "MAX_TOKENS"}]}).to_string()),
        Reply::Status(200, json!({"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "MALFORMED_FUNCTION_CALL"}]}).to_string()),
        Reply::Status(200, json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "thinking...", "thought": true}, {"functionCall": {"name": "price", "args": {"item": "tea"}}}]}, "finishReason": "STOP"}], "responseId": "r9"}).to_string()),
    ]);
    let model = GeminiModel::new("gemini-2.5-flash", KEY, &base, Duration::from_secs(5)).unwrap();
    let messages = vec![Message::User {
        text: "Tea?".into(),
    }];
    let options = ModelOptions::default();
    let blocked = model
        .complete(request(&messages, &[], &options))
        .await
        .unwrap();
    assert_eq!(blocked.finish, FinishReason::ContentFilter);
    assert_eq!(blocked.text.as_deref(), Some("[blocked] SAFETY"));
    let cut = model
        .complete(request(&messages, &[], &options))
        .await
        .unwrap();
    assert_eq!(cut.finish, FinishReason::Length);
    let malformed = model
        .complete(request(&messages, &[], &options))
        .await
        .unwrap_err();
    assert!(
        malformed.message.contains("MALFORMED_FUNCTION_CALL"),
        "{malformed}"
    );
    // A thought summary is not the answer; a call without an id gets one.
    let call = model
        .complete(request(&messages, &[], &options))
        .await
        .unwrap();
    assert_eq!(call.text, None);
    assert_eq!(
        call.tool_calls,
        [ToolUseBlock::new(
            "call_r9_0",
            "price",
            json!({"item": "tea"})
        )]
    );
}
