//! Reading a Chat Completions answer streamed as server-sent events: text
//! handed on as it arrives, tool-call argument fragments joined by call
//! index, usage from the last chunk.

use iris_core::ToolUseBlock;
use serde_json::Value;

use crate::sse::SseReader;
use crate::{FinishReason, ModelDelta, ModelError, ModelResponse, OnDelta, Usage};

/// Most tool calls one answer may hold.
const MAX_CALLS: usize = 1024;

/// One call being put together from its fragments.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Reads `response` to its `[DONE]`.
pub(super) async fn read(
    response: reqwest::Response,
    on_delta: OnDelta<'_>,
) -> Result<ModelResponse, ModelError> {
    let mut events = SseReader::new(response);
    let mut text = String::new();
    let mut calls: Vec<PartialCall> = Vec::new();
    let mut finish = FinishReason::Stop;
    let mut usage = Usage::default();
    while let Some(event) = events.next().await? {
        if event.data.trim() == "[DONE]" {
            return Ok(finished(text, calls, finish, usage));
        }
        let Ok(chunk) = serde_json::from_str::<Value>(&event.data) else {
            return Err(ModelError::new(
                "the answer's stream sent an event that is not JSON",
            ));
        };
        if let Some(message) = chunk["error"]["message"].as_str() {
            return Err(ModelError::new(format!(
                "the model endpoint failed mid-stream: {message}"
            )));
        }
        take(
            &chunk,
            on_delta,
            &mut text,
            &mut calls,
            &mut finish,
            &mut usage,
        )?;
    }
    Err(ModelError::new(
        "the answer's stream ended before it finished (no `[DONE]`); ask again",
    ))
}

fn take(
    chunk: &Value,
    on_delta: OnDelta<'_>,
    text: &mut String,
    calls: &mut Vec<PartialCall>,
    finish: &mut FinishReason,
    usage: &mut Usage,
) -> Result<(), ModelError> {
    if chunk["usage"]["prompt_tokens"].is_u64() {
        *usage = super::usage(&chunk["usage"]);
    }
    let Some(choice) = chunk.pointer("/choices/0") else {
        return Ok(());
    };
    let delta = &choice["delta"];
    if let Some(piece) = delta["content"].as_str().filter(|p| !p.is_empty()) {
        text.push_str(piece);
        on_delta(ModelDelta::Text(piece));
    }
    for fragment in delta["tool_calls"].as_array().into_iter().flatten() {
        let index = fragment["index"]
            .as_u64()
            .and_then(|i| usize::try_from(i).ok())
            .unwrap_or(calls.len());
        // Indexes come in order and are bounded, so a server naming a huge
        // one cannot grow the vector; a call is never dropped silently.
        if index >= MAX_CALLS {
            return Err(ModelError::new(format!(
                "the answer's stream sent more than {MAX_CALLS} tool calls; Iris reads at most {MAX_CALLS} per answer"
            )));
        }
        if index > calls.len() {
            return Err(ModelError::new(format!(
                "the answer's stream sent a fragment of tool call {index} when {} were open; calls come in order",
                calls.len()
            )));
        }
        if index == calls.len() {
            calls.push(PartialCall::default());
        }
        let call = &mut calls[index];
        let id = fragment["id"].as_str();
        let name = fragment["function"]["name"].as_str();
        let arguments = fragment["function"]["arguments"]
            .as_str()
            .unwrap_or_default();
        if let Some(id) = id {
            id.clone_into(&mut call.id);
        }
        if let Some(name) = name {
            call.name.push_str(name);
        }
        call.arguments.push_str(arguments);
        on_delta(ModelDelta::ToolCall {
            index,
            id,
            name,
            arguments,
        });
    }
    *finish = match choice["finish_reason"].as_str() {
        Some("tool_calls") => FinishReason::ToolCalls,
        Some("length") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(_) => FinishReason::Stop,
        None => *finish,
    };
    Ok(())
}

fn finished(
    text: String,
    calls: Vec<PartialCall>,
    finish: FinishReason,
    usage: Usage,
) -> ModelResponse {
    let tool_calls = calls
        .into_iter()
        .map(|call| {
            let input =
                serde_json::from_str(&call.arguments).unwrap_or(Value::String(call.arguments));
            ToolUseBlock::new(call.id, call.name, input)
        })
        .collect();
    ModelResponse {
        text: (!text.is_empty()).then_some(text),
        tool_calls,
        usage,
        finish,
    }
}
