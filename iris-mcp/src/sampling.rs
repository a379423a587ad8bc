//! A server's request for a model (`sampling/createMessage`), answered by
//! the agent's own model when its caller cannot sample and the operator
//! allows it ([`McpServerConfig::sample_with_model`]).
//!
//! Only text is sampled: messages of the person and of the model, the
//! server's system prompt as instructions, no tools. The answer is bounded
//! by the operator's `max_tokens` (the server may ask for fewer, never
//! more), and each sampling counts among the requests one call may make of
//! its caller.
//!
//! [`McpServerConfig::sample_with_model`]: crate::client::McpServerConfig::sample_with_model
#![allow(
    deprecated,
    reason = "sampling is part of the 2025 revisions this gateway relays (deprecated by SEP-2577 from 2026-07-28 on)"
)]

use std::sync::Arc;

use iris_model::{FinishReason, Message, Model, ModelOptions, ModelRequest, ToolChoice};
use rmcp::ErrorData;
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};
use serde_json::{Value, json};

/// The model that answers a server's samplings, and how much it may say.
#[derive(Clone)]
pub struct SamplingModel {
    model: Arc<dyn Model>,
    name: String,
    max_tokens: u32,
}

impl std::fmt::Debug for SamplingModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SamplingModel")
            .field("name", &self.name)
            .field("max_tokens", &self.max_tokens)
            .finish_non_exhaustive()
    }
}

impl PartialEq for SamplingModel {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.model, &other.model)
            && self.name == other.name
            && self.max_tokens == other.max_tokens
    }
}

impl SamplingModel {
    /// Most tokens of one answer, unless the operator says otherwise.
    pub const DEFAULT_MAX_TOKENS: u32 = 1_024;

    /// `model`, named `name` to the server (its `model` field), answering
    /// at most [`Self::DEFAULT_MAX_TOKENS`] tokens.
    pub fn new(model: Arc<dyn Model>, name: impl Into<String>) -> Self {
        Self {
            model,
            name: name.into(),
            max_tokens: Self::DEFAULT_MAX_TOKENS,
        }
    }

    /// Answers at most `max_tokens` tokens (at least one).
    #[must_use]
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens.max(1);
        self
    }

    /// The model's answer to `request`, or why it was not asked.
    pub(crate) async fn sample(
        &self,
        request: &CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        let asked = serde_json::to_value(request)
            .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?;
        let messages = messages(&asked)?;
        let instructions = asked.get("systemPrompt").and_then(Value::as_str);
        let wanted = asked
            .get("maxTokens")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(self.max_tokens);
        let options = ModelOptions {
            temperature: asked.get("temperature").and_then(Value::as_f64),
            max_tokens: Some(wanted.clamp(1, self.max_tokens)),
            tool_choice: ToolChoice::None,
            parallel_tool_calls: false,
        };
        let answer = self
            .model
            .complete(ModelRequest {
                instructions,
                messages: &messages,
                tools: &[],
                options: &options,
                output: None,
            })
            .await
            .map_err(|error| {
                ErrorData::internal_error(
                    format!("the agent's model could not answer: {}", error.message),
                    None,
                )
            })?;
        let stop = match answer.finish {
            FinishReason::Length => CreateMessageResult::STOP_REASON_END_MAX_TOKEN,
            _ => CreateMessageResult::STOP_REASON_END_TURN,
        };
        serde_json::from_value(json!({
            "role": "assistant",
            "content": {"type": "text", "text": answer.text.unwrap_or_default()},
            "model": self.name,
            "stopReason": stop,
        }))
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))
    }
}

/// Most bytes of text one sampling may give the agent's model to read
/// (messages and system prompt together).
const MAX_INPUT_BYTES: usize = 256 * 1024;

/// The messages of a sampling request, as the model reads them: text only,
/// at most [`MAX_INPUT_BYTES`] with the system prompt.
fn messages(asked: &Value) -> Result<Vec<Message>, ErrorData> {
    let only_text = || {
        ErrorData::invalid_params(
            "only text is sampled with the agent's model (no images, audio or tools)",
            None,
        )
    };
    let listed = asked
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| ErrorData::invalid_params("a sampling names its messages", None))?;
    let mut messages = Vec::with_capacity(listed.len());
    for message in listed {
        let blocks = match message.get("content") {
            Some(Value::Array(blocks)) => blocks.iter().collect::<Vec<_>>(),
            Some(block) => vec![block],
            None => Vec::new(),
        };
        let mut text = String::new();
        for block in blocks {
            if block.get("type").and_then(Value::as_str) != Some("text") {
                return Err(only_text());
            }
            text.push_str(
                block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            );
        }
        messages.push(match message.get("role").and_then(Value::as_str) {
            Some("assistant") => Message::Assistant {
                text: Some(text),
                tool_calls: Vec::new(),
            },
            _ => Message::User { text },
        });
    }
    if messages.is_empty() {
        return Err(ErrorData::invalid_params(
            "a sampling names no message",
            None,
        ));
    }
    let read: usize = messages
        .iter()
        .map(|message| match message {
            Message::User { text } => text.len(),
            Message::Assistant { text, .. } => text.as_ref().map_or(0, String::len),
            Message::Tool { .. } => 0,
        })
        .sum::<usize>()
        + asked
            .get("systemPrompt")
            .and_then(Value::as_str)
            .map_or(0, str::len);
    if read > MAX_INPUT_BYTES {
        return Err(ErrorData::invalid_params(
            format!(
                "a sampling gives the agent's model {read} bytes to read; at most {MAX_INPUT_BYTES} are sampled"
            ),
            None,
        ));
    }
    Ok(messages)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;

    #[test]
    fn the_model_reads_text_only_and_not_without_bound() {
        let text = |text: &str| json!({"messages": [{"role": "user", "content": {"type": "text", "text": text}}]});
        assert_eq!(messages(&text("hi")).unwrap().len(), 1);
        let image = json!({"messages": [{"role": "user", "content": {"type": "image", "data": "", "mimeType": "image/png"}}]});
        assert!(messages(&image).unwrap_err().message.contains("only text"));
        let flood = text(&"x".repeat(MAX_INPUT_BYTES + 1));
        assert!(
            messages(&flood)
                .unwrap_err()
                .message
                .contains("bytes to read")
        );
        assert!(messages(&json!({"messages": []})).is_err());
    }
}
