//! The model layer: a provider-neutral request and response, the [`Model`]
//! trait a host (or an adapter) implements to answer them, the
//! [`ModelConfig`] that names a model, and the HTTP adapters: one
//! [`HttpModel`] with its client, retries and streaming, speaking each
//! provider's wire format ([`OpenAiChat`] and [`OpenAiResponses`] with
//! feature `openai`, [`AnthropicMessages`] with feature `anthropic`,
//! [`GeminiModel`] with feature `gemini`).

#[cfg(feature = "anthropic")]
mod anthropic;
mod config;
#[cfg(all(
    feature = "fuzzing",
    any(feature = "openai", feature = "anthropic", feature = "gemini")
))]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(feature = "gemini")]
mod gemini;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "openai")]
mod openai_chat;
#[cfg(feature = "openai")]
mod openai_responses;
mod output;
mod profile;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
mod sse;
mod usage;

#[cfg(feature = "anthropic")]
pub use anthropic::{
    ANTHROPIC_BASE_URL, ANTHROPIC_VERSION, AnthropicMessages, DEFAULT_MAX_TOKENS, MessagesWire,
};
pub use config::{ModelConfig, ModelProvider};
#[cfg(feature = "gemini")]
pub use gemini::{GEMINI_BASE_URL, GeminiModel, GenerateContentWire};
#[cfg(feature = "http")]
pub use http::{Api, HttpEndpoint, HttpModel, MAX_ANSWER_BYTES, RetryPolicy, Wire};
#[cfg(feature = "openai")]
pub use openai_chat::{ChatCompletionsWire, OPENAI_BASE_URL, OpenAiChat};
#[cfg(feature = "openai")]
pub use openai_responses::{OpenAiResponses, ResponsesWire};
pub use output::OutputFormat;
pub use profile::{Dialect, ServerProfile};
pub use usage::Usage;

use iris_core::{BoxFuture, ToolResult, ToolSpec, ToolUseBlock};
use serde::{Deserialize, Serialize};

/// One entry of a run's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the person asked.
    User {
        /// The text.
        text: String,
    },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        /// The text, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// The calls, in the order the model made them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolUseBlock>,
    },
    /// The result of one call, answering the call with the same id.
    Tool {
        /// The call's id.
        call_id: String,
        /// The tool the model called (providers such as Gemini answer by name).
        tool: String,
        /// The result: text, images, or an error with its kind.
        result: ToolResult,
    },
}

/// Whether and how the model should call tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
}

/// Sampling and tool options of a request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ModelOptions {
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Most tokens of the answer.
    pub max_tokens: Option<u32>,
    /// Whether and how to call tools.
    pub tool_choice: ToolChoice,
    /// Whether several calls may come in one answer.
    pub parallel_tool_calls: bool,
}

/// What one step asks the model. It borrows the run's history rather than
/// copying it: a long run would otherwise copy its whole history every step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelRequest<'a> {
    /// The system instructions.
    pub instructions: Option<&'a str>,
    /// The history, oldest first.
    pub messages: &'a [Message],
    /// The tools offered this step: the eager ones and those disclosed.
    pub tools: &'a [ToolSpec],
    /// Sampling and tool options.
    pub options: &'a ModelOptions,
    /// The shape the final answer must take, when the run asks for one:
    /// sent with the provider's native structured output.
    pub output: Option<&'a OutputFormat>,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It finished its answer.
    #[default]
    Stop,
    /// It called tools.
    ToolCalls,
    /// It reached the token limit.
    Length,
    /// The provider filtered or the model refused.
    ContentFilter,
}

/// The model's answer to one step (serializable, so that a durable engine
/// can keep it and replay it).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ModelResponse {
    /// Its text, if any.
    pub text: Option<String>,
    /// Its tool calls, in order.
    pub tool_calls: Vec<ToolUseBlock>,
    /// Tokens used.
    pub usage: Usage,
    /// Why it stopped.
    pub finish: FinishReason,
}

