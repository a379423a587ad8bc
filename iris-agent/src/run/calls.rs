//! The results of a step's calls, as the history keeps them.

use iris_core::{ToolResult, ToolUseBlock};
use rustc_hash::FxHashMap;

use iris_model::Message;

use super::AgentRunner;
use crate::{RunState, history};

impl AgentRunner {
    /// Appends the results of `calls` and keeps their full text for
    /// `read_history` when old ones may be shortened.
    pub(super) fn append(&self, state: &mut RunState, answers: Vec<Message>) {
        let first = state.messages.len();
        state.messages.extend(answers);
        if self.agent.results_budget().is_some() {
            history::record_all(self.agent.ledger(), &state.run_id, &state.messages[first..]);
        }
    }
}

/// The calls of the history's last step (none when it ends otherwise).
pub(super) fn last_calls(state: &RunState) -> &[ToolUseBlock] {
    match state.messages.last() {
        Some(Message::Assistant { tool_calls, .. }) => tool_calls,
        _ => &[],
    }
}

/// One `Tool` message per call, in call order; a call without a result
/// (which the executor never leaves) still gets one, so the model never
/// sees a call without an output.
pub(super) fn tool_messages(
    calls: &[ToolUseBlock],
    results: &mut FxHashMap<String, ToolResult>,
) -> Vec<Message> {
    calls
        .iter()
        .map(|call| {
            let result = results.remove(&call.id).unwrap_or_else(|| {
                ToolResult::error(
                    iris_core::ToolErrorKind::Internal,
                    "this call got no result; try it again",
                )
            });
            Message::Tool {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                result,
            }
        })
        .collect()
}
