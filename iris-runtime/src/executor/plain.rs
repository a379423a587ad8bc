//! The path of a call that no middleware and no `tool.before`/`tool.after`
//! hook sees (there is none, or the hooks are filtered to other tools): the
//! same stages (resolve and parse, permission, gate, body, result
//! processing) in one flat future, without the nesting the general path
//! needs to thread hooks and the middleware stack through.
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
    CallTraits, ParsedArgs, Proceed, Started, ToolBody, ToolContext, ToolDefinition, ToolErrorKind,
    ToolResult, ToolUseBlock,
};
use rustc_hash::FxHashSet;

use super::permissions::{Permission, PermissionRequest};
use super::pipeline::{Prepared, Unprepared, invalid_arguments, repair_input};
use super::{ToolExecutor, ToolOutcome};
use crate::hooks::HookDispatcher;
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

/// Why a call left the plain path before its body.
enum Stop {
    /// It finished (refused, waiting for approval, bad input).
    Finished(Box<ToolOutcome>),
    /// A tool hook watches its tool: it takes the general path.
    Watched(ToolUseBlock),
}

/// A call past its gate, its body made.
struct Running<'a> {
    call_id: String,
    definition: &'a ToolDefinition,
    repairs: Vec<&'static str>,
    body: ToolBody<'a>,
}

/// Which calls take the plain path.
#[derive(Debug)]
pub(super) enum PlainRoute {
    /// None: middleware sees every call, or a tool hook watches every tool.
    Never,
    /// Every call but those of these tools, which filtered tool hooks
    /// watch (none when there is no tool hook).
    Except(FxHashSet<String>),
}

impl PlainRoute {
    pub(super) fn new(has_middleware: bool, hooks: &HookDispatcher) -> Self {
        match hooks.watched_tools() {
            Some(watched) if !has_middleware => PlainRoute::Except(watched),
            _ => PlainRoute::Never,
        }
    }

    fn takes(&self, tool: &ToolDefinition) -> bool {
        match self {
            PlainRoute::Never => false,
            PlainRoute::Except(watched) => {
                watched.is_empty() || !watched.contains(tool.name().as_str())
            }
        }
    }
}

impl ToolExecutor {
    /// Whether some calls may take the plain path.
    pub(super) fn is_plain(&self) -> bool {
        !matches!(self.inner.plain, PlainRoute::Never)
    }

    /// One call on the plain path, from the model's block to its outcome.
    pub(super) async fn execute_plain(&self, block: ToolUseBlock, cx: &ToolContext) -> ToolOutcome {
        let started = self.clock();
        // Everything up to the body is synchronous and kept out of this
        // future, so what lives across the await is only what `finish`
        // needs.
        let running = match self.start_plain(block, cx, started) {
            Ok(running) => running,
            Err(Stop::Finished(outcome)) => return *outcome,
            Err(Stop::Watched(block)) => return Box::pin(self.execute_general(block, cx)).await,
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
    ) -> Result<Running<'a>, Stop> {
        let tool = match self.offered_tool(&block.name, cx) {
            Ok(tool) if self.inner.plain.takes(tool.definition_dyn()) => tool,
            Ok(_) => return Err(Stop::Watched(block)),
            Err(result) => {
                let unprepared = Unprepared {
                    call_id: block.id,
                    result,
                };
                return Err(Stop::Finished(Box::new(
                    self.finish_unprepared(unprepared, cx, started),
                )));
            }
        };
        let ToolUseBlock { id, input, .. } = block;
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
            held = self.admit(&request, &id, cx);
            if held.is_none() {
                Proceed::Start
            } else {
                Proceed::Hold
            }
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
                    self.wait_for_approval(prepared, args, reason, cx, started)
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
            // As on the general path: a call that did not parse never
            // started, so it finishes like an unknown tool does.
            Err(err) => {
                let unprepared = Unprepared {
                    call_id: id,
                    result: invalid_arguments(definition, &err),
                };
                self.finish_unprepared(unprepared, cx, started)
            }
        };
        Err(Stop::Finished(Box::new(outcome)))
    }

    /// Whether calls of `tool` take the plain path.
    pub(super) fn takes_plain(&self, tool: &ToolDefinition) -> bool {
        self.inner.plain.takes(tool)
    }

    /// Permission and the gate in one check, then the call id recorded:
    /// `None` when the body may start.
    fn admit(
        &self,
        request: &PermissionRequest<'_>,
        call_id: &str,
        cx: &ToolContext,
    ) -> Option<Held> {
        match self.permission_for(request) {
            Permission::Allow => self.record_once(call_id, cx).err().map(Held::Refused),
            Permission::Deny { reason } => Some(Held::Refused(ToolResult::error(
                ToolErrorKind::PermissionDenied,
                reason,
            ))),
            Permission::Ask { reason } => Some(Held::Ask {
                reason,
                read_only: request.read_only,
            }),
        }
    }

    /// The plain path for a call that was already resolved and parsed, as
    /// the calls of a batch are (their windows depend on the parse).
    pub(super) async fn run_prepared_plain(
        &self,
        prepared: Prepared,
        args: ParsedArgs,
        cx: &ToolContext,
        started: Option<Instant>,
    ) -> ToolOutcome {
        let request = PermissionRequest {
            definition: prepared.tool.definition_dyn(),
            arguments: &prepared.arguments,
            read_only: prepared.read_only,
            run_id: cx.run_id(),
        };
        match self.admit(&request, &prepared.call_id, cx) {
            None => {}
            Some(Held::Refused(result)) => return self.finish(prepared, result, cx, started),
            Some(Held::Ask { reason, .. }) => {
                return self.wait_for_approval(prepared, args, reason, cx, started);
            }
        }
        self.emit(|| RunEvent::ToolStarted {
            run_id: cx.run_id().clone(),
            call_id: prepared.call_id.clone(),
            tool: prepared.tool.definition_dyn().name().clone(),
        });
        let result = self.run_body(&*prepared.tool, args, cx).await;
        self.finish(prepared, result, cx, started)
    }
}
