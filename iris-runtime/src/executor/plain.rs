//! The path of a call when no `tool.before`/`tool.after` hook and no
//! middleware is registered: the same stages (resolve and parse,
//! permission, gate, body, result processing) in one flat future, without
//! the nesting the general path needs to thread hooks and the middleware
//! stack through.
//!
//! Nothing runs between the permission stage and the gate on this path (no
//! hook, no middleware, no await), so one policy check is both: a policy
//! changed in between could not be told apart from one changed just after.
//! The general path checks twice because hooks and middleware run, and may
//! wait, in between. With nothing to hand the parsed arguments to, the
//! checks run inside [`DynTool::start_dyn`](iris_core::DynTool::start_dyn),
//! and a call that starts never has its arguments boxed.
//!
//! A change to a stage must be made on both paths; the pipeline tests run
//! both.

use std::sync::Arc;

use iris_core::{
    CallTraits, Proceed, Started, ToolContext, ToolErrorKind, ToolResult, ToolUseBlock,
};

use super::permissions::{Permission, PermissionRequest};
use super::pipeline::{Prepared, Unprepared, invalid_arguments, repair_input};
use super::{ToolExecutor, ToolOutcome};
use crate::observers::RunEvent;

/// Why the checks held a call back from its body.
enum Held {
    /// Finished with this result (denied, or the call id already ran).
    Refused(ToolResult),
    /// Waits for a person.
    Ask {
        reason: Option<String>,
        read_only: bool,
    },
}

impl ToolExecutor {
    /// Whether calls may take the plain path.
    pub(super) fn is_plain(&self) -> bool {
        self.inner.plain
    }

    /// One call on the plain path, from the model's block to its outcome.
    pub(super) async fn execute_plain(&self, block: ToolUseBlock, cx: &ToolContext) -> ToolOutcome {
        let started = self.clock();
        let ToolUseBlock { id, name, input } = block;
        let tool = match self.offered_tool(&name, cx) {
            Ok(tool) => tool,
            Err(result) => {
                let unprepared = Unprepared {
                    call_id: id,
                    result,
                };
                return self.finish_unprepared(unprepared, cx, started);
            }
        };
        let definition = tool.definition_dyn();
        let (arguments, repairs) = repair_input(input);
        let mut held = None;
        let mut check = |traits: CallTraits| {
            let request = PermissionRequest {
                definition,
                arguments: &arguments,
                read_only: traits.read_only,
                run_id: cx.run_id(),
            };
            held = match self.permission_for(&request) {
                Permission::Allow => match self.record_once(&id, cx) {
                    Ok(()) => return Proceed::Start,
                    Err(refusal) => Some(Held::Refused(refusal)),
                },
                Permission::Deny { reason } => Some(Held::Refused(ToolResult::error(
                    ToolErrorKind::PermissionDenied,
                    reason,
                ))),
                Permission::Ask { reason } => Some(Held::Ask {
                    reason,
                    read_only: traits.read_only,
                }),
            };
            Proceed::Hold
        };
        let body = match tool.start_dyn(&arguments, cx, &mut check) {
            Ok(Started::Body(body)) => body,
            Ok(Started::Held(args)) => {
                return match held {
                    Some(Held::Ask { reason, read_only }) => {
                        let prepared = Prepared {
                            call_id: id,
                            tool: Arc::clone(tool),
                            arguments,
                            repairs,
                            read_only,
                        };
                        self.wait_for_approval(prepared, args, reason, cx)
                    }
                    Some(Held::Refused(result)) => {
                        self.finish_call(id, definition, repairs, result, cx, started)
                    }
                    // The checks hold a call only after saying why.
                    None => {
                        let result = ToolResult::error(
                            ToolErrorKind::Internal,
                            "the call was held back without a reason; report this as a bug",
                        );
                        self.finish_call(id, definition, repairs, result, cx, started)
                    }
                };
            }
            Err(err) => {
                let result = invalid_arguments(definition, &err);
                return self.finish_call(id, definition, repairs, result, cx, started);
            }
        };
        self.emit(|| RunEvent::ToolStarted {
            run_id: cx.run_id().clone(),
            call_id: id.clone(),
            tool: definition.name().clone(),
        });
        let result = self.drive_body(definition.name(), body, cx).await;
        self.finish_call(id, definition, repairs, result, cx, started)
    }
}
