//! The stages of one call, in order (resolve, parse, permission, hooks,
//! middleware, gate and body, after hooks, observers).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::FutureExt as _;
use std::sync::{Arc, PoisonError};
use std::time::Instant;

use iris_core::{
    DynTool, Endpoint, Next, ParsedArgs, RunId, ToolCall, ToolContext, ToolDefinition,
    ToolErrorKind, ToolResult, ToolUseBlock,
};
use serde_json::Value;

use super::pending::{Pending, Refusal};
use super::permissions::{ApprovalDecision, ApprovalRequest, Permission, PermissionRequest};
use super::{ToolExecutor, ToolOutcome};
use crate::hooks::{HookEvent, HookInput, HookResultView};
use crate::observers::RunEvent;

/// A call resolved and parsed, before permission.
pub(super) struct Prepared {
    pub(super) call_id: String,
    pub(super) tool: Arc<dyn DynTool>,
    /// The arguments as the pipeline sees them (after input repairs).
    pub(super) arguments: Value,
    pub(super) repairs: Vec<&'static str>,
    /// Whether the tool said these arguments only read.
    pub(super) read_only: bool,
}

/// An approval carried from `resume` to the gate. `resume` already matched
/// it against the waiting request (run, call id, tool, arguments), none of
/// which can change after; the call id was claimed when the call began to
/// wait.
pub(super) struct Grant {
    run_id: RunId,
}

/// A call that finished before it was prepared (unknown tool, bad input).
pub(super) struct Unprepared {
    pub(super) call_id: String,
    pub(super) result: ToolResult,
}

impl ToolExecutor {
    /// Resolve, repair the input and parse it: the only parse of the call.
    pub(super) fn prepare(
        &self,
        block: ToolUseBlock,
        cx: &ToolContext,
    ) -> Result<(Prepared, ParsedArgs), Unprepared> {
        let ToolUseBlock { id, name, input } = block;
        let tool = match self.offered_tool(&name, cx) {
            Ok(tool) => tool,
            Err(result) => {
                return Err(Unprepared {
                    call_id: id,
                    result,
                });
            }
        };
        let (arguments, repairs) = repair_input(input);
        match tool.parse_dyn(&arguments) {
            Ok(args) => Ok((
                Prepared {
                    call_id: id,
                    tool: Arc::clone(tool),
                    arguments,
                    repairs,
                    read_only: args.is_read_only(),
                },
                args,
            )),
            Err(err) => Err(Unprepared {
                call_id: id,
                result: invalid_arguments(tool.definition_dyn(), &err),
            }),
        }
    }

    /// The tool called `name`, if this request offers it; otherwise the
    /// error result the model reads.
    pub(super) fn offered_tool(
        &self,
        name: &str,
        cx: &ToolContext,
    ) -> Result<&Arc<dyn DynTool>, ToolResult> {
        let Some(tool) = self.inner.registry.resolve(name) else {
            return Err(ToolResult::error(
                ToolErrorKind::UnknownTool,
                self.unknown_tool_message(name),
            ));
        };
        let definition = tool.definition_dyn();
        if !is_offered(cx, definition) {
            return Err(ToolResult::error(
                ToolErrorKind::ToolNotAvailable,
                format!(
                    "tool `{}` is not available in this request; call only the tools offered (a deferred tool must be found with `tool_search` first)",
                    definition.name()
                ),
            ));
        }
        Ok(tool)
    }

    fn unknown_tool_message(&self, name: &str) -> String {
        let close = self.inner.registry.closest_names(name, 3);
        let name = super::shorten(name);
        if close.is_empty() {
            format!("no tool is named `{name}`; call only the tools offered in this request")
        } else {
            let close: Vec<String> = close.iter().map(|n| format!("`{n}`")).collect();
            format!(
                "no tool is named `{name}`; did you mean {}? Call only the tools offered in this request",
                close.join(" or ")
            )
        }
    }

    pub(super) fn finish_unprepared(
        &self,
        unprepared: Unprepared,
        cx: &ToolContext,
        started: Option<Instant>,
    ) -> ToolOutcome {
        // Error results take the same limit as any other result.
        let unprepared = Unprepared {
            result: self.bound_result(unprepared.result, None, cx),
            ..unprepared
        };
        self.emit(|| RunEvent::ToolFinished {
            run_id: cx.run_id().clone(),
            call_id: unprepared.call_id.clone(),
            tool: None,
            error_kind: unprepared.result.error_kind(),
            elapsed: started.map(|s| s.elapsed()).unwrap_or_default(),
        });
        ToolOutcome::Finished {
            call_id: unprepared.call_id,
            result: unprepared.result,
        }
    }

