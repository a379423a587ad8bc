//! One call as one value, through its stages in order:
//!
//! resolve → parse → admit → wait | (hooks → middleware → gate → body →
//! hooks) → finish
//!
//! Every call takes these stages; a stage with nothing in it (no hook
//! watching the tool, no middleware) is skipped. The three ways in enter
//! the same value at their stage: [`ToolExecutor::execute_one`] at resolve;
//! a batch at admit, since it parsed every call first to know which may
//! share a window; [`ToolExecutor::resume`] at the hooks (approved) or at
//! finish (denied).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use tracing::Instrument as _;

use futures_util::FutureExt as _;
use iris_core::{
    Admit, Admitted, CallShape, DynTool, InnerStack, Next, ParsedArgs, RunId, ToolCall,
    ToolContext, ToolDefinition, ToolErrorKind, ToolResult, ToolUseBlock,
};
use serde_json::Value;

mod plan;
pub use plan::{CallPlan, PlannedHook};

use super::pending::{CapWaitingPerRun, Limits, Parked, Pending, Refusal};
use super::permissions::{ApprovalDecision, ApprovalRequest, Permission, PermissionRequest};
use super::resolve::{invalid_arguments, offered_tool, repair_input};
use super::{ToolExecutor, ToolOutcome, body};
use crate::ToolRegistry;
use crate::hooks::HookOutcome;
use crate::hooks::InheritedGuards;
use crate::hooks::{HookEvent, HookInput, HookResultView};
use crate::journal::{
    self, Claimed, IdempotencyKey, JournalError, Journaled, StepAnswer, StepClaims,
};
use crate::observers::RunEvent;

/// One call of a tool the registry resolved: what every stage after resolve
/// reads, and what finish reports.
pub(super) struct Call<'t> {
    id: String,
    /// Borrowed from the registry snapshot the call resolved in, so a
    /// registry swapped meanwhile (an MCP server's tools refreshed) does not
    /// pull the tool from under it, and a call touches no reference count.
    tool: &'t Arc<dyn DynTool>,
    /// The tool's definition, looked up once.
    definition: &'t ToolDefinition,
    /// The arguments as hooks, middleware and the policy see them (after
    /// input repairs).
    arguments: Value,
    /// The input repair made, if any.
    repair: Option<&'static str>,
    /// When the call began, when an observer will want its duration.
    started: Option<Instant>,
}

/// A call that named no tool this request offers: only finish is left.
pub(super) struct Unresolved {
    id: String,
    result: ToolResult,
    started: Option<Instant>,
}

/// The answer of the admit stage.
enum Admission {
    /// Allowed, and nothing runs before the body, so the gate passed too:
    /// the body may start now.
    Start,
    /// Allowed; hooks or middleware run before the gate.
    Staged,
    /// Finished with this result (denied, or the call id already ran).
    Refused(ToolResult),
    /// Waits for a person.
    Ask { reason: Option<String> },
}

/// An approval carried from resume to the gate. Resume already matched it
/// against the waiting request (run, call id, tool, arguments), none of
/// which can change after; the call id was claimed when the call began to
/// wait.
struct Grant {
    run_id: RunId,
}

/// How far a call got in [`Call::run`].
pub(super) enum Reached {
    /// It has its result, for finish.
    Result(ToolResult),
    /// It waits for a person.
    Waiting(Box<ApprovalRequest>),
}

impl<'t> Call<'t> {
    /// Resolve: the tool `block` names, if this request offers it, and the
    /// input repaired the way models need.
    pub(super) fn resolve(
        registry: &'t ToolRegistry,
        block: ToolUseBlock,
        cx: &ToolContext,
        started: Option<Instant>,
    ) -> Result<Self, Unresolved> {
        let ToolUseBlock {
            id, name, input, ..
        } = block;
        match offered_tool(registry, &name, cx) {
            Ok((tool, definition)) => {
                let (arguments, repair) = repair_input(input);
                Ok(Self {
                    id,
                    tool,
                    definition,
                    arguments,
                    repair,
                    started,
                })
            }
            Err(result) => Err(Unresolved {
                id,
                result,
                started,
            }),
        }
    }

