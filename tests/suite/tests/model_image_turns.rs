//! A turn whose tool result holds an image, sent by each adapter the way
//! its provider takes images (Chat Completions: a user message after the
//! tool message; Responses: `input_image` parts of the call's output;
//! Anthropic: an `image` block inside the `tool_result`), checked against
//! the client library's request types, and the recorded answer to it read.

use std::sync::Arc;
use std::time::Duration;

use crate::image_results::PIXEL_PNG;
use crate::loopback::{Reply, Script, serve};
use iris::content::ImageBlock;
use iris::model::{
    AnthropicMessages, Message, Model, ModelOptions, ModelRequest, OpenAiChat, OpenAiResponses,
};
use iris::{ToolResult, ToolUseBlock};
use serde_json::{Value, json};

fn image_turn() -> Vec<Message> {
    vec![
        Message::User {
            text: "What does the Q3 chart show?".into(),
        },
        Message::Assistant {
            text: None,
            tool_calls: vec![ToolUseBlock::new(
                "c1",
                "render_chart",
                json!({"quarter": 3}),
            )],
        },
        Message::Tool {
            call_id: "c1".into(),
            tool: "render_chart".into(),
            result: ToolResult::text("Sales chart for Q3")
                .with_image(ImageBlock::checked(PIXEL_PNG).unwrap()),
        },
    ]
}

async fn loopback(reply: Value) -> (Arc<Script>, String) {
    let script = Arc::new(Script::default());
    let base = serve(Arc::clone(&script))
        .await
        .trim_end_matches("/chat/completions")
        .to_owned();
    script
        .replies
        .lock()
        .unwrap()
        .push_back(Reply::Status(200, reply.to_string()));
    (script, base)
}

fn request<'a>(messages: &'a [Message], options: &'a ModelOptions) -> ModelRequest<'a> {
    ModelRequest {
        instructions: None,
        messages,
        tools: &[],
        options,
        output: None,
    }
}

const DATA_URL_START: &str = "data:image/png;base64,iVBORw0KGgo";

#[tokio::test]
async fn chat_completions_sends_the_image_in_a_user_message_after_the_tool_message() {
    use async_openai::types::chat::CreateChatCompletionRequest;

    let (script, base) = loopback(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "Sales rose in Q3."}}],
    }))
    .await;
    let model = OpenAiChat::new("gpt-test", "sk", &base, Duration::from_secs(5)).unwrap();
    let messages = image_turn();
    let options = ModelOptions::default();
    let answer = model.complete(request(&messages, &options)).await.unwrap();
    assert_eq!(answer.text.as_deref(), Some("Sales rose in Q3."));

    let body = script.requests.lock().unwrap()[0].1.clone();
    let typed: CreateChatCompletionRequest =
        serde_json::from_value(body.clone()).expect("async-openai reads the request");
    assert_eq!(serde_json::to_value(&typed).unwrap(), body);
    let wire = body["messages"].as_array().unwrap();
    assert_eq!(wire.len(), 4);
    assert_eq!(wire[2]["role"], "tool");
    assert_eq!(wire[2]["content"], "Sales chart for Q3");
    assert_eq!(wire[3]["role"], "user");
    let url = wire[3]["content"][1]["image_url"]["url"].as_str().unwrap();
    assert!(url.starts_with(DATA_URL_START), "{url}");
}

#[tokio::test]
async fn responses_sends_the_image_as_a_part_of_the_call_output() {
    use async_openai::types::responses::CreateResponse;

    let (script, base) = loopback(json!({
        "id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-test",
        "status": "completed",
        "output": [{"type": "message", "id": "m1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "Sales rose.", "annotations": []}]}],
    }))
    .await;
    let model = OpenAiResponses::new("gpt-test", "sk", &base, Duration::from_secs(5)).unwrap();
    let messages = image_turn();
    let options = ModelOptions::default();
    let answer = model.complete(request(&messages, &options)).await.unwrap();
    assert_eq!(answer.text.as_deref(), Some("Sales rose."));

    let body = script.requests.lock().unwrap()[0].1.clone();
    let typed: CreateResponse =
        serde_json::from_value(body.clone()).expect("async-openai reads the request");
    assert_eq!(serde_json::to_value(&typed).unwrap(), body);
    let output = &body["input"][2];
    assert_eq!(output["type"], "function_call_output");
    assert_eq!(
        output["output"][0],
        json!({"type": "input_text", "text": "Sales chart for Q3"})
    );
    assert_eq!(output["output"][1]["type"], "input_image");
    let url = output["output"][1]["image_url"].as_str().unwrap();
    assert!(url.starts_with(DATA_URL_START), "{url}");
}

#[tokio::test]
async fn anthropic_sends_the_image_inside_the_tool_result() {
    use crate::model_anthropic::{Block, Request, ResultBlock, Role};

    let (script, base) = loopback(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": "Sales rose."}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 90, "output_tokens": 4},
    }))
    .await;
    let model = AnthropicMessages::new("claude-test", "sk", &base, Duration::from_secs(5)).unwrap();
    let messages = image_turn();
    let options = ModelOptions::default();
    let answer = model.complete(request(&messages, &options)).await.unwrap();
    assert_eq!(answer.text.as_deref(), Some("Sales rose."));

    let body = script.requests.lock().unwrap()[0].1.clone();
    let wire: Request = serde_json::from_value(body).expect("a valid Messages request");
    assert_eq!(wire.messages[2].role, Role::User);
    let Block::ToolResult { content, .. } = &wire.messages[2].content[0] else {
        panic!("a tool result");
    };
    assert!(matches!(&content[0], ResultBlock::Text { text } if text == "Sales chart for Q3"));
    let ResultBlock::Image { source } = &content[1] else {
        panic!("an image block");
    };
    assert_eq!(source["type"], "base64");
    assert_eq!(source["media_type"], "image/png");
    assert!(source["data"].as_str().unwrap().starts_with("iVBORw0KGgo"));
}
