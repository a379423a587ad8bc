//! The Anthropic Messages adapter against a loopback server: every request
//! parses as a strict model of the Messages API (written from its public
//! reference; unknown fields refused), consecutive tool results share one
//! user turn, answers with text and tool calls are read, and an overloaded
//! server is retried.

use std::fmt::Write as _;
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
        output: None,
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

/// Prompt tokens read from or written to Anthropic's prompt cache are
/// prompt tokens: counted as read (and the cached ones said so), whole and
/// streamed.
#[tokio::test]
async fn cached_prompt_tokens_count_as_read() {
    let script = Arc::new(Script::default());
    let endpoint = serve(Arc::clone(&script)).await;
    let base = endpoint.trim_end_matches("/chat/completions").to_owned();
    let usage = json!({
        "input_tokens": 40, "output_tokens": 6,
        "cache_read_input_tokens": 600, "cache_creation_input_tokens": 50,
    });
    let stream = [
        json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "usage": usage}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]
    .iter()
    .fold(String::new(), |mut stream, event| {
        let name = event["type"].as_str().unwrap();
        let _ = write!(stream, "event: {name}\ndata: {event}\n\n");
        stream
    });
    script.replies.lock().unwrap().extend([
        Reply::Status(
            200,
            json!({
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [{"type": "text", "text": "Hi."}], "stop_reason": "end_turn",
                "usage": usage,
            })
            .to_string(),
        ),
        Reply::Events(stream),
    ]);
    let messages = vec![Message::User { text: "Hi".into() }];
    let options = ModelOptions::default();
    let request = ModelRequest {
        instructions: None,
        messages: &messages,
        tools: &[],
        options: &options,
        output: None,
    };
    let model = AnthropicMessages::new("claude-test", KEY, &base, Duration::from_secs(5)).unwrap();
    let whole = model.complete(request).await.unwrap();
    assert_eq!(
        whole.usage.input_tokens, 690,
        "40 new + 600 read + 50 written to the cache"
    );
    assert_eq!(whole.usage.cached_input_tokens, 600);
    assert_eq!(whole.usage.output_tokens, 6);
    let streamed = model
        .streaming(true)
        .complete_streaming(request, &|_| {})
        .await
        .unwrap();
    assert_eq!(
        (
            streamed.usage.input_tokens,
            streamed.usage.cached_input_tokens,
            streamed.usage.output_tokens
        ),
        (690, 600, 9)
    );
}

/// A local server speaking the Messages API takes no key: with a
/// `base_url` and no key variable set, the adapter is made and sends none.
#[tokio::test]
async fn a_local_server_needs_no_key() {
    if std::env::var_os("ANTHROPIC_API_KEY").is_some() {
        return; // The usual variable is set here: it would be sent.
    }
    let script = Arc::new(Script::default());
    let endpoint = serve(Arc::clone(&script)).await;
    let base = endpoint.trim_end_matches("/chat/completions").to_owned();
    script
        .replies
        .lock()
        .unwrap()
        .push_back(reply(json!([{"type": "text", "text": "Hi."}]), "end_turn"));
    let config = iris::model::ModelConfig::new(iris::model::ModelProvider::Anthropic, "local")
        .with_base_url(&base);
    let model = config
        .build_model()
        .expect("no key is needed for another server");
    let messages = vec![Message::User { text: "Hi".into() }];
    let options = ModelOptions::default();
    let answer = model
        .complete(ModelRequest {
            instructions: None,
            messages: &messages,
            tools: &[],
            options: &options,
            output: None,
        })
        .await
        .unwrap();
    assert_eq!(answer.text.as_deref(), Some("Hi."));
    let head = script.requests.lock().unwrap()[0].0.to_ascii_lowercase();
    assert!(!head.contains("x-api-key"), "{head}");
    // The provider's own endpoint still needs its key.
    let error = iris::model::ModelConfig::new(iris::model::ModelProvider::Anthropic, "claude")
        .build_model()
        .err()
        .expect("the key is needed at api.anthropic.com");
    assert!(error.message.contains("ANTHROPIC_API_KEY"), "{error}");
}
