//! The model both durable-run test binaries ask: it answers from the
//! history alone, so every process (every replica) gets the same answer.

use iris::ToolUseBlock;
use iris::model::{Message, Model, ModelError, ModelRequest, ModelResponse};
use iris::tool::BoxFuture;

/// Makes `calls` for the person's request, then answers with what the
/// results said, joined by ` | `.
pub(crate) struct HistoryModel {
    pub(crate) calls: Vec<ToolUseBlock>,
}

impl Model for HistoryModel {
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let answer = if let Some(Message::User { .. }) = request.messages.last() {
            ModelResponse {
                tool_calls: self.calls.clone(),
                ..ModelResponse::default()
            }
        } else {
            let results: Vec<String> = request
                .messages
                .iter()
                .filter_map(|m| match m {
                    Message::Tool { result, .. } => Some(result.text_content()),
                    _ => None,
                })
                .collect();
            ModelResponse {
                text: Some(results.join(" | ")),
                ..ModelResponse::default()
            }
        };
        Box::pin(async move { Ok(answer) })
    }
}
