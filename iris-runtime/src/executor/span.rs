//! The `execute_tool {tool}` span of a call (see [`crate::telemetry`]): made
//! when the call is resolved, entered while its stages and body run, and
//! closed with how it ended (a call that waits for a person is no error).

use super::ToolOutcome;
use crate::telemetry::tool_ended;

/// Closes `span` with `outcome`.
pub(super) fn ended(span: &tracing::Span, outcome: &ToolOutcome) {
    if let ToolOutcome::Finished { result, .. } = outcome {
        tool_ended(span, result);
    }
}
