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

/// The till of a run that asks first: asks the person which card to charge
/// (`q1`), then makes `calls`, then answers with what the results said,
/// joined by ` | `.
pub(crate) fn asking_then_calling(calls: Vec<ToolUseBlock>) -> FnModel {
    FnModel::new(move |request| {
        Ok(match request.messages.last() {
            Some(Message::User { .. }) => ModelResponse {
                tool_calls: vec![ToolUseBlock::new(
                    "q1",
                    "ask_question",
                    iris::serde_json::json!({"questions": [{
                        "question": "Which card?",
                        "header": "Card",
                        "options": ["visa", "amex"],
                        "multi_select": false
                    }]}),
                )],
                ..ModelResponse::default()
            },
            Some(Message::Tool { call_id, .. }) if call_id == "q1" => ModelResponse {
                tool_calls: calls.clone(),
                ..ModelResponse::default()
            },
            _ => iris::testing::calling_then_reporting(&calls, request),
        })
    })
}