    /// The call's id.
    pub(super) fn id(&self) -> &str {
        &self.id
    }

    /// Whether running the call again is safe (its tool is idempotent or
    /// read-only): a journal never claims it.
    pub(super) fn is_idempotent(&self) -> bool {
        self.definition.capabilities().is_idempotent()
    }

    /// What a person is asked to approve of this call in the run `cx`
    /// names: its id binds the run, the call id, the tool and the
    /// arguments.
    fn approval_request(&self, reason: Option<String>, cx: &ToolContext) -> ApprovalRequest {
        ApprovalRequest::new(
            cx.run_id().clone(),
            self.id.clone(),
            self.definition.name().clone(),
            self.arguments.clone(),
            reason,
        )
    }

    /// The call's `execute_tool` span.
    pub(super) fn span(&self) -> tracing::Span {
        crate::telemetry::execute_tool_span(
            &self.id,
            self.definition.name().as_str(),
            &self.arguments,
        )
    }

    /// Parse: the only parse of the call; the tool's answers for these
    /// arguments (read-only, concurrency-safe) come with them.
    pub(super) fn parse(&self) -> Result<ParsedArgs, ToolResult> {
        self.tool
            .parse_dyn(&self.arguments)
            .map_err(|err| invalid_arguments(self.definition, &err))
    }

    /// Parse and admit in one step, then every stage after them up to
    /// finish: the way in of a call on its own. A call admitted at once
    /// hands its typed arguments straight to its body; one that is staged
    /// or waits keeps them for later. It borrows the call, so only a
    /// reference to it lives in the future.
    pub(super) async fn parse_and_run(&self, ex: &ToolExecutor, cx: &ToolContext) -> Reached {
        let mut admission = None;
        let parsed = self
            .tool
            .parse_admit_dyn(&self.arguments, cx, &mut |shape: CallShape| {
                let answer = self.admit(ex, shape.read_only, cx);
                let step = match answer {
                    Admission::Start => {
                        self.emit_started(ex, cx);
                        Admit::Run
                    }
                    Admission::Staged | Admission::Ask { .. } => Admit::Keep,
                    Admission::Refused(_) => Admit::Drop,
                };
                admission = Some(answer);
                step
            });
        let result = match (parsed, admission) {
            (Err(err), _) => invalid_arguments(self.definition, &err),
            (Ok(Admitted::Body(body)), _) => {
                body::drive(ex, &self.id, self.definition.name(), body, cx).await
            }
            (Ok(Admitted::Kept(args)), Some(Admission::Staged)) => {
                Box::pin(self.staged(ex, args, cx, None)).await
            }
            (Ok(Admitted::Kept(args)), Some(Admission::Ask { reason })) => {
                return self.wait(ex, args, reason, cx);
            }
            (Ok(Admitted::Dropped), Some(Admission::Refused(result))) => result,
            // The tool did other than it was asked: a host's own `DynTool`
            // that does not keep to `parse_admit_dyn`'s contract.
            (Ok(_), _) => ToolResult::error(
                ToolErrorKind::Internal,
                format!(
                    "the tool `{}` did not follow the executor's admission, so the call did not run",
                    self.definition.name()
                ),
            ),
        };
        Reached::Result(result)
    }

    /// Admit, and every stage after it up to finish. It borrows the call,
    /// so only a reference to it lives in the future.
    pub(super) async fn run(
        &self,
        ex: &ToolExecutor,
        args: ParsedArgs,
        cx: &ToolContext,
    ) -> Reached {
        let result = match self.admit(ex, args.is_read_only(), cx) {
            Admission::Start => self.body(ex, args, cx).await,
            // Boxed: hooks, middleware and their state make a future
            // several times the size of the straight path's, and every call
            // would carry (and move) it.
            Admission::Staged => Box::pin(self.staged(ex, args, cx, None)).await,
            Admission::Refused(result) => result,
            Admission::Ask { reason } => return self.wait(ex, args, reason, cx),
        };
        Reached::Result(result)
    }

