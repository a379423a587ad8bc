//! Streamed answers from the OpenAI Responses and Anthropic Messages
//! adapters against a loopback server replaying recorded event streams:
//! text handed on piece by piece, tool calls joined, usage read, a stream
//! cut mid-way or failing mid-way an error. (Chat Completions streaming is
//! in `model_openai`.)

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::loopback::{Reply, Script, serve};
use iris::model::{
    AnthropicMessages, FinishReason, Message, Model, ModelDelta, ModelOptions, ModelRequest,
    OpenAiResponses,
};
use serde_json::{Value, json};

/// A stream of named events, as both APIs send them.
fn events(events: &[(&str, Value)]) -> Reply {
    let mut body = String::new();
    for (name, data) in events {
        writeln!(body, "event: {name}\ndata: {data}\n").unwrap();
    }
    Reply::WithHeaders(200, "Cache-Control: no-cache\r\n".into(), body)
}

async fn base(script: &Arc<Script>) -> String {
    serve(Arc::clone(script))
        .await
        .trim_end_matches("/chat/completions")
        .to_owned()
}

fn ask() -> Vec<Message> {
    vec![Message::User {
        text: "Price of tea?".into(),
    }]
}

/// Deltas seen, in order, as text.
type Pieces = Mutex<Vec<String>>;

/// A delta as a line of text: the text itself, or the call fragment.
pub(crate) fn describe(delta: ModelDelta<'_>) -> String {
    match delta {
        ModelDelta::Text(text) => text.to_owned(),
        ModelDelta::ToolCall {
            index,
            id,
            name,
            arguments,
        } => format!(
            "call {index} {} {} {arguments}",
            id.unwrap_or("-"),
            name.unwrap_or("-")
        ),
        other => format!("{other:?}"),
    }
}

#[tokio::test]
async fn anthropic_streams_join_text_and_tool_input_and_errors_end_them() {
    let script = Arc::new(Script::default());
    let model = AnthropicMessages::new(
        "claude-test",
        crate::model_anthropic::KEY,
        &base(&script).await,
        Duration::from_secs(5),
    )
    .unwrap()
    .streaming(true);
    let messages = ask();
    let options = ModelOptions::default();
    let request = ModelRequest {
        instructions: None,
        messages: &messages,
        tools: &[],
        options: &options,
        output: None,
    };
    let start = json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [], "stop_reason": null, "usage": {"input_tokens": 25, "output_tokens": 1}}});
    script.replies.lock().unwrap().extend([
        events(&[
            ("message_start", start.clone()),
            ("content_block_start", json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}})),
            ("ping", json!({"type": "ping"})),
            ("content_block_delta", json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": "Let me "}})),
            ("content_block_delta", json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": "look."}})),
            ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
            ("content_block_start", json!({"type": "content_block_start", "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "price", "input": {}}})),
            ("content_block_delta", json!({"type": "content_block_delta", "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": "{\"item\": \"t"}})),
            ("content_block_delta", json!({"type": "content_block_delta", "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": "ea\"}"}})),
            ("content_block_stop", json!({"type": "content_block_stop", "index": 1})),
            ("content_block_start", json!({"type": "content_block_start", "index": 2,
                "content_block": {"type": "tool_use", "id": "toolu_2", "name": "clock", "input": {}}})),
            ("content_block_stop", json!({"type": "content_block_stop", "index": 2})),
            ("message_delta", json!({"type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                "usage": {"output_tokens": 31}})),
            ("message_stop", json!({"type": "message_stop"})),
        ]),
        events(&[
            ("message_start", start.clone()),
            ("content_block_start", json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}})),
            ("content_block_delta", json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": "Tea"}})),
        ]),
        events(&[
            ("message_start", start),
            ("error", json!({"type": "error",
                "error": {"type": "overloaded_error", "message": "Overloaded"}})),
        ]),
    ]);
    let pieces = Pieces::default();
    let on_delta = |delta: ModelDelta<'_>| pieces.lock().unwrap().push(describe(delta));
    let answer = model
        .complete_streaming(request, &on_delta)
        .await
        .expect("a whole stream");
    assert_eq!(
        *pieces.lock().unwrap(),
        [
            "Let me ",
            "look.",
            "call 0 toolu_1 price ",
            "call 0 - - {\"item\": \"t",
            "call 0 - - ea\"}",
            "call 1 toolu_2 clock ",
        ]
    );
    assert_eq!(answer.text.as_deref(), Some("Let me look."));
    assert_eq!(answer.finish, FinishReason::ToolCalls);
    assert_eq!(answer.tool_calls.len(), 2);
    assert_eq!(answer.tool_calls[0].id, "toolu_1");
    assert_eq!(answer.tool_calls[0].input, json!({"item": "tea"}));
    assert_eq!(
        answer.tool_calls[1].input,
        json!({}),
        "no fragments: no arguments"
    );
    assert_eq!(
        (answer.usage.input_tokens, answer.usage.output_tokens),
        (25, 31)
    );
    let body = script.requests.lock().unwrap()[0].1.clone();
    let wire: crate::model_anthropic::Request =
        serde_json::from_value(body).expect("a valid Messages request");
    assert_eq!(wire.stream, Some(true));

    let cut = model
        .complete_streaming(request, &on_delta)
        .await
        .expect_err("the stream was cut");
    assert!(cut.to_string().contains("before it finished"), "{cut}");
    let failed = model
        .complete_streaming(request, &on_delta)
        .await
        .expect_err("the stream failed");
    assert!(failed.to_string().contains("Overloaded"), "{failed}");
}

