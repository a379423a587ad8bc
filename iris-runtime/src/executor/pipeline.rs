//! The stages of one call, in order: resolve, parse, permission, before
//! hooks, middleware, gate and body, after hooks, result processing and
//! observers. Every call takes this one pipeline; a stage with nothing in
//! it (no hook watching the tool, no middleware) is skipped.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use futures_util::FutureExt as _;
use iris_core::{
    CallTraits, DynTool, Endpoint, Next, ParsedArgs, Proceed, Started, ToolBody, ToolCall,
    ToolContext, ToolDefinition, ToolErrorKind, ToolResult, ToolUseBlock,
};
use serde_json::Value;

use super::admission::{Admission, Grant};
use super::permissions::PermissionRequest;
use super::resolve::{invalid_arguments, repair_input};
use super::{ToolExecutor, ToolOutcome};
use crate::ToolRegistry;
use crate::hooks::{HookEvent, HookInput, HookResultView};
use crate::observers::RunEvent;

/// A call resolved and parsed.
pub(super) struct Prepared {
    pub(super) call_id: String,
    pub(super) tool: Arc<dyn DynTool>,
    /// The arguments as the pipeline sees them (after input repairs).
    pub(super) arguments: Value,
    pub(super) repairs: Vec<&'static str>,
    /// Whether the tool said these arguments only read.
    pub(super) read_only: bool,
}

impl Prepared {
    pub(super) fn permission_request<'a>(&'a self, cx: &'a ToolContext) -> PermissionRequest<'a> {
        PermissionRequest {
            definition: self.tool.definition_dyn(),
            arguments: &self.arguments,
            read_only: self.read_only,
            run_id: cx.run_id(),
        }
    }
}

/// A call that finished before it was prepared (unknown tool, bad input).
pub(super) struct Unprepared {
    pub(super) call_id: String,
    pub(super) result: ToolResult,
}

/// A call whose tool is known (and held apart), its input repaired, not
/// yet parsed.
struct Resolved {
    call_id: String,
    arguments: Value,
    repairs: Vec<&'static str>,
}

/// A call admitted straight to its body, the body made and not yet polled.
struct Running<'a> {
    call_id: String,
    definition: &'a ToolDefinition,
    repairs: Vec<&'static str>,
    body: ToolBody<'a>,
}

/// Where a call stands once the stages that need no waiting are done.
enum Step<'a> {
    /// Its body may start.
    Body(Running<'a>),
    /// Parsed and past the permission stage, which said this.
    Admitted(Prepared, ParsedArgs, Admission),
    /// It has its outcome already (unknown tool, bad input).
    Finished(Box<ToolOutcome>),
}

impl ToolExecutor {
    /// One call, from the model's block to its outcome.
    pub(super) async fn execute(&self, block: ToolUseBlock, cx: &ToolContext) -> ToolOutcome {
        let started = self.clock();
        // The call keeps the registry snapshot it resolved in (and so its
        // tool): a registry swapped meanwhile (an MCP server's tools
        // refreshed) does not pull the tool from under it. The snapshot is
        // held without touching a reference count.
        let registry = self.inner.registry.peek();
        let (tool, call) = match Self::resolve(&registry, block, cx) {
            Ok(resolved) => resolved,
            Err(unprepared) => return self.finish_unprepared(unprepared, cx, started),
        };
        // Everything up to the body is synchronous and kept out of this
        // future, so what lives across the await is only what `finish`
        // needs.
        match self.start(tool, call, cx, started) {
            Step::Body(running) => {
                let definition = running.definition;
                self.emit_started(&running.call_id, definition, cx);
                let result = self
                    .drive_body(&running.call_id, definition.name(), running.body, cx)
                    .await;
                let Running {
                    call_id, repairs, ..
                } = running;
                let ending = super::finish::Ending {
                    call_id,
                    definition: Some(definition),
                    repairs,
                };
                self.finish(ending, result, cx, started)
            }
            // Boxed: hooks, middleware and the pause for a person make a
            // future several times the size of the straight path's, and
            // every call would carry (and move) it.
            Step::Admitted(prepared, args, admission) => {
                Box::pin(self.continue_admitted(prepared, args, admission, cx, started)).await
            }
            Step::Finished(outcome) => *outcome,
        }
    }

    /// A call of a batch, resolved and parsed already (its window depends
    /// on the parse): the same stages from permission on.
    pub(super) async fn execute_parsed(
        &self,
        prepared: Prepared,
        args: ParsedArgs,
        cx: &ToolContext,
        started: Option<Instant>,
    ) -> ToolOutcome {
        let staged = self.inner.staged.includes(prepared.tool.definition_dyn());
        let request = prepared.permission_request(cx);
        let admission = self.admit(&request, &prepared.call_id, cx, staged);
        self.continue_admitted(prepared, args, admission, cx, started)
            .await
    }