    /// Parse, admit and every stage up to finish for a call a person
    /// approved while it waited elsewhere (`approval_id`, the id of the
    /// request they were shown): where the policy still asks, the call's
    /// own request must carry that id, and then it runs as an approved
    /// call does (its id claimed now, the gate checking the run and the
    /// policy again); where the policy now allows or denies, that stands.
    /// `None` when the request is not the one approved: nothing ran.
    pub(super) async fn run_approved(
        &self,
        ex: &ToolExecutor,
        approval_id: &str,
        cx: &ToolContext,
    ) -> Option<ToolResult> {
        let args = match self.parse() {
            Ok(args) => args,
            Err(result) => return Some(result),
        };
        Some(match self.admit(ex, args.is_read_only(), cx) {
            Admission::Start => self.body(ex, args, cx).await,
            Admission::Staged => Box::pin(self.staged(ex, args, cx, None)).await,
            Admission::Refused(result) => result,
            Admission::Ask { reason } => {
                let request = self.approval_request(reason, cx);
                if request.approval_id != approval_id {
                    return None;
                }
                if let Err(duplicate) = claim(ex, &self.id, cx) {
                    return Some(duplicate);
                }
                let grant = Grant {
                    run_id: request.run_id,
                };
                Box::pin(self.staged(ex, args, cx, Some(&grant))).await
            }
        })
    }

    /// The outcome of what [`run`](Self::run) reached: a result goes
    /// through finish; a call that waits has its outcome already.
    pub(super) fn conclude(
        self,
        ex: &ToolExecutor,
        reached: Reached,
        cx: &ToolContext,
    ) -> ToolOutcome {
        match reached {
            Reached::Result(result) => self.finish(ex, result, cx),
            Reached::Waiting(request) => ToolOutcome::Waiting(request),
        }
    }

    /// Admit: the permission policy's answer. With nothing between it and
    /// the body (the call is not staged) it is the gate as well: a policy
    /// changed in between could not be told apart from one changed just
    /// after.
    fn admit(&self, ex: &ToolExecutor, read_only: bool, cx: &ToolContext) -> Admission {
        let staged = ex.inner.staged.includes(self.definition)
            || self.journal(cx).is_some()
            || cx.extension::<InheritedGuards>().is_some();
        match ex.permission(&self.permission_request(read_only, cx), cx) {
            Permission::Allow if staged => Admission::Staged,
            Permission::Allow => match claim(ex, &self.id, cx) {
                Ok(()) => Admission::Start,
                Err(duplicate) => Admission::Refused(duplicate),
            },
            Permission::Deny { reason } => {
                Admission::Refused(ToolResult::error(ToolErrorKind::PermissionDenied, reason))
            }
            Permission::Ask { reason } => Admission::Ask { reason },
        }
    }

