//! What a child's run comes to as its parent's result: its answer (checked
//! against its output schema), or the limit or cut that ended it.

use iris_core::{ToolErrorKind, ToolResult};
use serde_json::{Value, json};

use crate::RunState;

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

/// A child's output as the parent's result: text as text, a typed
/// output as JSON.
pub(super) fn output_result(output: Value) -> ToolResult {
    match output {
        Value::String(text) => ToolResult::text(text),
        value => ToolResult::json(value),
    }
}

/// A child a hook of its own stopped (its task, a request or an answer).
pub(super) fn refused(name: &str, hook: &str, reason: &str) -> ToolResult {
    ToolResult::error(
        ToolErrorKind::PermissionDenied,
        format!("child agent `{name}` was stopped by its hook `{hook}`: {reason}"),
    )
    .with_data(json!({"status": "refused", "agent": name, "hook": hook}))
}

/// A child whose answers never fit its output.
pub(super) fn output_invalid(
    name: &str,
    text: &str,
    error: &crate::OutputError,
    state: &RunState,
) -> ToolResult {
    limit(
        name,
        "output_invalid",
        &format!(
            "child agent `{name}` did not answer with its output ({error}), after {} tries; give it a clearer task, or do the rest yourself",
            state.output_faults + 1
        ),
        state,
    )
    .with_data(json!({"status": "output_invalid", "agent": name, "partial": text}))
}
