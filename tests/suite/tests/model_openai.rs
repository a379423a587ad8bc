//! The OpenAI Chat Completions adapter against a loopback server: every
//! request it sends parses as async-openai's request type and serializes
//! back to the same JSON; answers with text, parallel tool calls, a refusal
//! and a length stop are read; 429 with `Retry-After` and 500s are retried,
//! and a request that keeps failing or answers something other than JSON
//! is an error that never shows the key.

use std::sync::Arc;
use std::time::Duration;

use crate::loopback::{Reply, Script, serve};
use crate::model_streams::describe;
use async_openai::types::chat::CreateChatCompletionRequest;
use iris::model::{
    FinishReason, Message, Model, ModelDelta, ModelOptions, ModelRequest, OpenAiChat, RetryPolicy,
};
use iris::{Tool, ToolResult, ToolUseBlock};
use serde_json::{Value, json};

/// Look up a price.
#[iris::tool(read_only)]
fn price(
    /// The item.
    item: String,
) -> String {
    item
}

const KEY: &str = "sk-loopback-secret";

async fn adapter(script: &Arc<Script>) -> OpenAiChat {
    let endpoint = serve(Arc::clone(script)).await;
    let base = endpoint.trim_end_matches("/chat/completions").to_owned();
    OpenAiChat::new("gpt-test", KEY, &base, Duration::from_secs(5))
        .unwrap()
        .with_retries(RetryPolicy {
            retries: 2,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(200),
        })
}

fn history() -> Vec<Message> {
    vec![
        Message::User {
            text: "What does tea cost?".into(),
        },
        Message::Assistant {
            text: None,
            tool_calls: vec![ToolUseBlock::new("c1", "price", json!({"item": "tea"}))],
        },
        Message::Tool {
            call_id: "c1".into(),
            tool: "price".into(),
            result: ToolResult::text("tea: 3"),
        },
    ]
}

fn answer(message: Value, finish: &str) -> Reply {
    Reply::Status(
        200,
        json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 7, "total_tokens": 57},
        })
        .to_string(),
    )
}