impl ModelResponse {
    /// This answer as the run reads it when the output format travelled as
    /// the tool `answering` (a model without structured output): a call of
    /// that tool is the final answer, its input the answer's text. Calls
    /// beside it are not run: the answer ends the turn, as a text answer
    /// does.
    #[cfg(feature = "http")]
    fn answered_by(mut self, answering: Option<&str>) -> Self {
        let Some(at) =
            answering.and_then(|name| self.tool_calls.iter().position(|call| call.name == name))
        else {
            return self;
        };
        let answer = self.tool_calls.swap_remove(at);
        if !self.tool_calls.is_empty() {
            tracing::debug!(
                calls = self.tool_calls.len(),
                "the model called tools beside its final answer; the answer ends the turn"
            );
        }
        self.tool_calls.clear();
        self.text = Some(answer.input.to_string());
        // An answer its token limit cut off stays cut off.
        if self.finish != FinishReason::Length {
            self.finish = FinishReason::Stop;
        }
        self
    }
}

/// A model that could not answer (after any retries of its own).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("the model failed: {message}")]
pub struct ModelError {
    /// What went wrong, without secrets.
    pub message: String,
}

impl ModelError {
    /// A failure described by `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The same failure with every occurrence of `secret` blotted out: a
    /// server may quote the key it was sent (in an error body, a stream's
    /// error event, a redirect's location).
    #[cfg(feature = "http")]
    #[must_use]
    pub(crate) fn redacting(self, secret: &str) -> Self {
        // A key that short is no key; blotting it would garble the message.
        if secret.len() < 8 || !self.message.contains(secret) {
            return self;
        }
        Self {
            message: self.message.replace(secret, "[redacted]"),
        }
    }
}

/// A piece of an answer as it streams in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelDelta<'a> {
    /// Text, in order.
    Text(&'a str),
    /// A fragment of the tool call at `index` (its place among the
    /// answer's calls): the id and name when the call first appears, then
    /// pieces of its JSON arguments, which join in order.
    ToolCall {
        /// The call's place among the answer's calls.
        index: usize,
        /// The call's id, when this fragment carries it.
        id: Option<&'a str>,
        /// The tool's name, when this fragment carries it.
        name: Option<&'a str>,
        /// The next piece of the arguments' JSON text (may be empty).
        arguments: &'a str,
    },
}

/// What a streaming model calls with each piece of its answer.
pub type OnDelta<'a> = &'a (dyn Fn(ModelDelta<'_>) + Send + Sync);

/// Answers model requests: a provider adapter, or a host's own model.
pub trait Model: Send + Sync + 'static {
    /// Answers one step.
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;

    /// Answers one step, calling `on_delta` with each piece of text and of
    /// each tool call as it streams in. A model that does not stream
    /// answers as [`Model::complete`] and hands its whole text, then each
    /// whole call, over once.
    fn complete_streaming<'a>(
        &'a self,
        request: ModelRequest<'a>,
        on_delta: OnDelta<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        complete_whole(self, request, on_delta)
    }
}

/// Answers as [`Model::complete`] and hands the whole text, then each
/// whole call, to `on_delta` once: what a model that does not stream does.
pub(crate) fn complete_whole<'a, M: Model + ?Sized>(
    model: &'a M,
    request: ModelRequest<'a>,
    on_delta: OnDelta<'a>,
) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
    Box::pin(async move {
        let response = model.complete(request).await?;
        if let Some(text) = &response.text {
            on_delta(ModelDelta::Text(text));
        }
        for (index, call) in response.tool_calls.iter().enumerate() {
            on_delta(ModelDelta::ToolCall {
                index,
                id: Some(&call.id),
                name: Some(&call.name),
                arguments: &call.input.to_string(),
            });
        }
        Ok(response)
    })
}

/// A shared model answers as the model it shares.
impl<M: Model + ?Sized> Model for std::sync::Arc<M> {
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete(request)
    }

    fn complete_streaming<'a>(
        &'a self,
        request: ModelRequest<'a>,
        on_delta: OnDelta<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete_streaming(request, on_delta)
    }
}

/// A boxed model answers as the model it holds.
impl<M: Model + ?Sized> Model for Box<M> {
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete(request)
    }

    fn complete_streaming<'a>(
        &'a self,
        request: ModelRequest<'a>,
        on_delta: OnDelta<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete_streaming(request, on_delta)
    }
}
