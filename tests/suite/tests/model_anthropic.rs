//! The Anthropic Messages adapter against a loopback server: every request
//! parses as a strict model of the Messages API (written from its public
//! reference; unknown fields refused), consecutive tool results share one
//! user turn, answers with text and tool calls are read, and an overloaded
//! server is retried.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    dead_code,
    reason = "a scripted scenario fails loudly; the wire model is read, not used"
)]

use std::sync::Arc;
use std::time::Duration;

use crate::loopback::{Reply, Script, serve};
use iris::model::{
    AnthropicMessages, FinishReason, Message, Model, ModelOptions, ModelRequest, RetryPolicy,
};
use iris::{Tool, ToolResult, ToolUseBlock};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Request {
    model: String,
    max_tokens: u32,
    pub(crate) messages: Vec<Turn>,
    #[serde(default)]
    system: Option<String>,
    #[serde(default)]
    temperature: Option<f64>,
    #[serde(default)]
    tools: Vec<ToolDef>,
    #[serde(default)]
    tool_choice: Option<Choice>,
    #[serde(default)]
    pub(crate) stream: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Turn {
    pub(crate) role: Role,
    pub(crate) content: Vec<Block>,
}

#[derive(Deserialize, PartialEq, Debug)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Role {
    User,
    Assistant,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Block {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: Vec<ResultBlock>,
        #[serde(default)]
        is_error: Option<bool>,
    },
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum ResultBlock {
    Text { text: String },
    Image { source: Value },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolDef {
    name: String,
    description: String,
    input_schema: Value,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum Choice {
    Auto {
        #[serde(default)]
        disable_parallel_tool_use: Option<bool>,
    },
    Any {
        #[serde(default)]
        disable_parallel_tool_use: Option<bool>,
    },
    None,
}

/// Look up a price.
#[iris::tool(read_only)]
pub(crate) fn price(
    /// The item.
    item: String,
) -> String {
    item
}

pub(crate) const KEY: &str = "sk-ant-loopback-secret";

fn reply(content: Value, stop: &str) -> Reply {
    Reply::Status(
        200,
        json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": content, "stop_reason": stop,
            "usage": {"input_tokens": 40, "output_tokens": 6},
        })
        .to_string(),
    )
}

#[tokio::test]
async fn requests_follow_the_messages_api_and_answers_are_read() {
    let script = Arc::new(Script::default());
    let endpoint = serve(Arc::clone(&script)).await;
    let base = endpoint.trim_end_matches("/chat/completions").to_owned();
    let model = AnthropicMessages::new("claude-test", KEY, &base, Duration::from_secs(5))
        .unwrap()
        .with_retries(RetryPolicy {
            retries: 2,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(100),
        });
    let messages = vec![
        Message::User {
            text: "Prices of tea and milk?".into(),
        },
        Message::Assistant {
            text: Some("Looking them up.".into()),
            tool_calls: vec![
                ToolUseBlock::new("t1", "price", json!({"item": "tea"})),
                ToolUseBlock::new("t2", "price", json!({"item": "milk"})),
            ],
        },
        Message::Tool {
            call_id: "t1".into(),
            tool: "price".into(),
            result: ToolResult::text("tea: 3"),
        },
        Message::Tool {
            call_id: "t2".into(),
            tool: "price".into(),
            result: ToolResult::error(iris::ToolErrorKind::NotFound, "no milk"),
        },
    ];
    let tools = [Price.definition().spec()];
    let options = ModelOptions {
        max_tokens: Some(500),
        ..ModelOptions::default()
    };
    let request = ModelRequest {
        instructions: Some("Be brief."),
        messages: &messages,
        tools: &tools,
        options: &options,
    };
    script.replies.lock().unwrap().extend([
        Reply::Status(
            529,
            r#"{"type": "error", "error": {"type": "overloaded_error"}}"#.into(),
        ),
        reply(
            json!([{"type": "text", "text": "Tea costs 3."}]),
            "end_turn",
        ),
        reply(
            json!([{"type": "tool_use", "id": "t3", "name": "price", "input": {"item": "cocoa"}}]),
            "tool_use",
        ),
    ]);
    let text = model.complete(request).await.expect("after one retry");
    assert_eq!(text.text.as_deref(), Some("Tea costs 3."));
    assert_eq!((text.usage.input_tokens, text.usage.output_tokens), (40, 6));
    let call = model.complete(request).await.expect("a call");
    assert_eq!(call.finish, FinishReason::ToolCalls);
    assert_eq!(call.tool_calls[0].input, json!({"item": "cocoa"}));

    let requests = script.requests.lock().unwrap();
    assert_eq!(requests.len(), 3, "the 529 was retried");
    let (head, body) = &requests[1];
    let head = head.to_ascii_lowercase();
    assert!(head.contains(&format!("x-api-key: {KEY}").to_ascii_lowercase()));
    assert!(head.contains("anthropic-version: 2023-06-01"));
    let wire: Request = serde_json::from_value(body.clone()).expect("a valid Messages request");
    assert_eq!(wire.system.as_deref(), Some("Be brief."));
    assert_eq!(wire.max_tokens, 500);
    assert_eq!(wire.messages.len(), 3, "both results share one user turn");
    assert_eq!(wire.messages[2].role, Role::User);
    assert_eq!(wire.messages[2].content.len(), 2);
    let Block::ToolResult { is_error, .. } = &wire.messages[2].content[1] else {
        panic!("a tool result");
    };
    assert_eq!(*is_error, Some(true));
    assert_eq!(wire.tools[0].name, "price");
    assert!(!format!("{model:?}").contains(KEY));
}
