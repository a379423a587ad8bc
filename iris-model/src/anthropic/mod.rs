//! The Anthropic Messages adapter (feature `anthropic`): tools and results
//! in the existing projections, the key from the environment (never in
//! errors or `Debug`), retries as for every adapter.

mod output;
mod stream;

use iris_core::provider::{anthropic, anthropic_result};
use iris_core::{BoxFuture, ToolUseBlock};
use reqwest::header::HeaderName;
use serde_json::{Value, json};

use super::config::ModelProvider;
use super::http::{Api, HttpEndpoint, HttpModel, Wire};
use super::{
    FinishReason, Message, ModelError, ModelRequest, ModelResponse, OnDelta, ToolChoice, Usage,
};

/// The endpoint when the agent file gives no `base_url`.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";
/// The API version sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Tokens of an answer when the agent file sets no `max_tokens` (the API
/// requires a value).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A model behind the Anthropic Messages API (`https://api.anthropic.com/v1`
/// unless another server speaks it), its key from `api_key_env` (or
/// `ANTHROPIC_API_KEY`).
pub type AnthropicMessages = HttpModel<MessagesWire>;

/// The Messages wire format.
#[derive(Debug)]
pub struct MessagesWire;

impl Wire for MessagesWire {
    const API: Api = Api {
        provider: ModelProvider::Anthropic,
        name: "Anthropic Messages",
        base_url: ANTHROPIC_BASE_URL,
        key_variable: Some("ANTHROPIC_API_KEY"),
        path: "messages",
    };

    /// The key (when there is one: a local server may take none) and the
    /// API version.
    fn headers(endpoint: &HttpEndpoint) -> Vec<(HeaderName, String)> {
        let mut headers = vec![(
            HeaderName::from_static("anthropic-version"),
            ANTHROPIC_VERSION.to_owned(),
        )];
        if !endpoint.api_key().is_empty() {
            headers.push((
                HeaderName::from_static("x-api-key"),
                endpoint.api_key().to_owned(),
            ));
        }
        headers
    }

    /// Consecutive tool results join one user turn, as the API requires.
    fn body(endpoint: &HttpEndpoint, request: &ModelRequest<'_>) -> Value {
        let mut messages: Vec<Value> = Vec::new();
        for message in request.messages {
            match message {
                Message::User { text } => messages.push(json!({
                    "role": "user",
                    "content": [{"type": "text", "text": text}],
                })),
                Message::Assistant { text, tool_calls } => {
                    let mut content = Vec::new();
                    if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                        content.push(json!({"type": "text", "text": text}));
                    }
                    content.extend(tool_calls.iter().map(wire_call));
                    messages.push(json!({"role": "assistant", "content": content}));
                }
                Message::Tool {
                    call_id, result, ..
                } => {
                    let block = anthropic_result(call_id, result);
                    let joins = messages.last().is_some_and(|last| {
                        last["role"] == "user"
                            && last["content"]
                                .as_array()
                                .is_some_and(|c| c.iter().all(|b| b["type"] == "tool_result"))
                    });
                    match messages.last_mut() {
                        Some(last) if joins => {
                            if let Some(content) = last["content"].as_array_mut() {
                                content.push(block);
                            }
                        }
                        _ => messages.push(json!({"role": "user", "content": [block]})),
                    }
                }
            }
        }
        let options = request.options;
        let mut body = json!({
            "model": endpoint.model(),
            "max_tokens": options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "messages": messages,
        });
        if let Some(instructions) = request.instructions {
            body["system"] = json!(instructions);
        }
        if let Some(temperature) = options.temperature {
            body["temperature"] = json!(temperature);
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|spec| anthropic(spec).tool)
                .collect();
            let mut choice = match options.tool_choice {
                ToolChoice::Auto => json!({"type": "auto"}),
                ToolChoice::None => json!({"type": "none"}),
                ToolChoice::Required => json!({"type": "any"}),
            };
            if !options.parallel_tool_calls && options.tool_choice != ToolChoice::None {
                choice["disable_parallel_tool_use"] = json!(true);
            }
            body["tool_choice"] = choice;
        }
        output::send(endpoint.model(), request, &mut body);
        body
    }

    fn parse(answer: &Value) -> Result<ModelResponse, ModelError> {
        parse_response(answer)
    }

    fn answering_tool(endpoint: &HttpEndpoint, request: &ModelRequest<'_>) -> Option<String> {
        output::answering_tool(endpoint.model(), request)
    }

    fn read_stream(
        response: reqwest::Response,
        on_delta: OnDelta<'_>,
    ) -> BoxFuture<'_, Result<ModelResponse, ModelError>> {
        Box::pin(stream::read(response, on_delta))
    }
}

fn wire_call(call: &ToolUseBlock) -> Value {
    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input})
}

/// The text and tool calls of a Messages answer.
fn parse_response(answer: &Value) -> Result<ModelResponse, ModelError> {
    let content = answer["content"]
        .as_array()
        .ok_or_else(|| ModelError::new("the model endpoint answered without content"))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in content {
        match block["type"].as_str() {
            Some("text") => text.push_str(block["text"].as_str().unwrap_or_default()),
            Some("tool_use") => tool_calls.push(ToolUseBlock::new(
                block["id"].as_str().unwrap_or_default(),
                block["name"].as_str().unwrap_or_default(),
                block["input"].clone(),
            )),
            _ => {}
        }
    }
    let finish = match answer["stop_reason"].as_str() {
        Some("tool_use") => FinishReason::ToolCalls,
        Some("max_tokens") => FinishReason::Length,
        Some("refusal") => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    };
    Ok(ModelResponse {
        text: (!text.is_empty()).then_some(text),
        tool_calls,
        usage: usage(&answer["usage"]),
        finish,
    })
}

/// The Messages API's usage: its `input_tokens` leaves out the prompt
/// tokens read from or written to the prompt cache, which count as read.
pub(super) fn usage(usage: &Value) -> Usage {
    let count = |key: &str| usage[key].as_u64().unwrap_or(0);
    let cache_read = count("cache_read_input_tokens");
    Usage {
        input_tokens: count("input_tokens")
            .saturating_add(cache_read)
            .saturating_add(count("cache_creation_input_tokens")),
        output_tokens: count("output_tokens"),
        cached_input_tokens: cache_read,
        reasoning_tokens: 0,
    }
}
