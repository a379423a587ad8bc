//! What a request to a test model held, kept for assertions.

use iris_core::ToolSpec;
use iris_model::{Message, ModelOptions, ModelRequest, OutputFormat};

/// One request a test model answered: what the model was offered and sent.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// The system instructions.
    pub instructions: Option<String>,
    /// The history, oldest first.
    pub messages: Vec<Message>,
    /// The tools offered.
    pub tools: Vec<ToolSpec>,
    /// Sampling and tool options.
    pub options: ModelOptions,
    /// The shape the final answer had to take, when the run asked for one.
    pub output: Option<OutputFormat>,
}

impl RecordedRequest {
    pub(crate) fn of(request: &ModelRequest<'_>) -> Self {
        Self {
            instructions: request.instructions.map(str::to_owned),
            messages: request.messages.to_vec(),
            tools: request.tools.to_vec(),
            options: request.options.clone(),
            output: request.output.cloned(),
        }
    }

    /// The names of the tools offered, in order.
    #[must_use]
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name().as_str()).collect()
    }

    /// Whether `tool` was offered.
    #[must_use]
    pub fn offers(&self, tool: &str) -> bool {
        self.tools.iter().any(|t| t.name().as_str() == tool)
    }

    /// The text of every tool result in the history, oldest first: what a
    /// model that reports back reads.
    #[must_use]
    pub fn result_texts(&self) -> Vec<String> {
        self.messages
            .iter()
            .filter_map(|m| match m {
                Message::Tool { result, .. } => Some(result.text_content()),
                _ => None,
            })
            .collect()
    }

    /// The newest message, shortened, for messages about the request.
    pub(crate) fn newest(&self) -> String {
        let Some(last) = self.messages.last() else {
            return "no message".to_owned();
        };
        let text = serde_json::to_string(last).unwrap_or_default();
        iris_core::text::clip(&text, 160).into_owned()
    }
}
