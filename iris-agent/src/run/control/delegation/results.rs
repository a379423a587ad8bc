//! What a child's run comes to as its parent's result: its answer (checked
//! against its output schema), or the limit or cut that ended it.

use iris_core::{ToolErrorKind, ToolResult};
use serde_json::{Value, json};

use crate::{ChildAgent, RunState};

/// A limit the child hit, as the parent model reads it.
/// A child whose answer its token limit cut off: an error, with what it
/// wrote (`partial`) for the parent to use or ask again.
pub(super) fn cut_off(name: &str, text: String, state: &RunState) -> ToolResult {
    let result = limit(
        name,
        "cut_off",
        &format!(
            "child agent `{name}`'s answer was cut off by its token limit (max_tokens) before it finished; use what it wrote (`partial`), give it a narrower task, or do the rest yourself"
        ),
        state,
    );
    match result.data().cloned() {
        Some(mut data) => {
            data["partial"] = Value::String(text);
            result.with_data(data)
        }
        None => result,
    }
}

pub(super) fn limit(name: &str, status: &str, message: &str, state: &RunState) -> ToolResult {
    ToolResult::error(ToolErrorKind::Execution, message).with_data(json!({
        "status": status,
        "agent": name,
        "run_id": state.run_id,
        "steps": state.step,
        "usage": state.usage,
    }))
}

/// The child's final `text` as the parent's result: the text, or for a
/// typed output its JSON as data (an error result when it is not JSON).
pub(super) fn output(child: &ChildAgent, text: &str) -> Result<ToolResult, ToolResult> {
    if child.output().is_none() {
        return Ok(ToolResult::text(text));
    }
    let trimmed = text
        .trim()
        .trim_start_matches("```json")
        .trim_start_matches("```")
        .trim_end_matches("```")
        .trim();
    match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => Ok(ToolResult::json(value)),
        Err(err) => Err(ToolResult::error(
            ToolErrorKind::Execution,
            format!(
                "child agent `{}` answered text that is not the JSON its output asks for ({err}); ask it again, saying what to return",
                child.name()
            ),
        )),
    }
}