    /// Wait: parks the call until a person decides. Its id is claimed now,
    /// as if it ran: a later call that reuses it is refused, and never
    /// replaces it.
    fn wait(
        &self,
        ex: &ToolExecutor,
        args: ParsedArgs,
        reason: Option<String>,
        cx: &ToolContext,
    ) -> Reached {
        if let Err(duplicate) = claim(ex, &self.id, cx) {
            return Reached::Result(duplicate);
        }
        let request = self.approval_request(reason, cx);
        let config = &ex.inner.config;
        let pending = Pending {
            request: request.clone(),
            parked: Parked {
                tool: Arc::clone(self.tool),
                repair: self.repair,
                args,
            },
            since: Instant::now(),
        };
        let parked = ex.inner.pending.insert(
            &ex.inner.ledger,
            pending,
            if cx.extension::<CapWaitingPerRun>().is_some() {
                // The host's cap holds per run; across runs only the
                // default bound of memory does.
                Limits {
                    limit: config
                        .max_pending_approvals
                        .max(super::pending::DEFAULT_MAX_PENDING_APPROVALS),
                    per_run: config
                        .max_pending_approvals
                        .min(config.max_pending_approvals_per_run),
                }
            } else {
                Limits {
                    limit: config.max_pending_approvals,
                    per_run: config.max_pending_approvals_per_run,
                }
            },
            config.approval_ttl,
        );
        if let Err((refusal, _)) = parked {
            let waiting = match refusal {
                Refusal::Full { limit } => format!("{limit} calls already wait for one"),
                Refusal::RunFull { limit } => {
                    format!("{limit} calls of this run already wait for one")
                }
            };
            return Reached::Result(ToolResult::error(
                ToolErrorKind::PermissionDenied,
                format!(
                    "this call needs a person's approval, but {waiting}, so it did not run; wait until the user has decided on those, then call it again"
                ),
            ));
        }
        ex.emit(|| RunEvent::ToolWaiting {
            run_id: cx.run_id().clone(),
            call_id: request.call_id.clone(),
            tool: request.tool.clone(),
        });
        Reached::Waiting(Box::new(request))
    }