#[tokio::test]
async fn responses_streams_hand_on_text_and_read_the_completed_answer() {
    use async_openai::types::responses::CreateResponse;

    let script = Arc::new(Script::default());
    let model = OpenAiResponses::new(
        "gpt-test",
        "sk-loopback",
        &base(&script).await,
        Duration::from_secs(5),
    )
    .unwrap()
    .streaming(true);
    let messages = ask();
    let options = ModelOptions::default();
    let request = ModelRequest {
        instructions: None,
        messages: &messages,
        tools: &[],
        options: &options,
        output: None,
    };
    let response = |status: &str, output: Value| {
        json!({"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-test",
               "status": status, "output": output,
               "usage": {"input_tokens": 18, "output_tokens": 9, "total_tokens": 27}})
    };
    let output = json!([
        {"type": "message", "id": "m1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
        {"type": "function_call", "id": "f1", "call_id": "k1", "name": "price",
         "arguments": "{\"item\":\"tea\"}", "status": "completed"},
    ]);
    script.replies.lock().unwrap().extend([
        events(&[
            (
                "response.created",
                json!({"type": "response.created",
                "response": response("in_progress", json!([]))}),
            ),
            (
                "response.output_text.delta",
                json!({"type": "response.output_text.delta",
                "item_id": "m1", "output_index": 0, "content_index": 0, "delta": "Check"}),
            ),
            (
                "response.output_text.delta",
                json!({"type": "response.output_text.delta",
                "item_id": "m1", "output_index": 0, "content_index": 0, "delta": "ing."}),
            ),
            (
                "response.output_item.added",
                json!({"type": "response.output_item.added", "output_index": 1,
                       "item": {"type": "function_call", "id": "f1", "call_id": "k1",
                                "name": "price", "arguments": "", "status": "in_progress"}}),
            ),
            (
                "response.function_call_arguments.delta",
                json!({
                "type": "response.function_call_arguments.delta",
                "item_id": "f1", "output_index": 1, "delta": "{\"item\":\"tea\"}"}),
            ),
            (
                "response.completed",
                json!({"type": "response.completed",
                "response": response("completed", output)}),
            ),
        ]),
        events(&[(
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "item_id": "m1",
                   "output_index": 0, "content_index": 0, "delta": "Che"}),
        )]),
        events(&[(
            "response.failed",
            json!({"type": "response.failed", "response": {
                "id": "resp_2", "status": "failed",
                "error": {"code": "server_error", "message": "The model crashed"}}}),
        )]),
    ]);
    let pieces = Pieces::default();
    let on_delta = |delta: ModelDelta<'_>| pieces.lock().unwrap().push(describe(delta));
    let answer = model
        .complete_streaming(request, &on_delta)
        .await
        .expect("a whole stream");
    assert_eq!(
        *pieces.lock().unwrap(),
        [
            "Check",
            "ing.",
            "call 0 k1 price ",
            "call 0 - - {\"item\":\"tea\"}"
        ]
    );
    assert_eq!(answer.text.as_deref(), Some("Checking."));
    assert_eq!(answer.finish, FinishReason::ToolCalls);
    assert_eq!(answer.tool_calls[0].id, "k1");
    assert_eq!(answer.tool_calls[0].input, json!({"item": "tea"}));
    assert_eq!(answer.usage.output_tokens, 9);
    let body = script.requests.lock().unwrap()[0].1.clone();
    assert_eq!(body["stream"], true);
    let typed: CreateResponse =
        serde_json::from_value(body.clone()).expect("async-openai reads the request");
    assert_eq!(serde_json::to_value(&typed).unwrap(), body);

    let cut = model
        .complete_streaming(request, &on_delta)
        .await
        .expect_err("the stream was cut");
    assert!(cut.to_string().contains("before it finished"), "{cut}");
    let failed = model
        .complete_streaming(request, &on_delta)
        .await
        .expect_err("the stream failed");
    assert!(failed.to_string().contains("The model crashed"), "{failed}");
}
