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
use std::time::Instant;

use iris_core::{
    CallTraits, Proceed, Started, ToolBody, ToolContext, ToolDefinition, ToolErrorKind, ToolResult,
    ToolUseBlock,
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
        // Everything up to the body is synchronous and kept out of this
        // future, so what lives across the await is only what `finish`
        // needs.
        let running = match self.start_plain(block, cx, started) {
            Ok(running) => running,
            Err(outcome) => return *outcome,
        };
        let definition = running.definition;
        let result = self.drive_body(definition.name(), running.body, cx).await;
        self.finish_call(
            running.call_id,
            definition,
            running.repairs,
            result,
            cx,
            started,
        )
    }

    /// Resolve, parse, permission and the gate: the body made and not yet
    /// polled, or the outcome of a call that stops before it.
    fn start_plain<'a>(
        &'a self,
        block: ToolUseBlock,
        cx: &'a ToolContext,
        started: Option<Instant>,
    ) -> Result<Running<'a>, Box<ToolOutcome>> {
        let ToolUseBlock { id, name, input } = block;
        let tool = match self.offered_tool(&name, cx) {
            Ok(tool) => tool,
            Err(result) => {
                let unprepared = Unprepared {
                    call_id: id,
                    result,
                };
                return Err(Box::new(self.finish_unprepared(unprepared, cx, started)));
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
        let outcome = match tool.start_dyn(&arguments, cx, &mut check) {
            Ok(Started::Body(body)) => {
                self.emit(|| RunEvent::ToolStarted {
                    run_id: cx.run_id().clone(),
                    call_id: id.clone(),
                    tool: definition.name().clone(),
                });
                return Ok(Running {
                    call_id: id,
                    definition,
                    repairs,
                    body,
                });
            }
            Ok(Started::Held(args)) => match held {
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
            },
            Err(err) => {
                let result = invalid_arguments(definition, &err);
                self.finish_call(id, definition, repairs, result, cx, started)
            }
        };
        Err(Box::new(outcome))
    }
}

/// A call past its gate, its body made.
struct Running<'a> {
    call_id: String,
    definition: &'a ToolDefinition,
    repairs: Vec<&'static str>,
    body: ToolBody<'a>,
}