    /// Hooks before, middleware, gate and body, hooks after. `args` is
    /// taken exactly once.
    async fn staged(
        &self,
        ex: &ToolExecutor,
        args: ParsedArgs,
        cx: &ToolContext,
        grant: Option<&Grant>,
    ) -> ToolResult {
        let hooks = &ex.inner.hooks;
        let name = self.definition.name();
        // Built only when a hook watches this tool, and built once: the
        // after hooks get the before hooks' input with the result added.
        let mut hook_input = None;
        // The executor's own `tool.before` hooks, then the guards of the
        // agents above this one (a child agent's calls), each over them.
        let inherited = cx.extension::<InheritedGuards>();
        let guards =
            std::iter::once(hooks).chain(inherited.into_iter().flat_map(InheritedGuards::iter));
        // The call's deadline holds from its first hook on: hooks, body
        // and hooks after share it (set only when a hook is waited on).
        let mut deadline: Option<Option<tokio::time::Instant>> = None;
        for guards in guards {
            if !guards.watches(HookEvent::ToolBefore, name) {
                continue;
            }
            let input =
                hook_input.get_or_insert_with(|| self.hook_input(HookEvent::ToolBefore, cx));
            let at = *deadline.get_or_insert_with(|| {
                body::call_timeout(ex, name).map(|limit| tokio::time::Instant::now() + limit)
            });
            // Boxed, like every optional stage below, so a call without hooks
            // or middleware carries (and moves) none of their state.
            let fired = self.hook_heard(ex, HookEvent::ToolBefore, cx);
            let judged = Box::pin(guards.before(input, &fired));
            let denials = match at {
                Some(at) => match tokio::time::timeout_at(at, judged).await {
                    Ok(denials) => denials,
                    Err(_) => return self.hooks_past_deadline(ex),
                },
                None => judged.await,
            };
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
        let deadline = deadline.flatten();
        let timed_cx;
        let cx = match deadline {
            // The body gets what the hooks left of the call's time.
            Some(at) => {
                timed_cx = cx.with_extension(body::CallDeadline(at));
                &timed_cx
            }
            None => cx,
        };
        let body_ran = AtomicBool::new(false);
        let mut result = if ex.inner.middleware.is_empty() {
            // No stack to thread through: no endpoint to box.
            self.gated_body(ex, args, cx, grant, &body_ran).await
        } else {
            Box::pin(self.middleware(ex, args, cx, grant, &body_ran)).await
        };
        if body_ran.load(Ordering::Relaxed) && hooks.watches(HookEvent::ToolAfter, name) {
            let mut input = hook_input.unwrap_or_else(|| self.hook_input(HookEvent::ToolAfter, cx));
            input.event = HookEvent::ToolAfter;
            input.result = Some(HookResultView::of(&result));
            let fired = self.hook_heard(ex, HookEvent::ToolAfter, cx);
            let heard = Box::pin(hooks.after(&input, &fired));
            let (feedback, failures) = match deadline {
                Some(at) => tokio::time::timeout_at(at, heard)
                    .await
                    .unwrap_or_else(|_| {
                        (
                            Vec::new(),
                            vec![
                                "hooks after the call were stopped at the call's deadline"
                                    .to_owned(),
                            ],
                        )
                    }),
                None => heard.await,
            };
            if !feedback.is_empty() {
                result = result.with_text(format!("[Hook feedback]\n{}", feedback.join("\n")));
            }
            if !failures.is_empty() {
                result = result.with_stat("hook_failures", failures);
            }
        }
        result
    }

    /// The result of a call whose hooks before it were still deciding when
    /// its deadline passed: it did not run.
    fn hooks_past_deadline(&self, ex: &ToolExecutor) -> ToolResult {
        let name = self.definition.name();
        let limit = body::call_timeout(ex, name).unwrap_or_default();
        ToolResult::error(
            ToolErrorKind::Timeout,
            format!(
                "the call of `{name}` did not start within its deadline of {:.1} s: hooks before it were still deciding, so it did not run",
                limit.as_secs_f64()
            ),
        )
    }

    /// Middleware: the stack around the gate and the body.
    async fn middleware(
        &self,
        ex: &ToolExecutor,
        args: ParsedArgs,
        cx: &ToolContext,
        grant: Option<&Grant>,
        ran: &AtomicBool,
    ) -> ToolResult {
        let name = self.definition.name();
        let endpoint: InnerStack<'_> =
            Box::new(move || Box::pin(self.gated_body(ex, args, cx, grant, ran)));
        let call = ToolCall::new(
            self.id.clone(),
            Arc::clone(self.tool),
            self.arguments.clone(),
        );
        let stack = Next::new(&ex.inner.middleware, cx, endpoint).run(call);
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
        ex: &ToolExecutor,
        args: ParsedArgs,
        cx: &ToolContext,
        grant: Option<&Grant>,
        ran: &AtomicBool,
    ) -> ToolResult {
        if let Err(refusal) = self.gate(ex, args.is_read_only(), cx, grant) {
            return refusal;
        }
        if let Some(journal) = self.journal(cx) {
            return Box::pin(self.journaled_body(ex, args, cx, journal, ran)).await;
        }
        ran.store(true, Ordering::Relaxed);
        self.body(ex, args, cx).await
    }

    /// The run's journal, when it has one and the call changes something
    /// (a read needs neither a claim nor a key).
    fn journal<'c>(&self, cx: &'c ToolContext) -> Option<&'c Journaled> {
        if self.definition.capabilities().is_read_only() {
            return None;
        }
        cx.extension::<Journaled>()
    }

    /// The body of a journaled call, given its idempotency key. A call that
    /// may not run twice is claimed first (one that ran, or was cut off,
    /// in a process before this one does not run again) and its result
    /// recorded; an idempotent one just runs.
    async fn journaled_body(
        &self,
        ex: &ToolExecutor,
        args: ParsedArgs,
        cx: &ToolContext,
        journal: &Journaled,
        ran: &AtomicBool,
    ) -> ToolResult {
        let name = self.definition.name().as_str();
        let run = cx.run_id();
        let call_cx = cx.with_extension(IdempotencyKey::of(run, &self.id));
        if self.definition.capabilities().is_idempotent() {
            ran.store(true, Ordering::Relaxed);
            return self.body(ex, args, &call_cx).await;
        }
        // A step kept whole claimed this call with the others already.
        let step = cx.extension::<Arc<StepClaims>>();
        let answer = match step {
            Some(step) => step.take(&self.id).await,
            None => None,
        };
        let claimed = match answer {
            Some(StepAnswer::Claimed(claimed)) => Ok(claimed),
            Some(StepAnswer::Refused(why)) => return self.refused(why),
            None => journal.0.claim(run, &self.id).await,
        };
        match claimed {
            Ok(Claimed::New) => {}
            Ok(Claimed::Ran(result)) => return result,
            Ok(Claimed::Unfinished) => return journal::unfinished(name),
            Err(why) => return self.refused(&why),
        }
        ran.store(true, Ordering::Relaxed);
        let result = self.body(ex, args, &call_cx).await;
        if let Some(step) = step.filter(|step| step.claims(&self.id)) {
            step.keep(&self.id, &result);
        } else if let Err(why) = journal.0.record(run, &self.id, &result).await {
            tracing::error!(tool = name, call_id = %self.id, error = ?why, "a call's result could not be recorded");
        }
        result
    }

    /// The journal would not claim the call: it does not run.
    fn refused(&self, why: &JournalError) -> ToolResult {
        let name = self.definition.name().as_str();
        tracing::error!(tool = name, call_id = %self.id, error = ?why, "a call could not be claimed in the run's journal");
        journal::refused(name, why)
    }

    /// The id of this call when a step kept whole claims it with the
    /// others: the run keeps steps whole, and the call may not run twice.
    pub(super) fn step_claim(&self, cx: &ToolContext) -> Option<&str> {
        let journal = self.journal(cx)?;
        let claimed = journal.0.by_step() && !self.definition.capabilities().is_idempotent();
        claimed.then_some(self.id.as_str())
    }

    /// Body: observers learn it starts, and it is made from the parsed
    /// arguments and driven to its result. A plain function handing back
    /// the driving future, so a call's future nests no extra level.
    #[expect(
        clippy::inline_always,
        reason = "inlined, the driving future is built in place; called, it is built and then moved, 120 instructions more per call (measured)"
    )]
    #[inline(always)]
    fn body<'a>(
        &'a self,
        ex: &'a ToolExecutor,
        args: ParsedArgs,
        cx: &'a ToolContext,
    ) -> impl Future<Output = ToolResult> + 'a {
        self.emit_started(ex, cx);
        body::drive(
            ex,
            &self.id,
            self.definition.name(),
            self.tool.call_dyn(args, cx),
            cx,
        )
    }

    /// Gate: right before the body, the policy, the run and the approval
    /// are checked against the state at this moment, and a call id runs at
    /// most once (an approved call claimed its id when it began to wait).
    fn gate(
        &self,
        ex: &ToolExecutor,
        read_only: bool,
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
        match ex.permission(&self.permission_request(read_only, cx), cx) {
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
            None => claim(ex, &self.id, cx),
        }
    }

    /// Finish: the one last stage of every call that reached a tool.
    pub(super) fn finish(
        self,
        ex: &ToolExecutor,
        result: ToolResult,
        cx: &ToolContext,
    ) -> ToolOutcome {
        finish(
            ex,
            self.id,
            Some(self.definition),
            self.repair,
            result,
            cx,
            self.started,
        )
    }

    fn permission_request<'a>(
        &'a self,
        read_only: bool,
        cx: &'a ToolContext,
    ) -> PermissionRequest<'a> {
        PermissionRequest {
            definition: self.definition,
            arguments: &self.arguments,
            read_only,
            run_id: cx.run_id(),
        }
    }

    /// Tells observers of each hook of `on` that ran for this call.
    fn hook_heard<'a>(
        &'a self,
        ex: &'a ToolExecutor,
        on: HookEvent,
        cx: &'a ToolContext,
    ) -> impl Fn(&str, HookOutcome) + Send + Sync + 'a {
        move |hook: &str, outcome: HookOutcome| {
            ex.emit(|| RunEvent::HookFired {
                run_id: cx.run_id().clone(),
                call_id: Some(self.id.clone()),
                hook: hook.to_owned(),
                on,
                outcome,
            });
        }
    }

    fn emit_started(&self, ex: &ToolExecutor, cx: &ToolContext) {
        ex.emit(|| RunEvent::ToolStarted {
            run_id: cx.run_id().clone(),
            call_id: self.id.clone(),
            tool: self.definition.name().clone(),
        });
    }

    fn hook_input(&self, event: HookEvent, cx: &ToolContext) -> HookInput {
        HookInput {
            event,
            run_id: cx.run_id().clone(),
            call_id: Some(self.id.clone()),
            tool: Some(self.definition.name().clone()),
            arguments: Some(self.arguments.clone()),
            result: None,
            request: None,
            answer: None,
        }
    }
}

