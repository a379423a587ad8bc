//! The OpenAI Chat Completions adapter (feature `openai`): also any server
//! speaking the same API through `base_url` (vLLM, Ollama, `llama.cpp`,
//! `LiteLLM`). Tools and results travel in the existing projections; the key
//! comes from the environment and never appears in errors or `Debug`;
//! rate limits, server errors and dropped connections are retried with
//! exponential back-off and jitter, honouring `Retry-After`.

mod calls;
mod stream;

use iris_core::provider::{openai_chat, openai_chat_result};
use iris_core::{BoxFuture, ToolUseBlock};
use reqwest::header::HeaderName;
use serde_json::{Value, json};

use super::config::ModelProvider;
use super::http::{Api, HttpEndpoint, HttpModel, Wire};
use super::profile::Dialect;
use calls::{Calls, finish_reason};

use super::{Message, ModelError, ModelRequest, ModelResponse, OnDelta, ToolChoice, Usage};

/// The endpoint when the agent file gives no `base_url`.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// A model behind the OpenAI Chat Completions API (`https://api.openai.com/v1`
/// unless another server speaks it). Its key comes from `api_key_env`; with
/// none named it sends no key, as local servers often take none.
pub type OpenAiChat = HttpModel<ChatCompletionsWire>;

/// The Chat Completions wire format.
#[derive(Debug)]
pub struct ChatCompletionsWire;

impl Wire for ChatCompletionsWire {
    const API: Api = Api {
        provider: ModelProvider::OpenaiChat,
        name: "OpenAI Chat Completions",
        base_url: OPENAI_BASE_URL,
        key_variable: None,
        path: "chat/completions",
    };

    fn headers(endpoint: &HttpEndpoint) -> Vec<(HeaderName, String)> {
        endpoint.bearer()
    }

    fn body(endpoint: &HttpEndpoint, request: &ModelRequest<'_>) -> Value {
        let mut messages = Vec::new();
        if let Some(instructions) = request.instructions {
            messages.push(json!({"role": "system", "content": instructions}));
        }
        for message in request.messages {
            match message {
                Message::User { text } => messages.push(json!({"role": "user", "content": text})),
                Message::Assistant { text, tool_calls } => {
                    let mut assistant = json!({"role": "assistant"});
                    // Left out, not null, when the model only called tools.
                    if let Some(text) = text {
                        assistant["content"] = json!(text);
                    }
                    if !tool_calls.is_empty() {
                        assistant["tool_calls"] = tool_calls.iter().map(wire_call).collect();
                    }
                    messages.push(assistant);
                }
                Message::Tool {
                    call_id, result, ..
                } => messages.extend(openai_chat_result(call_id, result)),
            }
        }
        let mut body = json!({"model": endpoint.model(), "messages": messages});
        let dialect = endpoint.profile().dialect();
        add_options(
            &mut body,
            request,
            &dialect,
            dialect.max_tokens_field,
            |spec| openai_chat(spec).tool,
        );
        if let Some(output) = request.output {
            body["response_format"] = response_format(output, endpoint.profile());
        }
        body
    }

    fn stream_body(endpoint: &HttpEndpoint, body: &mut Value) {
        body["stream"] = json!(true);
        if endpoint.profile().dialect().stream_usage {
            body["stream_options"] = json!({"include_usage": true});
        }
    }

    fn parse(answer: &Value) -> Result<ModelResponse, ModelError> {
        parse_response(answer)
    }

    fn read_stream(
        response: reqwest::Response,
        on_delta: OnDelta<'_>,
    ) -> BoxFuture<'_, Result<ModelResponse, ModelError>> {
        Box::pin(stream::read(response, on_delta))
    }
}

/// The sampling and tool options both OpenAI APIs take, under the name
/// each gives the token limit, with the tools in each one's projection,
/// as far as the server's `dialect` takes them.
pub(super) fn add_options(
    body: &mut Value,
    request: &ModelRequest<'_>,
    dialect: &Dialect,
    max_tokens_key: &str,
    project: impl Fn(&iris_core::ToolSpec) -> Value,
) {
    let options = request.options;
    if let Some(temperature) = options.temperature {
        body["temperature"] = json!(temperature);
    }
    if let Some(max_tokens) = options.max_tokens {
        body[max_tokens_key] = json!(max_tokens);
    }
    if !request.tools.is_empty() {
        body["tools"] = request.tools.iter().map(project).collect();
        if dialect.tool_choices.contains(&options.tool_choice) {
            body["tool_choice"] = json!(match options.tool_choice {
                ToolChoice::Auto => "auto",
                ToolChoice::None => "none",
                ToolChoice::Required => "required",
            });
        } else {
            // The server would take it as `auto` without a word: say so.
            tracing::warn!(
                tool_choice = ?options.tool_choice,
                "this server does not honour the tool choice; it is left out of the request, and the model decides"
            );
        }
        if dialect.parallel_tool_calls {
            body["parallel_tool_calls"] = json!(options.parallel_tool_calls);
        }
    }
}

/// Chat Completions' `response_format` for `output`: OpenAI's own API gets
/// the strict projection (when the schema can be made strict); the local
/// servers get the schema as written, which they turn into a grammar with
/// more of its bounds than strict mode keeps.
fn response_format(output: &crate::OutputFormat, profile: crate::ServerProfile) -> Value {
    let (schema, strict) = match profile {
        crate::ServerProfile::Openai => {
            let (schema, report) = output.openai();
            (schema, report.strict)
        }
        _ => (output.schema().clone(), false),
    };
    json!({
        "type": "json_schema",
        "json_schema": {"name": output.name(), "schema": schema, "strict": strict},
    })
}

fn wire_call(call: &ToolUseBlock) -> Value {
    json!({
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.input.to_string()},
    })
}

/// The first choice of a Chat Completions answer.
fn parse_response(answer: &Value) -> Result<ModelResponse, ModelError> {
    let choice = answer
        .pointer("/choices/0")
        .ok_or_else(|| ModelError::new("the model endpoint answered without a choice"))?;
    let message = &choice["message"];
    let text = message["content"]
        .as_str()
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .or_else(|| {
            message["refusal"]
                .as_str()
                .map(|r| format!("[refused] {r}"))
        });
    let mut calls = Calls::default();
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        calls.take_whole(call)?;
    }
    let finish = finish_reason(
        choice["finish_reason"].as_str(),
        message["refusal"].is_string(),
        !calls.is_empty(),
    );
    let tool_calls = calls.finish(answer["id"].as_str(), finish);
    let usage = usage(&answer["usage"]);
    Ok(ModelResponse {
        text,
        tool_calls,
        usage,
        finish,
    })
}

/// Chat Completions' usage, with the cached and reasoning details when the
/// server gives them.
pub(super) fn usage(usage: &Value) -> Usage {
    let count = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: count("/prompt_tokens"),
        output_tokens: count("/completion_tokens"),
        cached_input_tokens: count("/prompt_tokens_details/cached_tokens"),
        reasoning_tokens: count("/completion_tokens_details/reasoning_tokens"),
    }
}