    /// Permission, hooks, middleware, gate and body, after hooks.
    pub(super) async fn run_prepared(
        &self,
        prepared: Prepared,
        args: ParsedArgs,
        cx: &ToolContext,
        started: Option<Instant>,
        grant: Option<Grant>,
    ) -> ToolOutcome {
        if grant.is_none() {
            match self.check_permission(&prepared, cx) {
                Permission::Allow => {}
                Permission::Deny { reason } => {
                    let result = ToolResult::error(ToolErrorKind::PermissionDenied, reason);
                    return self.finish(prepared, result, cx, started);
                }
                Permission::Ask { reason } => {
                    return self.wait_for_approval(prepared, args, reason, cx, started);
                }
            }
        }
        let result = self.run_allowed(&prepared, args, cx, grant.as_ref()).await;
        self.finish(prepared, result, cx, started)
    }

    pub(super) fn check_permission(&self, prepared: &Prepared, cx: &ToolContext) -> Permission {
        self.permission_for(&PermissionRequest {
            definition: prepared.tool.definition_dyn(),
            arguments: &prepared.arguments,
            read_only: prepared.read_only,
            run_id: cx.run_id(),
        })
    }

    pub(super) fn permission_for(&self, request: &PermissionRequest<'_>) -> Permission {
        self.inner
            .policy
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .check(request)
    }