    /// The tool named in `block`, if offered, and its repaired input.
    fn resolve<'r>(
        registry: &'r ToolRegistry,
        block: ToolUseBlock,
        cx: &ToolContext,
    ) -> Result<(&'r Arc<dyn DynTool>, Resolved), Unprepared> {
        let ToolUseBlock { id, name, input } = block;
        match super::resolve::offered_tool(registry, &name, cx) {
            Ok(tool) => {
                let (arguments, repairs) = repair_input(input);
                Ok((
                    tool,
                    Resolved {
                        call_id: id,
                        arguments,
                        repairs,
                    },
                ))
            }
            Err(result) => Err(Unprepared {
                call_id: id,
                result,
            }),
        }
    }

    /// Resolve and parse, for a batch: the only parse of the call.
    pub(super) fn prepare(
        &self,
        block: ToolUseBlock,
        cx: &ToolContext,
    ) -> Result<(Prepared, ParsedArgs), Unprepared> {
        let registry = self.inner.registry.peek();
        let (
            tool,
            Resolved {
                call_id,
                arguments,
                repairs,
            },
        ) = Self::resolve(&registry, block, cx)?;
        match tool.parse_dyn(&arguments) {
            Ok(args) => Ok((
                Prepared {
                    call_id,
                    tool: Arc::clone(tool),
                    arguments,
                    repairs,
                    read_only: args.is_read_only(),
                },
                args,
            )),
            Err(err) => Err(Unprepared {
                call_id,
                result: invalid_arguments(tool.definition_dyn(), &err),
            }),
        }
    }

    /// Resolve, parse and the permission stage in one pass. The permission
    /// check runs inside [`DynTool::start_dyn`], between the parse and the
    /// body, so a call admitted straight to its body never has its
    /// arguments boxed.
    fn start<'a>(
        &'a self,
        tool: &'a Arc<dyn DynTool>,
        call: Resolved,
        cx: &'a ToolContext,
        started: Option<Instant>,
    ) -> Step<'a> {
        let Resolved {
            call_id,
            arguments,
            repairs,
        } = call;
        let definition = tool.definition_dyn();
        let staged = self.inner.staged.includes(definition);
        let mut admission = None;
        let mut check = |traits: CallTraits| {
            let request = PermissionRequest {
                definition,
                arguments: &arguments,
                read_only: traits.read_only,
                run_id: cx.run_id(),
            };
            let answer = self.admit(&request, &call_id, cx, staged);
            let proceed = match answer {
                Admission::Start => Proceed::Start,
                _ => Proceed::Hold,
            };
            admission = Some(answer);
            proceed
        };
        match tool.start_dyn(&arguments, cx, &mut check) {
            Ok(Started::Body(body)) => Step::Body(Running {
                call_id,
                definition,
                repairs,
                body,
            }),
            Ok(Started::Held(args)) => {
                // The check holds a call only after saying why.
                let admission = admission.unwrap_or_else(|| {
                    Admission::Refused(ToolResult::error(
                        ToolErrorKind::Internal,
                        "the call was held back without a reason; report this as a bug",
                    ))
                });
                let prepared = Prepared {
                    call_id,
                    tool: Arc::clone(tool),
                    arguments,
                    repairs,
                    read_only: args.is_read_only(),
                };
                Step::Admitted(prepared, args, admission)
            }
            // A call that did not parse never started, so it finishes like
            // an unknown tool does.
            Err(err) => {
                let unprepared = Unprepared {
                    call_id,
                    result: invalid_arguments(definition, &err),
                };
                Step::Finished(Box::new(self.finish_unprepared(unprepared, cx, started)))
            }
        }
    }

    /// Everything after the permission stage's answer.
    async fn continue_admitted(
        &self,
        prepared: Prepared,
        args: ParsedArgs,
        admission: Admission,
        cx: &ToolContext,
        started: Option<Instant>,
    ) -> ToolOutcome {
        let result = match admission {
            Admission::Start => {
                self.emit_started(&prepared.call_id, prepared.tool.definition_dyn(), cx);
                self.run_body(&prepared.call_id, &*prepared.tool, args, cx)
                    .await
            }
            Admission::Staged => Box::pin(self.run_staged(&prepared, args, cx, None)).await,
            Admission::Refused(result) => result,
            Admission::Ask { reason } => {
                return self.wait_for_approval(prepared, args, reason, cx, started);
            }
        };
        self.finish_prepared(prepared, result, cx, started)
    }

    /// Before hooks, middleware, gate and body, after hooks. `args` is
    /// taken exactly once.
    pub(super) async fn run_staged(
        &self,
        prepared: &Prepared,
        args: ParsedArgs,
        cx: &ToolContext,
        grant: Option<&Grant>,
    ) -> ToolResult {
        let hooks = &self.inner.hooks;
        let name = prepared.tool.definition_dyn().name();
        // Built only when a hook watches this tool, and built once: the
        // after hooks get the before hooks' input with the result added.
        let mut hook_input = None;
        if hooks.watches(HookEvent::ToolBefore, name) {
            let input =
                hook_input.insert(Self::tool_hook_input(HookEvent::ToolBefore, prepared, cx));
            // Boxed, like every optional stage below, so a call without hooks
            // or middleware carries (and moves) none of their state.
            let denials = Box::pin(hooks.before(input)).await;
            if !denials.is_empty() {
                let reasons: Vec<String> = denials
                    .iter()
                    .map(|d| format!("hook `{}`: {}", d.hook, d.reason))
                    .collect();
                return ToolResult::error(
                    ToolErrorKind::DeniedByHook,
                    format!("the call of `{name}` was refused by {}", reasons.join("; ")),
                );
            }
        }
        let body_ran = AtomicBool::new(false);
        let mut result = if self.inner.middleware.is_empty() {
            // No stack to thread through: no endpoint to box.
            self.gated_body(prepared, args, cx, grant, &body_ran).await
        } else {
            Box::pin(self.through_middleware(prepared, args, cx, grant, &body_ran)).await
        };
        if body_ran.load(Ordering::Relaxed) && hooks.watches(HookEvent::ToolAfter, name) {
            let mut input = hook_input
                .unwrap_or_else(|| Self::tool_hook_input(HookEvent::ToolAfter, prepared, cx));
            input.event = HookEvent::ToolAfter;
            input.result = Some(HookResultView::of(&result));
            let (feedback, failures) = Box::pin(hooks.after(&input)).await;
            if !feedback.is_empty() {
                result = result.with_text(format!("[Hook feedback]\n{}", feedback.join("\n")));
            }
            if !failures.is_empty() {
                result = result.with_stat("hook_failures", failures);
            }
        }
        result
    }

    /// The middleware stack around the gate and the body.
    async fn through_middleware(
        &self,
        prepared: &Prepared,
        args: ParsedArgs,
        cx: &ToolContext,
        grant: Option<&Grant>,
        ran: &AtomicBool,
    ) -> ToolResult {
        let name = prepared.tool.definition_dyn().name();
        let endpoint: Endpoint<'_> =
            Box::new(move || Box::pin(self.gated_body(prepared, args, cx, grant, ran)));
        let call = ToolCall::new(
            prepared.call_id.clone(),
            Arc::clone(&prepared.tool),
            prepared.arguments.clone(),
        );
        let stack = Next::new(&self.inner.middleware, cx, endpoint).run(call);
        // A panicking middleware fails this call, never the batch.
        match AssertUnwindSafe(stack).catch_unwind().await {
            Ok(Ok(result)) => result,
            Ok(Err(err)) => ToolResult::error(ToolErrorKind::Execution, err.to_string()),
            Err(panic) => {
                let detail = crate::hooks::panic_message(panic.as_ref());
                tracing::error!(tool = %name, panic = %detail, "middleware panicked");
                ToolResult::error(
                    ToolErrorKind::Internal,
                    format!(
                        "a middleware around `{name}` failed with an internal error ({detail}); the call did not complete normally"
                    ),
                )
            }
        }
    }

    /// The gate, then the body; `ran` records whether the body started.
    async fn gated_body(
        &self,
        prepared: &Prepared,
        args: ParsedArgs,
        cx: &ToolContext,
        grant: Option<&Grant>,
        ran: &AtomicBool,
    ) -> ToolResult {
        if let Err(refusal) = self.gate(prepared, cx, grant) {
            return refusal;
        }
        ran.store(true, Ordering::Relaxed);
        self.emit_started(&prepared.call_id, prepared.tool.definition_dyn(), cx);
        self.run_body(&prepared.call_id, &*prepared.tool, args, cx)
            .await
    }

    fn emit_started(&self, call_id: &str, definition: &ToolDefinition, cx: &ToolContext) {
        self.emit(|| RunEvent::ToolStarted {
            run_id: cx.run_id().clone(),
            call_id: call_id.to_owned(),
            tool: definition.name().clone(),
        });
    }

    fn tool_hook_input(event: HookEvent, prepared: &Prepared, cx: &ToolContext) -> HookInput {
        HookInput {
            event,
            run_id: cx.run_id().clone(),
            call_id: Some(prepared.call_id.clone()),
            tool: Some(prepared.tool.definition_dyn().name().clone()),
            arguments: Some(prepared.arguments.clone()),
            result: None,
        }
    }
}
