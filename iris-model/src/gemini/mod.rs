//! The Gemini API adapter (feature `gemini`): `generateContent`, and its
//! server-sent-event stream (`streamGenerateContent?alt=sse`). Tools go as
//! `functionDeclarations` in the `parametersJsonSchema` projection, the
//! key in the `x-goog-api-key` header (never in the URL, errors or
//! `Debug`), function-call ids are echoed with their responses, every
//! response of a step joins one turn, and a call's `thoughtSignature` goes
//! back verbatim on the part that carried it (Gemini refuses a later turn
//! without it; of parallel calls only the first carries one).

mod stream;

use iris_core::provider::{gemini, gemini_result};
use iris_core::{BoxFuture, ToolUseBlock};
use reqwest::header::HeaderName;
use serde_json::{Map, Value, json};

use super::config::ModelProvider;
use super::http::{Api, HttpEndpoint, HttpModel, Wire};
use super::{
    FinishReason, Message, ModelError, ModelRequest, ModelResponse, OnDelta, ToolChoice, Usage,
};

/// The endpoint when the agent file gives no `base_url`.
pub const GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// A model behind the Gemini API (`https://generativelanguage.googleapis.com/v1beta`
/// unless another server speaks it), its key from `api_key_env` (or
/// `GEMINI_API_KEY`).
pub type GeminiModel = HttpModel<GenerateContentWire>;

/// The `generateContent` wire format.
#[derive(Debug)]
pub struct GenerateContentWire;

impl Wire for GenerateContentWire {
    const API: Api = Api {
        provider: ModelProvider::Gemini,
        name: "Gemini",
        base_url: GEMINI_BASE_URL,
        key_variable: Some("GEMINI_API_KEY"),
        path: "models/{model}:generateContent",
    };

    /// The key, when there is one (a local server may take none).
    fn headers(endpoint: &HttpEndpoint) -> Vec<(HeaderName, String)> {
        if endpoint.api_key().is_empty() {
            Vec::new()
        } else {
            vec![(
                HeaderName::from_static("x-goog-api-key"),
                endpoint.api_key().to_owned(),
            )]
        }
    }

    fn body(_endpoint: &HttpEndpoint, request: &ModelRequest<'_>) -> Value {
        let mut body = json!({"contents": contents(request.messages)});
        if let Some(instructions) = request.instructions {
            body["systemInstruction"] = json!({"parts": [{"text": instructions}]});
        }
        if !request.tools.is_empty() {
            let declarations: Vec<Value> =
                request.tools.iter().map(|spec| gemini(spec).tool).collect();
            body["tools"] = json!([{"functionDeclarations": declarations}]);
            body["toolConfig"] = json!({"functionCallingConfig": {"mode": match request.options.tool_choice {
                ToolChoice::Auto => "AUTO",
                ToolChoice::None => "NONE",
                ToolChoice::Required => "ANY",
            }}});
        }
        let mut generation = Map::new();
        if let Some(temperature) = request.options.temperature {
            generation.insert("temperature".into(), json!(temperature));
        }
        if let Some(max_tokens) = request.options.max_tokens {
            generation.insert("maxOutputTokens".into(), json!(max_tokens));
        }
        if let Some(output) = request.output {
            let (schema, _) = output.gemini();
            generation.insert("responseMimeType".into(), json!("application/json"));
            generation.insert("responseJsonSchema".into(), schema);
        }
        if !generation.is_empty() {
            body["generationConfig"] = Value::Object(generation);
        }
        body
    }

    /// The stream is asked for by its URL; the body is the same.
    fn stream_body(_endpoint: &HttpEndpoint, _body: &mut Value) {}

    fn stream_url(url: &str) -> String {
        format!(
            "{}?alt=sse",
            url.replace(":generateContent", ":streamGenerateContent")
        )
    }

    fn parse(answer: &Value) -> Result<ModelResponse, ModelError> {
        let mut reading = Reading::default();
        reading.take(answer, &|_| {})?;
        reading.finished()
    }

    fn read_stream(
        response: reqwest::Response,
        on_delta: OnDelta<'_>,
    ) -> BoxFuture<'_, Result<ModelResponse, ModelError>> {
        Box::pin(stream::read(response, on_delta))
    }
}

/// The history as Gemini's `contents`: the model's turns as `model`, and
/// consecutive tool results joined in one `user` turn, each response with
/// its call's id.
fn contents(messages: &[Message]) -> Vec<Value> {
    let mut contents: Vec<Value> = Vec::new();
    for message in messages {
        match message {
            Message::User { text } => {
                contents.push(json!({"role": "user", "parts": [{"text": text}]}));
            }
            Message::Assistant { text, tool_calls } => {
                let mut parts = Vec::new();
                if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                    parts.push(json!({"text": text}));
                }
                parts.extend(tool_calls.iter().map(wire_call));
                contents.push(json!({"role": "model", "parts": parts}));
            }
            Message::Tool {
                call_id,
                tool,
                result,
            } => {
                let mut parts = gemini_result(tool, result);
                if let Some(response) = parts
                    .first_mut()
                    .and_then(|p| p.get_mut("functionResponse"))
                    && !call_id.is_empty()
                {
                    response["id"] = json!(call_id);
                }
                let joins = contents.last().is_some_and(|last| {
                    last["role"] == "user"
                        && last["parts"].as_array().is_some_and(|p| {
                            p.iter().any(|part| part.get("functionResponse").is_some())
                        })
                });
                match contents.last_mut() {
                    Some(last) if joins => {
                        if let Some(existing) = last["parts"].as_array_mut() {
                            existing.extend(parts);
                        }
                    }
                    _ => contents.push(json!({"role": "user", "parts": parts})),
                }
            }
        }
    }
    contents
}