    /// Parks a call until a person decides. Its id is claimed now, as if it
    /// ran: a later call that reuses it is refused, and never replaces it.
    pub(super) fn wait_for_approval(
        &self,
        prepared: Prepared,
        args: ParsedArgs,
        reason: Option<String>,
        cx: &ToolContext,
        started: Option<Instant>,
    ) -> ToolOutcome {
        if let Err(duplicate) = self.record_once(&prepared.call_id, cx) {
            return self.finish(prepared, duplicate, cx, started);
        }
        let request = ApprovalRequest::new(
            cx.run_id().clone(),
            prepared.call_id.clone(),
            prepared.tool.definition_dyn().name().clone(),
            prepared.arguments.clone(),
            reason,
        );
        let config = &self.inner.config;
        let parked = self
            .inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                Pending {
                    request: request.clone(),
                    prepared,
                    args,
                    since: Instant::now(),
                },
                config.max_pending_approvals,
                config.approval_ttl,
            );
        if let Err((Refusal::Full { limit }, pending)) = parked {
            let result = ToolResult::error(
                ToolErrorKind::PermissionDenied,
                format!(
                    "this call needs a person's approval, but {limit} calls already wait for one, so it did not run; wait until the user has decided on those, then call it again"
                ),
            );
            return self.finish(pending.prepared, result, cx, started);
        }
        self.emit(|| RunEvent::ToolWaiting {
            run_id: cx.run_id().clone(),
            call_id: request.call_id.clone(),
            tool: request.tool.clone(),
        });
        ToolOutcome::Waiting(Box::new(request))
    }

    pub(super) async fn resume_pending(
        &self,
        pending: Pending,
        decision: ApprovalDecision,
        cx: &ToolContext,
    ) -> ToolOutcome {
        let started = self.clock();
        let Pending {
            request,
            prepared,
            args,
            ..
        } = pending;
        match decision {
            ApprovalDecision::Deny { reason } => {
                let result = ToolResult::error(
                    ToolErrorKind::PermissionDenied,
                    format!("the user denied this call: {reason}"),
                );
                self.finish(prepared, result, cx, started)
            }
            // `resume` matched the approval against this request already.
            ApprovalDecision::Approve { .. } => {
                if let Err(not_offered) = self.offered_tool(request.tool.as_str(), cx) {
                    return self.finish(prepared, not_offered, cx, started);
                }
                let grant = Grant {
                    run_id: request.run_id,
                };
                self.run_prepared(prepared, args, cx, started, Some(grant))
                    .await
            }
        }
    }

    /// Everything after permission: before hooks, middleware, gate and body,
    /// after hooks. `args` is taken out of `prepared` exactly once.
    async fn run_allowed(
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
            let ran = &body_ran;
            let endpoint: Endpoint<'_> =
                Box::new(move || Box::pin(self.gated_body(prepared, args, cx, grant, ran)));
            let call = ToolCall::new(
                prepared.call_id.clone(),
                Arc::clone(&prepared.tool),
                prepared.arguments.clone(),
            );
            let stack = Next::new(&self.inner.middleware, cx, endpoint).run(call);
            // A panicking middleware fails this call, never the batch.
            match AssertUnwindSafe(Box::pin(stack)).catch_unwind().await {
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
        self.emit(|| RunEvent::ToolStarted {
            run_id: cx.run_id().clone(),
            call_id: prepared.call_id.clone(),
            tool: prepared.tool.definition_dyn().name().clone(),
        });
        self.run_body(&*prepared.tool, args, cx).await
    }

    /// The side-effect gate: right before the body, the policy, the run and
    /// the approval are checked against the state at this moment, and a call
    /// id runs at most once (an approved call claimed its id when it began
    /// to wait).
    pub(super) fn gate(
        &self,
        prepared: &Prepared,
        cx: &ToolContext,
        grant: Option<&Grant>,
    ) -> Result<(), ToolResult> {
        let refuse =
            |message: String| Err(ToolResult::error(ToolErrorKind::PermissionDenied, message));
        if let Some(grant) = grant
            && grant.run_id != *cx.run_id()
        {
            return refuse(format!(
                "the approval was given in run `{}` but the call was resumed in run `{}`, so it did not run",
                grant.run_id,
                cx.run_id()
            ));
        }
        match self.check_permission(prepared, cx) {
            Permission::Deny { reason } => {
                return refuse(format!(
                    "refused at the last check before running: {reason}"
                ));
            }
            Permission::Ask { .. } if grant.is_none() => {
                return refuse(
                    "the call needs approval since the permission policy changed; ask again"
                        .to_owned(),
                );
            }
            Permission::Allow | Permission::Ask { .. } => {}
        }
        match grant {
            Some(_) => Ok(()),
            None => self.record_once(&prepared.call_id, cx),
        }
    }

    /// Records that `call_id` reaches its body (or waits for approval);
    /// refuses an id that already did.
    pub(super) fn record_once(&self, call_id: &str, cx: &ToolContext) -> Result<(), ToolResult> {
        let first_time = self
            .inner
            .executed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .first_time(cx.run_id(), call_id);
        if first_time {
            Ok(())
        } else {
            Err(ToolResult::error(
                ToolErrorKind::DuplicateCall,
                format!(
                    "call id `{}` was already used in this run (that call ran, or waits for approval), and an id runs once, so this call did not run; give every call its own id",
                    super::shorten(call_id)
                ),
            ))
        }
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

    /// Result processing, input repairs noted, observers told.
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

/// A deferred tool is offered only when the request names it; an eager
/// tool is offered unless the request restricts the set.
fn is_offered(cx: &ToolContext, definition: &iris_core::ToolDefinition) -> bool {
    match cx.offered() {
        Some(offered) => offered.contains(definition.name()),
        None => definition.exposure() == iris_core::Exposure::Eager,
    }
}

/// The result for input that does not match the tool's schema.
pub(super) fn invalid_arguments(
    definition: &ToolDefinition,
    err: &iris_core::ArgumentError,
) -> ToolResult {
    // The path and the message may quote the model's input (a bad value, an
    // unknown key): both are cut, so hostile input is never echoed whole.
    ToolResult::error(
        ToolErrorKind::InvalidArguments,
        format!(
            "invalid arguments for `{}` at `{}`: {}; fix them to match the tool's schema and call it again",
            definition.name(),
            super::shorten_to(err.path(), 200),
            super::shorten_to(err.message(), 500),
        ),
    )
}

/// Repairs the best SDKs make to what models send: `null` for "no
/// arguments", and an object sent as a JSON string.
pub(super) fn repair_input(input: Value) -> (Value, Vec<&'static str>) {
    match input {
        Value::Null => (
            Value::Object(serde_json::Map::new()),
            vec!["null_as_empty_object"],
        ),
        Value::String(text) => match serde_json::from_str::<Value>(&text) {
            Ok(object @ Value::Object(_)) => (object, vec!["object_from_json_string"]),
            _ => (Value::String(text), Vec::new()),
        },
        other => (other, Vec::new()),
    }
}
