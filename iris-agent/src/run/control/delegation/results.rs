//! What a child's run comes to as its parent's result: its answer (checked
//! against its output schema), or the limit or cut that ended it.

use iris_core::{ToolErrorKind, ToolResult};
use serde_json::{Value, json};

use crate::run::AgentRunner;
use crate::{RunError, RunOutcome, RunState};

/// What a child's run came to, as its caller takes it.
pub(super) enum Ending {
    /// It waits for a person.
    Waiting(RunState),
    /// It answered: its typed output, or its text.
    Finished { output: Value, state: RunState },
    /// Anything else, with how it ended (`refused`, `max_steps`, ...) and
    /// the error result the caller reads.
    Other(&'static str, ToolResult, Option<RunState>),
}

/// What the run of child `name` under `runner` came to (`ran_out`: its
/// deadline passed).
pub(super) fn ending(
    name: &str,
    runner: &AgentRunner,
    outcome: Result<RunOutcome, RunError>,
    ran_out: bool,
) -> Ending {
    let (ending, result, state) = match outcome {
        Ok(RunOutcome::Waiting(state)) => return Ending::Waiting(state),
        Ok(RunOutcome::Finished { text, state }) => {
            let output = state.output.clone().unwrap_or(Value::String(text));
            return Ending::Finished { output, state };
        }
        Ok(RunOutcome::Refused {
            hook,
            reason,
            state,
        }) => ("refused", refused(name, &hook, &reason), Some(state)),
        Ok(RunOutcome::OutputInvalid { text, error, state }) => {
            let result = output_invalid(name, &text, &error, &state);
            ("output_invalid", result, Some(state))
        }
        Ok(RunOutcome::OverBudget { over, state }) => {
            let result = limit(
                name,
                "over_budget",
                &format!(
                    "child agent `{name}` stopped: {over}; the whole run shares that budget, so answer with what you have"
                ),
                &state,
            );
            ("over_budget", result, Some(state))
        }
        Ok(RunOutcome::CutOff { text, state }) => {
            ("cut_off", cut_off(name, text, &state), Some(state))
        }
        Ok(RunOutcome::MaxSteps(state)) => {
            let (ending, what) = if runner.place.out_of_tokens(&state.usage) {
                (
                    "max_tokens",
                    format!("its token budget ({} used)", state.usage.total()),
                )
            } else {
                ("max_steps", format!("its {} steps", state.step))
            };
            let result = limit(
                name,
                ending,
                &format!(
                    "child agent `{name}` used {what} without finishing; give it a narrower task, or do the rest yourself"
                ),
                &state,
            );
            (ending, result, Some(state))
        }
        Ok(RunOutcome::Cancelled(state)) if ran_out => {
            let result = limit(
                name,
                "deadline",
                &format!(
                    "child agent `{name}` ran out of time before it finished; give it a narrower task, or do the rest yourself"
                ),
                &state,
            );
            ("deadline", result, Some(state))
        }
        Ok(RunOutcome::Cancelled(state)) => {
            let result = ToolResult::error(
                ToolErrorKind::Cancelled,
                format!("child agent `{name}` was cancelled with the run"),
            )
            .with_data(json!({"status": "cancelled", "agent": name}));
            ("cancelled", result, Some(state))
        }
        Err(err) => {
            let result = ToolResult::error(
                ToolErrorKind::Execution,
                format!("child agent `{name}` failed: {err}"),
            )
            .with_data(json!({"status": "failed", "agent": name}));
            ("failed", result, None)
        }
    };
    Ending::Other(ending, result, state)
}

/// A child whose answer its token limit cut off: an error, with what it
/// wrote (`partial`) for the parent to use or ask again.
fn cut_off(name: &str, text: String, state: &RunState) -> ToolResult {
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

/// A limit the child hit, as the parent model reads it.
fn limit(name: &str, status: &str, message: &str, state: &RunState) -> ToolResult {
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
fn refused(name: &str, hook: &str, reason: &str) -> ToolResult {
    ToolResult::error(
        ToolErrorKind::PermissionDenied,
        format!("child agent `{name}` was stopped by its hook `{hook}`: {reason}"),
    )
    .with_data(json!({"status": "refused", "agent": name, "hook": hook}))
}

/// A child whose answers never fit its output.
fn output_invalid(
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
