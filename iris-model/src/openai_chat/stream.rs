//! Reading a Chat Completions answer streamed as server-sent events: text
//! handed on as it arrives, tool calls put together by the rules of
//! [`super::calls`], usage from the last chunk.

use serde_json::Value;

use super::calls::{Calls, Taken, finish_reason};
use crate::sse::SseReader;
use crate::{ModelDelta, ModelError, ModelResponse, OnDelta, Usage};

/// What the chunks so far said.
#[derive(Default)]
struct Answer {
    /// The answer's id, the first chunk that gave one.
    id: Option<String>,
    text: String,
    calls: Calls,
    reason: Option<String>,
    usage: Usage,
}

/// Reads `response` to its `[DONE]`.
pub(super) async fn read(
    response: reqwest::Response,
    on_delta: OnDelta<'_>,
) -> Result<ModelResponse, ModelError> {
    let mut events = SseReader::new(response);
    let mut answer = Answer::default();
    while let Some(event) = events.next().await? {
        if event.data.trim() == "[DONE]" {
            return Ok(answer.finished());
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
        answer.take(&chunk, on_delta)?;
    }
    Err(ModelError::new(
        "the answer's stream ended before it finished (no `[DONE]`); ask again",
    ))
}

impl Answer {
    fn take(&mut self, chunk: &Value, on_delta: OnDelta<'_>) -> Result<(), ModelError> {
        if self.id.is_none() {
            self.id = chunk["id"].as_str().map(str::to_owned);
        }
        if chunk["usage"]["prompt_tokens"].is_u64() {
            self.usage = super::usage(&chunk["usage"]);
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(());
        };
        let delta = &choice["delta"];
        if let Some(piece) = delta["content"].as_str().filter(|p| !p.is_empty()) {
            self.text.push_str(piece);
            on_delta(ModelDelta::Text(piece));
        }
        for fragment in delta["tool_calls"].as_array().into_iter().flatten() {
            let Taken {
                position,
                id,
                name,
                arguments,
            } = self.calls.take(fragment)?;
            on_delta(ModelDelta::ToolCall {
                index: position,
                id,
                name,
                arguments: &arguments,
            });
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.reason = Some(reason.to_owned());
        }
        Ok(())
    }

    fn finished(self) -> ModelResponse {
        let finish = finish_reason(self.reason.as_deref(), false, !self.calls.is_empty());
        ModelResponse {
            text: (!self.text.is_empty()).then_some(self.text),
            tool_calls: self.calls.finish(self.id.as_deref(), finish),
            usage: self.usage,
            finish,
        }
    }
}