/// A call as the model made it, its signature on the same part.
fn wire_call(call: &ToolUseBlock) -> Value {
    let mut function_call = json!({"name": call.name, "args": call.input});
    if !call.id.is_empty() {
        function_call["id"] = json!(call.id);
    }
    let mut part = json!({"functionCall": function_call});
    if let Some(signature) = &call.signature {
        part["thoughtSignature"] = json!(signature);
    }
    part
}

/// What the answer (or the stream's chunks so far) said.
#[derive(Default)]
pub(super) struct Reading {
    /// The answer's id, for call ids Gemini left out.
    response_id: Option<String>,
    text: String,
    calls: Vec<ToolUseBlock>,
    finish: Option<String>,
    blocked: Option<String>,
    usage: Usage,
}

/// Most tool calls one answer may hold.
const MAX_CALLS: usize = 1024;

impl Reading {
    /// Takes in one answer, or one chunk of a stream (each holds the next
    /// parts whole: calls are never split).
    pub(super) fn take(
        &mut self,
        chunk: &Value,
        on_delta: super::OnDelta<'_>,
    ) -> Result<(), ModelError> {
        if let Some(message) = chunk["error"]["message"].as_str() {
            return Err(ModelError::new(format!(
                "the model endpoint failed: {message}"
            )));
        }
        if self.response_id.is_none() {
            self.response_id = chunk["responseId"].as_str().map(str::to_owned);
        }
        if chunk["usageMetadata"].is_object() {
            self.usage = usage(&chunk["usageMetadata"]);
        }
        if let Some(reason) = chunk["promptFeedback"]["blockReason"].as_str() {
            self.blocked = Some(reason.to_owned());
        }
        let candidate = &chunk["candidates"][0];
        for part in candidate["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            // A summary of the model's thinking is not its answer.
            if part["thought"] == true {
                continue;
            }
            if let Some(piece) = part["text"].as_str().filter(|t| !t.is_empty()) {
                self.text.push_str(piece);
                on_delta(super::ModelDelta::Text(piece));
            }
            if part["functionCall"].is_object() {
                self.take_call(part, on_delta)?;
            }
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            self.finish = Some(reason.to_owned());
        }
        Ok(())
    }

    fn take_call(&mut self, part: &Value, on_delta: super::OnDelta<'_>) -> Result<(), ModelError> {
        if self.calls.len() >= MAX_CALLS {
            return Err(ModelError::new(format!(
                "the answer holds more than {MAX_CALLS} tool calls; Iris reads at most {MAX_CALLS} per answer"
            )));
        }
        let call = &part["functionCall"];
        let name = call["name"].as_str().unwrap_or_default();
        let args = match &call["args"] {
            Value::Null => json!({}),
            args => args.clone(),
        };
        // The id is filled in when the answer ends, if Gemini gave none.
        let mut block = ToolUseBlock::new(call["id"].as_str().unwrap_or_default(), name, args);
        if let Some(signature) = part["thoughtSignature"].as_str() {
            block = block.with_signature(signature);
        }
        let arguments = block.input.to_string();
        on_delta(super::ModelDelta::ToolCall {
            index: self.calls.len(),
            id: call["id"].as_str(),
            name: Some(name),
            arguments: &arguments,
        });
        self.calls.push(block);
        Ok(())
    }

    /// The answer read.
    ///
    /// # Errors
    /// [`ModelError`] when Gemini ended the answer on a malformed call.
    pub(super) fn finished(self) -> Result<ModelResponse, ModelError> {
        let Self {
            response_id,
            text,
            mut calls,
            finish,
            blocked,
            usage,
        } = self;
        if finish.as_deref() == Some("MALFORMED_FUNCTION_CALL") {
            return Err(ModelError::new(
                "Gemini ended the answer on a function call it could not write (MALFORMED_FUNCTION_CALL); ask again",
            ));
        }
        let base = response_id.unwrap_or_else(|| "gemini".to_owned());
        for (place, call) in calls.iter_mut().enumerate() {
            if call.id.is_empty() {
                call.id = format!("call_{base}_{place}");
            }
        }
        let filtered = blocked.is_some()
            || matches!(
                finish.as_deref(),
                Some(
                    "SAFETY"
                        | "RECITATION"
                        | "BLOCKLIST"
                        | "PROHIBITED_CONTENT"
                        | "SPII"
                        | "IMAGE_SAFETY"
                        | "LANGUAGE"
                )
            );
        let finish = if filtered {
            FinishReason::ContentFilter
        } else if finish.as_deref() == Some("MAX_TOKENS") {
            FinishReason::Length
        } else if calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        let text = match blocked {
            Some(reason) if text.is_empty() => Some(format!("[blocked] {reason}")),
            _ => (!text.is_empty()).then_some(text),
        };
        Ok(ModelResponse {
            text,
            tool_calls: calls,
            usage,
            finish,
        })
    }
}

/// Gemini's usage: `promptTokenCount` counts the cached tokens too, and
/// `candidatesTokenCount` leaves the thinking out.
fn usage(metadata: &Value) -> Usage {
    let count = |key: &str| metadata[key].as_u64().unwrap_or(0);
    let thoughts = count("thoughtsTokenCount");
    Usage {
        input_tokens: count("promptTokenCount"),
        output_tokens: count("candidatesTokenCount").saturating_add(thoughts),
        cached_input_tokens: count("cachedContentTokenCount"),
        reasoning_tokens: thoughts,
    }
}