impl Unresolved {
    /// The call's id.
    pub(super) fn id(&self) -> &str {
        &self.id
    }

    /// The result the model would get for the call.
    pub(super) fn into_result(self) -> ToolResult {
        self.result
    }

    /// Finish, for a call that never reached a tool: it takes the
    /// executor's own result limit.
    pub(super) fn finish(self, ex: &ToolExecutor, cx: &ToolContext) -> ToolOutcome {
        finish(ex, self.id, None, None, self.result, cx, self.started)
    }
}

/// Resume: a parked call enters again with a person's decision, at the
/// hooks when approved and at finish when denied.
pub(super) async fn resume(
    ex: &ToolExecutor,
    pending: Pending,
    decision: ApprovalDecision,
    cx: &ToolContext,
) -> ToolOutcome {
    let Pending {
        request,
        parked: Parked { tool, repair, args },
        ..
    } = pending;
    let call = Call {
        id: request.call_id,
        tool: &tool,
        definition: tool.definition_dyn(),
        arguments: request.arguments,
        repair,
        started: ex.clock(),
    };
    match decision {
        ApprovalDecision::Deny { reason } => {
            let result = ToolResult::error(
                ToolErrorKind::PermissionDenied,
                format!("the user denied this call: {reason}"),
            );
            call.finish(ex, result, cx)
        }
        // `resume` matched the approval against this request already.
        ApprovalDecision::Approve { .. } => {
            let still_offered = {
                let registry = ex.inner.registry.peek();
                offered_tool(&registry, request.tool.as_str(), cx).map(|_| ())
            };
            if let Err(not_offered) = still_offered {
                return call.finish(ex, not_offered, cx);
            }
            let grant = Grant {
                run_id: request.run_id,
            };
            let span = call.span();
            let result = call
                .staged(ex, args, cx, Some(&grant))
                .instrument(span.clone())
                .await;
            let outcome = call.finish(ex, result, cx);
            super::span::ended(&span, &outcome);
            outcome
        }
    }
}

