//! Reading a Chat Completions answer streamed as server-sent events: text
//! handed on as it arrives, tool-call argument fragments joined by call
//! index, usage from the last chunk.

use iris_core::ToolUseBlock;
use serde_json::Value;

use super::model::{FinishReason, ModelError, ModelResponse, OnText, Usage};

/// Largest event the reader buffers; a longer one is not an event stream.
const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// One call being put together from its fragments.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Reads `response` to its `[DONE]`.
pub(super) async fn read(
    mut response: reqwest::Response,
    on_text: OnText<'_>,
) -> Result<ModelResponse, ModelError> {
    let mut pending: Vec<u8> = Vec::new();
    let mut text = String::new();
    let mut calls: Vec<PartialCall> = Vec::new();
    let mut finish = FinishReason::Stop;
    let mut usage = Usage::default();
    loop {
        let chunk = response
            .chunk()
            .await
            .map_err(|e| ModelError::new(format!("the answer's stream broke off: {e}")))?;
        let Some(chunk) = chunk else {
            return Err(ModelError::new(
                "the answer's stream ended before it finished (no `[DONE]`); ask again",
            ));
        };
        pending.extend_from_slice(&chunk);
        if pending.len() > MAX_EVENT_BYTES {
            return Err(ModelError::new(
                "the answer's stream sent an event over 4 MiB",
            ));
        }
        while let Some(end) = find_event_end(&pending) {
            let event: Vec<u8> = pending.drain(..end).collect();
            for line in String::from_utf8_lossy(&event).lines() {
                let Some(data) = line.strip_prefix("data:").map(str::trim) else {
                    continue;
                };
                if data == "[DONE]" {
                    return Ok(finished(text, calls, finish, usage));
                }
                let Ok(chunk) = serde_json::from_str::<Value>(data) else {
                    return Err(ModelError::new(
                        "the answer's stream sent an event that is not JSON",
                    ));
                };
                take(
                    &chunk,
                    on_text,
                    &mut text,
                    &mut calls,
                    &mut finish,
                    &mut usage,
                );
            }
        }
    }
}

/// The end of the first complete event (after its blank line).
fn find_event_end(buffer: &[u8]) -> Option<usize> {
    buffer
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|i| i + 2)
        .or_else(|| {
            buffer
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map(|i| i + 4)
        })
}

fn take(
    chunk: &Value,
    on_text: OnText<'_>,
    text: &mut String,
    calls: &mut Vec<PartialCall>,
    finish: &mut FinishReason,
    usage: &mut Usage,
) {
    if let Some(tokens) = chunk["usage"]["prompt_tokens"].as_u64() {
        usage.input_tokens = tokens;
        usage.output_tokens = chunk["usage"]["completion_tokens"].as_u64().unwrap_or(0);
    }
    let Some(choice) = chunk.pointer("/choices/0") else {
        return;
    };
    let delta = &choice["delta"];
    if let Some(piece) = delta["content"].as_str().filter(|p| !p.is_empty()) {
        text.push_str(piece);
        on_text(piece);
    }
    for fragment in delta["tool_calls"].as_array().into_iter().flatten() {
        let index = fragment["index"]
            .as_u64()
            .and_then(|i| usize::try_from(i).ok())
            .unwrap_or(calls.len());
        // Indexes come in order; a bounded vector guards against a server
        // that names a huge one.
        if index > calls.len() || index > 1024 {
            continue;
        }
        if index == calls.len() {
            calls.push(PartialCall::default());
        }
        let call = &mut calls[index];
        if let Some(id) = fragment["id"].as_str() {
            id.clone_into(&mut call.id);
        }
        if let Some(name) = fragment["function"]["name"].as_str() {
            call.name.push_str(name);
        }
        if let Some(arguments) = fragment["function"]["arguments"].as_str() {
            call.arguments.push_str(arguments);
        }
    }
    *finish = match choice["finish_reason"].as_str() {
        Some("tool_calls") => FinishReason::ToolCalls,
        Some("length") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(_) => FinishReason::Stop,
        None => *finish,
    };
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
