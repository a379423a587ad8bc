//! The OpenAI Responses adapter (feature `openai`): the run's history as
//! input items, tools and results in the existing projections, retries as
//! for every adapter. Each request carries the whole history (no stored
//! conversation on the provider's side), so a run resumes anywhere.

mod stream;

use iris_core::provider::{openai_responses, openai_responses_result};
use iris_core::{BoxFuture, ToolUseBlock};
use reqwest::header::HeaderName;
use serde_json::{Value, json};

use super::config::ModelProvider;
use super::http::{Api, HttpEndpoint, HttpModel, Wire};
use super::openai_chat::{OPENAI_BASE_URL, add_options};
use super::profile::ServerProfile;
use super::{FinishReason, Message, ModelError, ModelRequest, ModelResponse, OnDelta, Usage};

/// A model behind the OpenAI Responses API (`https://api.openai.com/v1`
/// unless another server speaks it), its key from `api_key_env` (or
/// `OPENAI_API_KEY`).
pub type OpenAiResponses = HttpModel<ResponsesWire>;

/// The Responses wire format.
#[derive(Debug)]
pub struct ResponsesWire;

impl Wire for ResponsesWire {
    const API: Api = Api {
        provider: ModelProvider::OpenaiResponses,
        name: "OpenAI Responses",
        base_url: OPENAI_BASE_URL,
        key_variable: Some("OPENAI_API_KEY"),
        path: "responses",
    };

    fn headers(endpoint: &HttpEndpoint) -> Vec<(HeaderName, String)> {
        endpoint.bearer()
    }

    fn body(endpoint: &HttpEndpoint, request: &ModelRequest<'_>) -> Value {
        let mut input = Vec::new();
        for message in request.messages {
            match message {
                Message::User { text } => {
                    input.push(json!({"type": "message", "role": "user", "content": text}));
                }
                Message::Assistant { text, tool_calls } => {
                    if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                        input
                            .push(json!({"type": "message", "role": "assistant", "content": text}));
                    }
                    input.extend(tool_calls.iter().map(wire_call));
                }
                Message::Tool {
                    call_id, result, ..
                } => input.push(openai_responses_result(call_id, result)),
            }
        }
        let mut body = json!({"model": endpoint.model(), "input": input});
        if let Some(instructions) = request.instructions {
            body["instructions"] = json!(instructions);
        }
        add_options(
            &mut body,
            request,
            &ServerProfile::Openai.dialect(),
            "max_output_tokens",
            |spec| openai_responses(spec).tool,
        );
        if let Some(output) = request.output {
            let (schema, report) = output.openai();
            body["text"] = json!({"format": {
                "type": "json_schema",
                "name": output.name(),
                "schema": schema,
                "strict": report.strict,
            }});
        }
        body
    }

    fn parse(answer: &Value) -> Result<ModelResponse, ModelError> {
        parse_response(answer)
    }

    fn read_stream(
        response: reqwest::Response,
        on_delta: OnDelta<'_>,
    ) -> BoxFuture<'_, Result<ModelResponse, ModelError>> {
        Box::pin(stream::read(response, on_delta, parse_response))
    }
}

fn wire_call(call: &ToolUseBlock) -> Value {
    json!({
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": call.input.to_string(),
    })
}

/// The text and calls among a Responses answer's output items.
fn parse_response(answer: &Value) -> Result<ModelResponse, ModelError> {
    let output = answer["output"]
        .as_array()
        .ok_or_else(|| ModelError::new("the model endpoint answered without output"))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    let mut refused = false;
    for item in output {
        match item["type"].as_str() {
            Some("message") => {
                for part in item["content"].as_array().into_iter().flatten() {
                    match part["type"].as_str() {
                        Some("output_text") => {
                            text.push_str(part["text"].as_str().unwrap_or_default());
                        }
                        Some("refusal") => {
                            refused = true;
                            text.push_str("[refused] ");
                            text.push_str(part["refusal"].as_str().unwrap_or_default());
                        }
                        _ => {}
                    }
                }
            }
            Some("function_call") => {
                let raw = item["arguments"].as_str().unwrap_or("{}");
                let input =
                    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()));
                tool_calls.push(ToolUseBlock::new(
                    item["call_id"].as_str().unwrap_or_default(),
                    item["name"].as_str().unwrap_or_default(),
                    input,
                ));
            }
            _ => {}
        }
    }
    let incomplete = answer["status"] == "incomplete"
        && answer["incomplete_details"]["reason"] == "max_output_tokens";
    let finish = if refused {
        FinishReason::ContentFilter
    } else if incomplete {
        FinishReason::Length
    } else if tool_calls.is_empty() {
        FinishReason::Stop
    } else {
        FinishReason::ToolCalls
    };
    Ok(ModelResponse {
        text: (!text.is_empty()).then_some(text),
        tool_calls,
        usage: Usage {
            cached_input_tokens: count(answer, "/usage/input_tokens_details/cached_tokens"),
            reasoning_tokens: count(answer, "/usage/output_tokens_details/reasoning_tokens"),
            ..Usage::new(
                count(answer, "/usage/input_tokens"),
                count(answer, "/usage/output_tokens"),
            )
        },
        finish,
    })
}

/// The number at `pointer`, 0 when there is none.
pub(super) fn count(answer: &Value, pointer: &str) -> u64 {
    answer.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}