/// Records that `call_id` reaches its body (or waits for approval);
/// refuses an id that already did.
fn claim(ex: &ToolExecutor, call_id: &str, cx: &ToolContext) -> Result<(), ToolResult> {
    if ex.inner.ledger.claim(cx.run_id(), call_id) {
        Ok(())
    } else {
        Err(ToolResult::error(
            ToolErrorKind::DuplicateCall,
            format!(
                "call id `{}` was already used in this run (that call ran, or waits for approval), and an id runs once, so this call did not run; give every call its own id",
                crate::echo::shorten(call_id)
            ),
        ))
    }
}

/// The last stage of every call, however it ended: result processing (a
/// call that never reached a tool takes the executor's own limit), input
/// repairs noted, observers told.
fn finish(
    ex: &ToolExecutor,
    call_id: String,
    definition: Option<&ToolDefinition>,
    repair: Option<&'static str>,
    result: ToolResult,
    cx: &ToolContext,
    started: Option<Instant>,
) -> ToolOutcome {
    let result = ex.bound_result(result, definition, cx);
    let result = match repair {
        Some(repair) => result.with_stat("input_repairs", [repair]),
        None => result,
    };
    ex.emit(|| RunEvent::ToolFinished {
        run_id: cx.run_id().clone(),
        call_id: call_id.clone(),
        tool: definition.map(|d| d.name().clone()),
        error_kind: result.error_kind(),
        elapsed: started.map(|s| s.elapsed()).unwrap_or_default(),
    });
    ToolOutcome::Finished { call_id, result }
}
