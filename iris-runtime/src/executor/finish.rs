//! The last stage of every call, however it ended: result processing,
//! input repairs noted, observers told.

use std::time::Instant;

use iris_core::{ToolContext, ToolDefinition, ToolResult};

use super::pipeline::{Prepared, Unprepared};
use super::{ToolExecutor, ToolOutcome};
use crate::observers::RunEvent;

/// Which call ends: its id, its tool when it reached one (an unknown tool
/// or unreadable input never did), and the input repairs made on the way.
pub(super) struct Ending<'a> {
    pub(super) call_id: String,
    pub(super) definition: Option<&'a ToolDefinition>,
    pub(super) repairs: Vec<&'static str>,
}

impl Ending<'_> {
    /// A call that never reached a tool.
    pub(super) fn unprepared(call_id: String) -> Self {
        Self {
            call_id,
            definition: None,
            repairs: Vec::new(),
        }
    }
}

impl ToolExecutor {
    /// The one last stage of every call: result processing (a call that
    /// never reached a tool takes the executor's own limit), input repairs
    /// noted, observers told.
    pub(super) fn finish(
        &self,
        ending: Ending<'_>,
        result: ToolResult,
        cx: &ToolContext,
        started: Option<Instant>,
    ) -> ToolOutcome {
        let Ending {
            call_id,
            definition,
            repairs,
        } = ending;
        let result = self.bound_result(result, definition, cx);
        let result = if repairs.is_empty() {
            result
        } else {
            result.with_stat("input_repairs", repairs)
        };
        self.emit(|| RunEvent::ToolFinished {
            run_id: cx.run_id().clone(),
            call_id: call_id.clone(),
            tool: definition.map(|d| d.name().clone()),
            error_kind: result.error_kind(),
            elapsed: started.map(|s| s.elapsed()).unwrap_or_default(),
        });
        ToolOutcome::Finished { call_id, result }
    }

    /// A call that never reached a tool (unknown tool, bad input).
    pub(super) fn finish_unprepared(
        &self,
        unprepared: Unprepared,
        cx: &ToolContext,
        started: Option<Instant>,
    ) -> ToolOutcome {
        let ending = Ending::unprepared(unprepared.call_id);
        self.finish(ending, unprepared.result, cx, started)
    }

    /// A prepared call.
    pub(super) fn finish_prepared(
        &self,
        prepared: Prepared,
        result: ToolResult,
        cx: &ToolContext,
        started: Option<Instant>,
    ) -> ToolOutcome {
        let Prepared {
            call_id,
            tool,
            repairs,
            ..
        } = prepared;
        let ending = Ending {
            call_id,
            definition: Some(tool.definition_dyn()),
            repairs,
        };
        self.finish(ending, result, cx, started)
    }
}