#[tokio::test]
async fn requests_are_what_the_client_library_sends_and_answers_are_read() {
    let script = Arc::new(Script::default());
    let model = adapter(&script).await;
    let messages = history();
    let tools = [Price.definition().spec().with_strict(true)];
    let options = ModelOptions {
        temperature: Some(0.5),
        max_tokens: Some(300),
        parallel_tool_calls: true,
        ..ModelOptions::default()
    };
    let request = ModelRequest {
        instructions: Some("Answer briefly."),
        messages: &messages,
        tools: &tools,
        options: &options,
        output: None,
    };
    let replies = [
        answer(
            json!({"role": "assistant", "content": "Tea costs 3."}),
            "stop",
        ),
        answer(
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "price", "arguments": "{\"item\":\"tea\"}"}},
                {"id": "b", "type": "function", "function": {"name": "price", "arguments": "{\"item\":"}}
            ]}),
            "tool_calls",
        ),
        answer(
            json!({"role": "assistant", "content": null, "refusal": "I cannot help with that."}),
            "stop",
        ),
        answer(json!({"role": "assistant", "content": "Tea co"}), "length"),
    ];
    script.replies.lock().unwrap().extend(replies);

    let text = model.complete(request).await.expect("text");
    assert_eq!(text.text.as_deref(), Some("Tea costs 3."));
    assert_eq!((text.usage.input_tokens, text.usage.output_tokens), (50, 7));
    let calls = model.complete(request).await.expect("calls");
    assert_eq!(calls.finish, FinishReason::ToolCalls);
    assert_eq!(calls.tool_calls.len(), 2, "parallel calls");
    assert_eq!(calls.tool_calls[0].input, json!({"item": "tea"}));
    // Arguments that are not JSON reach the executor as text, to be refused there.
    assert_eq!(calls.tool_calls[1].input, json!("{\"item\":"));
    let refused = model.complete(request).await.expect("refusal");
    assert_eq!(refused.finish, FinishReason::ContentFilter);
    assert!(refused.text.unwrap().contains("cannot help"));
    let cut = model.complete(request).await.expect("cut");
    assert_eq!(cut.finish, FinishReason::Length);

    let requests = script.requests.lock().unwrap();
    let (head, body) = &requests[0];
    assert!(
        head.to_ascii_lowercase()
            .contains(&format!("authorization: bearer {KEY}").to_ascii_lowercase())
    );
    let typed: CreateChatCompletionRequest =
        serde_json::from_value(body.clone()).expect("async-openai reads the request");
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(&back, body, "no field misnamed or dropped");
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "Answer briefly."})
    );
    assert_eq!(
        body["messages"][2]["tool_calls"][0]["function"]["arguments"],
        "{\"item\":\"tea\"}"
    );
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "tool_call_id": "c1", "content": "tea: 3"})
    );
    assert_eq!(body["tools"][0]["function"]["strict"], true);
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_and_then_reported() {
    let script = Arc::new(Script::default());
    let model = adapter(&script).await;
    let messages = vec![Message::User { text: "Hi".into() }];
    let options = ModelOptions::default();
    let request = ModelRequest {
        instructions: None,
        messages: &messages,
        tools: &[],
        options: &options,
        output: None,
    };
    script.replies.lock().unwrap().extend([
        Reply::WithHeaders(
            429,
            "Retry-After: 0\r\n".into(),
            r#"{"error": "slow down"}"#.into(),
        ),
        Reply::Status(503, r#"{"error": "busy"}"#.into()),
        answer(json!({"role": "assistant", "content": "Hello."}), "stop"),
    ]);
    let ok = model
        .complete(request)
        .await
        .expect("succeeds on the third try");
    assert_eq!(ok.text.as_deref(), Some("Hello."));
    assert_eq!(script.requests.lock().unwrap().len(), 3);

    script.replies.lock().unwrap().extend([
        Reply::Status(500, r#"{"error": "down"}"#.into()),
        Reply::Status(500, r#"{"error": "down"}"#.into()),
        Reply::Status(500, r#"{"error": "down"}"#.into()),
    ]);
    let err = model.complete(request).await.expect_err("500 three times");
    let message = err.to_string();
    assert!(
        message.contains("HTTP 500") && message.contains("3 attempts"),
        "{message}"
    );
    assert!(!message.contains(KEY));

    script
        .replies
        .lock()
        .unwrap()
        .push_back(Reply::Status(200, "not json".into()));
    let err = model.complete(request).await.expect_err("malformed");
    assert!(err.to_string().contains("not JSON"), "{err}");

    script
        .replies
        .lock()
        .unwrap()
        .push_back(Reply::Status(401, r#"{"error": "bad key"}"#.into()));
    let err = model.complete(request).await.expect_err("not retried");
    assert!(err.to_string().contains("1 attempt)"), "{err}");
    assert!(
        !format!("{model:?}").contains(KEY),
        "the key stays out of Debug"
    );
}

/// The Responses adapter: the history as input items that async-openai's
/// `CreateResponse` reads back to the same JSON; text, calls, a refusal and
/// an incomplete answer read.
#[tokio::test]
async fn responses_requests_round_trip_and_output_items_are_read() {
    use async_openai::types::responses::CreateResponse;
    use iris::model::OpenAiResponses;

    let script = Arc::new(Script::default());
    let endpoint = serve(Arc::clone(&script)).await;
    let base = endpoint.trim_end_matches("/chat/completions").to_owned();
    let model = OpenAiResponses::new("gpt-test", KEY, &base, Duration::from_secs(5)).unwrap();
    let messages = history();
    let tools = [Price.definition().spec().with_strict(true)];
    let options = ModelOptions {
        temperature: Some(0.5),
        max_tokens: Some(300),
        parallel_tool_calls: true,
        ..ModelOptions::default()
    };
    let request = ModelRequest {
        instructions: Some("Answer briefly."),
        messages: &messages,
        tools: &tools,
        options: &options,
        output: None,
    };
    let output = |items: Value, extra: Value| {
        let mut body = json!({
            "id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-test",
            "status": "completed", "output": items,
            "usage": {"input_tokens": 30, "output_tokens": 4, "total_tokens": 34},
        });
        if let (Value::Object(body), Value::Object(extra)) = (&mut body, extra) {
            body.extend(extra);
        }
        Reply::Status(200, body.to_string())
    };
    script.replies.lock().unwrap().extend([
        output(
            json!([{"type": "message", "id": "m1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "Tea costs 3.", "annotations": []}]}]),
            json!({}),
        ),
        output(
            json!([{"type": "function_call", "id": "f1", "call_id": "k1", "name": "price",
                    "arguments": "{\"item\":\"milk\"}", "status": "completed"}]),
            json!({}),
        ),
        output(
            json!([{"type": "message", "id": "m2", "role": "assistant", "status": "completed",
                    "content": [{"type": "refusal", "refusal": "No."}]}]),
            json!({}),
        ),
        output(
            json!([{"type": "message", "id": "m3", "role": "assistant", "status": "incomplete",
                    "content": [{"type": "output_text", "text": "Tea co", "annotations": []}]}]),
            json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}),
        ),
    ]);
    let text = model.complete(request).await.expect("text");
    assert_eq!(text.text.as_deref(), Some("Tea costs 3."));
    assert_eq!(text.usage.input_tokens, 30);
    let call = model.complete(request).await.expect("call");
    assert_eq!(call.finish, FinishReason::ToolCalls);
    assert_eq!(call.tool_calls[0].id, "k1");
    assert_eq!(call.tool_calls[0].input, json!({"item": "milk"}));
    let refused = model.complete(request).await.expect("refusal");
    assert_eq!(refused.finish, FinishReason::ContentFilter);
    let cut = model.complete(request).await.expect("incomplete");
    assert_eq!(cut.finish, FinishReason::Length);

    let requests = script.requests.lock().unwrap();
    let (head, body) = &requests[0];
    assert!(head.contains("/v1/responses"), "{head}");
    let typed: CreateResponse =
        serde_json::from_value(body.clone()).expect("async-openai reads the request");
    assert_eq!(
        &serde_json::to_value(&typed).unwrap(),
        body,
        "no field misnamed or dropped"
    );
    assert_eq!(body["instructions"], "Answer briefly.");
    assert_eq!(body["input"][1]["type"], "function_call");
    assert_eq!(
        body["input"][2],
        json!({"type": "function_call_output", "call_id": "c1", "output": "tea: 3"})
    );
}

/// Counts the run events it is handed.
#[derive(Default)]
struct Counting(std::sync::Mutex<Vec<String>>);

impl iris::observe::RunEventObserver for Counting {
    fn on_event(&self, event: &iris::observe::RunEvent) {
        let name = match event {
            iris::observe::RunEvent::RunStarted { .. } => "run.started",
            iris::observe::RunEvent::RunFinished { .. } => "run.finished",
            iris::observe::RunEvent::ModelText { .. } => "model.text",
            _ => "other",
        };
        self.0.lock().unwrap().push(name.to_owned());
    }
}

/// A runner made from the agent file alone: the adapter its `model` section
/// names, the observers given.
#[tokio::test]
async fn a_runner_from_the_agent_file_asks_the_model_it_names() {
    use iris::agent::{AgentRunner, RunContext, RunOutcome};

    let script = Arc::new(Script::default());
    let endpoint = serve(Arc::clone(&script)).await;
    let base = endpoint.trim_end_matches("/chat/completions").to_owned();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("agent.yaml");
    // A placeholder key (set in `.cargo/config.toml`) on loopback.
    std::fs::write(
        &file,
        format!("name: greeter\nmodel: {{ provider: openai_chat, model: gpt-test, base_url: \"{base}\", api_key_env: IRIS_TEST_API_KEY }}\n"),
    )
    .unwrap();
    script.replies.lock().unwrap().push_back(answer(
        json!({"role": "assistant", "content": "Hello."}),
        "stop",
    ));
    let events = Arc::new(Counting::default());
    let observer: Arc<dyn iris::observe::RunEventObserver> = Arc::clone(&events) as _;
    let runner = iris::assembly::Assembly::from_catalog()
        .with_observers([observer])
        .runner(&file)
        .expect("built from the file");
    let outcome = runner
        .run("Hi", &RunContext::new(dir.path(), iris::RunId::new("r")))
        .await
        .expect("runs");
    let RunOutcome::Finished { text, .. } = outcome else {
        panic!("expected the answer, got {outcome:?}");
    };
    assert_eq!(text, "Hello.");
    // Observers are told on their own task: give them a moment.
    for _ in 0..50 {
        if events.0.lock().unwrap().len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        *events.0.lock().unwrap(),
        ["run.started", "model.text", "run.finished"]
    );

    std::fs::write(&file, "name: silent\n").unwrap();
    let err = AgentRunner::from_path(&file).expect_err("no model named");
    assert!(err.to_string().contains("names no `model`"), "{err}");
}

fn sse(chunks: &[Value], done: bool) -> Reply {
    let mut body = String::new();
    for chunk in chunks {
        body.push_str("data: ");
        body.push_str(&chunk.to_string());
        body.push_str("\n\n");
    }
    if done {
        body.push_str("data: [DONE]\n\n");
    }
    Reply::WithHeaders(200, "Cache-Control: no-cache\r\n".into(), body)
}

/// A streamed answer: text pieces handed on as they come, tool-call
/// argument fragments joined, usage from the last chunk; a stream cut
/// before `[DONE]` is an error.
#[tokio::test]
async fn streamed_answers_are_joined_and_a_cut_stream_is_an_error() {
    let script = Arc::new(Script::default());
    let model = adapter(&script).await.streaming(true);
    let messages = vec![Message::User { text: "Hi".into() }];
    let options = ModelOptions::default();
    let request = ModelRequest {
        instructions: None,
        messages: &messages,
        tools: &[],
        options: &options,
        output: None,
    };
    let delta = |d: Value| json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]});
    script.replies.lock().unwrap().extend([
        sse(
            &[
                delta(json!({"role": "assistant", "content": "Hel"})),
                delta(json!({"content": "lo."})),
                delta(json!({"tool_calls": [{"index": 0, "id": "k1", "type": "function", "function": {"name": "price", "arguments": "{\"it"}}]})),
                delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "em\":\"tea\"}"}}]})),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
                json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5}}),
            ],
            true,
        ),
        sse(&[delta(json!({"content": "Hel"}))], false),
    ]);
    let pieces = std::sync::Mutex::new(Vec::new());
    let on_delta = |delta: ModelDelta<'_>| pieces.lock().unwrap().push(describe(delta));
    let answer = model
        .complete_streaming(request, &on_delta)
        .await
        .expect("a whole stream");
    assert_eq!(
        *pieces.lock().unwrap(),
        [
            "Hel",
            "lo.",
            "call 0 k1 price {\"it",
            "call 0 - - em\":\"tea\"}"
        ]
    );
    assert_eq!(answer.text.as_deref(), Some("Hello."));
    assert_eq!(answer.finish, FinishReason::ToolCalls);
    assert_eq!(answer.tool_calls[0].id, "k1");
    assert_eq!(answer.tool_calls[0].input, json!({"item": "tea"}));
    assert_eq!(
        (answer.usage.input_tokens, answer.usage.output_tokens),
        (12, 5)
    );
    let body = script.requests.lock().unwrap()[0].1.clone();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));

    let err = model
        .complete_streaming(request, &on_delta)
        .await
        .expect_err("the stream was cut");
    assert!(err.to_string().contains("before it finished"), "{err}");
}
