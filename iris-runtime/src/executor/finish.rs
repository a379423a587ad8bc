//! The last stage of every call, however it ended: result processing,
//! input repairs noted, observers told.

use std::time::Instant;

use iris_core::{ToolContext, ToolDefinition, ToolResult};

use super::pipeline::{Prepared, Unprepared};
use super::{ToolExecutor, ToolOutcome};
use crate::observers::RunEvent;

impl ToolExecutor {
    /// A call that never reached a tool (unknown tool, bad input).
    pub(super) fn finish_unprepared(
        &self,
        unprepared: Unprepared,
        cx: &ToolContext,
        started: Option<Instant>,
    ) -> ToolOutcome {
        // Error results take the same limit as any other result.
        let result = self.bound_result(unprepared.result, None, cx);
        let call_id = unprepared.call_id;
        self.emit(|| RunEvent::ToolFinished {
            run_id: cx.run_id().clone(),
            call_id: call_id.clone(),
            tool: None,
            error_kind: result.error_kind(),
            elapsed: started.map(|s| s.elapsed()).unwrap_or_default(),
        });
        ToolOutcome::Finished { call_id, result }
    }

    pub(super) fn finish(
        &self,
        prepared: Prepared,
        result: ToolResult,
        cx: &ToolContext,
        started: Option<Instant>,
    ) -> ToolOutcome {
        let definition = prepared.tool.definition_dyn();
        self.finish_call(
            prepared.call_id,
            definition,
            prepared.repairs,
            result,
            cx,
            started,
        )
    }

    pub(super) fn finish_call(
        &self,
        call_id: String,
        definition: &ToolDefinition,
        repairs: Vec<&'static str>,
        result: ToolResult,
        cx: &ToolContext,
        started: Option<Instant>,
    ) -> ToolOutcome {
        let result = self.bound_result(result, Some(definition), cx);
        let result = if repairs.is_empty() {
            result
        } else {
            result.with_stat("input_repairs", repairs)
        };
        self.emit(|| RunEvent::ToolFinished {
            run_id: cx.run_id().clone(),
            call_id: call_id.clone(),
            tool: Some(definition.name().clone()),
            error_kind: result.error_kind(),
            elapsed: started.map(|s| s.elapsed()).unwrap_or_default(),
        });
        ToolOutcome::Finished { call_id, result }
    }
}
