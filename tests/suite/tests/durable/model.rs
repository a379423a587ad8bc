//! The model the durable-run test binaries ask: it answers from the
//! history alone, so every process (every replica) gets the same answer.

use iris::ToolUseBlock;
use iris::model::{Message, ModelResponse};
use iris::testing::FnModel;

/// Makes `calls` for the person's request, then answers with what the
/// results said, joined by ` | `.
pub(crate) fn history_model(calls: Vec<ToolUseBlock>) -> FnModel {
    FnModel::calling_then_reporting(calls)
}

/// The lead of a nested run: hands the whole task to the till below
/// (`t1`), then says what it said, after `lead: `.
pub(crate) fn delegating_model() -> FnModel {
    FnModel::new(|request| {
        Ok(match request.messages.last() {
            Some(Message::Tool { result, .. }) => ModelResponse {
                text: Some(format!("lead: {}", result.text_content())),
                ..ModelResponse::default()
            },
            _ => ModelResponse {
                tool_calls: vec![ToolUseBlock::new(
                    "t1",
                    "till",
                    iris::serde_json::json!({"task": "Charge order 7 and send the receipt."}),
                )],
                ..ModelResponse::default()
            },
        })
    })
}
