//! The executor: from a model's tool calls to results, through every stage.

mod batch;
mod body;
mod call;
mod lingering;
mod model_turn;
pub(crate) mod pending;
pub(crate) mod permissions;
mod resolve;
mod span;
mod stages;

use std::collections::HashMap;
use tracing::Instrument as _;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use iris_core::{Middleware, RunId, ToolContext, ToolResult, ToolUseBlock};
use serde_json::Value;

use crate::artifacts::{ArtifactStore, PreviewPolicy};
use crate::error::RuntimeError;
use crate::hooks::HookOutcome;
use crate::hooks::{Denial, HookDispatcher, HookEvent, HookInput, HookRegistration, TreeGuards};
use crate::ledger::{LedgerLimits, RunLedger};
use crate::observers::{ObserverStats, Observers, RunEvent, RunEventObserver};
use crate::registry::{SharedRegistry, ToolRegistry};
use call::Call;
use pending::PendingApprovals;
/// How long a synchronous body asked to stop is given to end, unless
/// configured.
pub const DEFAULT_STOP_GRACE: Duration = Duration::from_secs(2);

pub use call::{CallPlan, PlannedHook};
pub use pending::{
    DEFAULT_APPROVAL_TTL, DEFAULT_MAX_PENDING_APPROVALS, DEFAULT_MAX_PENDING_APPROVALS_PER_RUN,
};
use permissions::{
    ApprovalDecision, ApprovalRequest, Permission, PermissionPolicy, PermissionRequest,
    PolicyCeiling, RulePolicy,
};
use stages::Staged;

/// What the executor returns for one call; a journal that keeps every
/// outcome keeps it as JSON.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutcome {
    /// The call has its result (which may be an error the model reads).
    Finished {
        /// The provider's call id.
        call_id: String,
        /// The result.
        result: ToolResult,
    },
    /// The call waits for a person; present the request, then
    /// [`ToolExecutor::resume`] it. Boxed: pauses are rare, and a small
    /// outcome is cheaper to hand back for every finished call.
    Waiting(Box<ApprovalRequest>),
}

impl ToolOutcome {
    /// The call id.
    #[must_use]
    pub fn call_id(&self) -> &str {
        match self {
            ToolOutcome::Finished { call_id, .. } => call_id,
            ToolOutcome::Waiting(request) => &request.call_id,
        }
    }

    /// The result, when the call finished.
    #[must_use]
    pub fn result(&self) -> Option<&ToolResult> {
        match self {
            ToolOutcome::Finished { result, .. } => Some(result),
            ToolOutcome::Waiting(_) => None,
        }
    }

    /// The approval request, when the call waits.
    #[must_use]
    pub fn approval(&self) -> Option<&ApprovalRequest> {
        match self {
            ToolOutcome::Waiting(request) => Some(request),
            ToolOutcome::Finished { .. } => None,
        }
    }
}

/// Limits of an executor.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExecutorConfig {
    /// Most calls of one read-only window running at once.
    pub max_concurrency: usize,
    /// Deadline of a body; `None` waits as long as it takes.
    pub timeout: Option<Duration>,
    /// Deadlines of particular tools, by canonical name.
    pub tool_timeouts: HashMap<String, Duration>,
    /// Characters of model content past which a result is saved as an
    /// artifact and previewed, for tools whose result policy sets none.
    pub max_result_chars: usize,
    /// Model-content limits of particular tools, by canonical name; they
    /// win over the tool's own result policy.
    pub tool_max_result_chars: HashMap<String, usize>,
    /// Most calls that may wait for approval at once, across runs; past it
    /// a call that would wait is refused instead.
    pub max_pending_approvals: usize,
    /// Most calls of one run that may wait for approval at once; past it a
    /// call of that run that would wait is refused instead.
    pub max_pending_approvals_per_run: usize,
    /// How long a call waits for its decision; after that it can no longer
    /// be resumed and is dropped.
    pub approval_ttl: Duration,
    /// How long a synchronous body asked to stop (past its deadline, or
    /// its call cancelled) is given to end before the call is reported as
    /// one that may still complete.
    pub stop_grace: Duration,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        Self {
            max_concurrency: 8,
            timeout: Some(Duration::from_secs(300)),
            tool_timeouts: HashMap::new(),
            max_result_chars: crate::artifacts::DEFAULT_MAX_RESULT_CHARS,
            tool_max_result_chars: HashMap::new(),
            max_pending_approvals: DEFAULT_MAX_PENDING_APPROVALS,
            max_pending_approvals_per_run: DEFAULT_MAX_PENDING_APPROVALS_PER_RUN,
            approval_ttl: DEFAULT_APPROVAL_TTL,
            stop_grace: DEFAULT_STOP_GRACE,
        }
    }
}

/// Runs tool calls through the pipeline: resolve, parse once, permission
/// (pausing for approval), `tool.before` hooks, middleware, the side-effect
/// gate and the body, `tool.after` hooks, observers.
///
/// Cheap to clone; clones share state. What lives as long as a run
/// (executed call ids, calls waiting for approval, sync bodies past their
/// deadline) is kept in the executor's [`RunLedger`], which
/// [`finish_run`](Self::finish_run) clears for the run.
#[derive(Clone)]
pub struct ToolExecutor {
    inner: Arc<Inner>,
}

struct Inner {
    registry: SharedRegistry,
    /// Fixed for the executor's life: a policy that changes (such as a
    /// shared [`RulePolicy`] whose per-tool rules are set later) does so
    /// behind its own `check`, so a call takes no lock here.
    policy: Arc<dyn PermissionPolicy>,
    hooks: HookDispatcher,
    /// The guards it holds over child agents' calls, if any.
    tree_guards: Option<TreeGuards>,
    middleware: Vec<Arc<dyn Middleware>>,
    /// Which calls pass through hooks or middleware.
    staged: Staged,
    observers: Observers,
    config: ExecutorConfig,
    /// Where oversized results go; `None` uses the store of the call's
    /// workspace (`<root>/.iris/artifacts`).
    artifacts: Option<ArtifactStore>,
    /// The one owner of per-run state, shared with discovery, the file
    /// service and the runner when they are built over this executor.
    ledger: Arc<RunLedger>,
    /// Calls waiting for approval (kept in the ledger), counted across runs.
    pending: PendingApprovals,
    /// Sync bodies still running past their deadline (kept in the ledger),
    /// which the run's later calls wait for.
    lingering: Arc<lingering::Lingering>,
}

impl ToolExecutor {
    /// Starts an executor over `registry`: a [`ToolRegistry`] (then fixed),
    /// or a [`SharedRegistry`] that may change while the executor runs.
    pub fn builder(registry: impl Into<SharedRegistry>) -> ToolExecutorBuilder {
        ToolExecutorBuilder {
            registry: registry.into(),
            policy: Arc::new(RulePolicy::default()),
            hooks: Vec::new(),
            middleware: Vec::new(),
            observers: Observers::default(),
            config: ExecutorConfig::default(),
            artifacts: None,
            ledger: None,
            ledger_limits: LedgerLimits::default(),
        }
    }

    /// The run ledger: what lives as long as a run, for this executor and
    /// whatever shares it (discovery, the file service, the runner).
    #[must_use]
    pub fn ledger(&self) -> &Arc<RunLedger> {
        &self.inner.ledger
    }

    /// Where the oversized results of calls in `cx` are saved: the
    /// configured store, or the workspace's (`<root>/.iris/artifacts`).
    #[must_use]
    pub fn artifact_store(&self, cx: &ToolContext) -> ArtifactStore {
        self.inner
            .artifacts
            .clone()
            .unwrap_or_else(|| ArtifactStore::in_workspace(cx.workspace_root()))
    }

    /// The registry as it stands now (a snapshot: a later change to a
    /// shared registry does not affect it).
    #[must_use]
    pub fn registry(&self) -> Arc<ToolRegistry> {
        self.inner.registry.snapshot()
    }

    /// The registry the executor resolves calls in, to change its tools
    /// while it runs or to build discovery over the same tools.
    #[must_use]
    pub fn shared_registry(&self) -> &SharedRegistry {
        &self.inner.registry
    }

    /// What `block` would meet if it ran now, with nothing run: the tool
    /// it resolves to, the policy's answer for its arguments, and the hooks
    /// and middleware it would pass through. A call that would be refused
    /// before any of that (an unknown tool, arguments that do not parse)
    /// gives the result the model would get.
    ///
    /// # Errors
    /// That result, as the `Err`.
    pub fn plan(&self, block: ToolUseBlock, cx: &ToolContext) -> Result<CallPlan, ToolResult> {
        let registry = self.inner.registry.peek();
        let call =
            Call::resolve(&registry, block, cx, None).map_err(call::Unresolved::into_result)?;
        let parsed = call.parse()?;
        Ok(call.plan(self, parsed.is_read_only(), cx))
    }

    /// Runs one call.
    pub async fn execute_one(&self, block: ToolUseBlock, cx: &ToolContext) -> ToolOutcome {
        let started = self.clock();
        // Held across the call without touching a reference count: the call
        // borrows its tool from this snapshot.
        let registry = self.inner.registry.peek();
        let call = match Call::resolve(&registry, block, cx, started) {
            Ok(call) => call,
            Err(unresolved) => return unresolved.finish(self, cx),
        };
        let span = call.span();
        // No subscriber wants the span: the call runs as it would without.
        if span.is_disabled() {
            let reached = call.parse_and_run(self, cx).await;
            return call.conclude(self, reached, cx);
        }
        let reached = call.parse_and_run(self, cx).instrument(span.clone()).await;
        let outcome = call.conclude(self, reached, cx);
        span::ended(&span, &outcome);
        outcome
    }

    /// Runs `block`, which a person approved while its run waited in
    /// another process (or before this executor started): the request they
    /// were shown carried `approval_id`. Where the permission policy still
    /// asks, the call's own request now must carry the same id (same run,
    /// call id, tool and arguments), and the call then runs as an approved
    /// call resumed here would, with the gate checking the run and the
    /// policy again; where the policy now allows or denies it, that
    /// stands. Nothing waits in between: the call is never parked, so it
    /// takes no place among the calls waiting for approval.
    ///
    /// # Errors
    /// [`RuntimeError::ApprovalMismatch`] when the call's request is not
    /// the one approved (its arguments, tool or run differ): nothing ran.
    pub async fn execute_approved(
        &self,
        block: ToolUseBlock,
        approval_id: &str,
        cx: &ToolContext,
    ) -> Result<ToolOutcome, RuntimeError> {
        let started = self.clock();
        let registry = self.inner.registry.peek();
        let call = match Call::resolve(&registry, block, cx, started) {
            Ok(call) => call,
            Err(unresolved) => return Ok(unresolved.finish(self, cx)),
        };
        let span = call.span();
        let Some(result) = call
            .run_approved(self, approval_id, cx)
            .instrument(span.clone())
            .await
        else {
            return Err(RuntimeError::ApprovalMismatch {
                call_id: call.id().to_owned(),
            });
        };
        let outcome = call.finish(self, result, cx);
        span::ended(&span, &outcome);
        Ok(outcome)
    }

    /// Runs the calls of one model turn; results come back in call order.
    ///
    /// Maximal runs of adjacent calls that are read-only and
    /// concurrency-safe (as the tool says for these arguments) run
    /// concurrently, up to `max_concurrency`; every other call runs alone
    /// after everything before it finished.
    pub async fn execute_batch(
        &self,
        calls: Vec<ToolUseBlock>,
        cx: &ToolContext,
    ) -> Vec<ToolOutcome> {
        batch::execute_batch(self, calls, cx).await
    }

    /// Resumes a call that waits for approval, in the run `cx` names.
    ///
    /// An approval runs exactly the call that was shown: its decision must
    /// carry the request's `approval_id` (bound to the run, the call id, the
    /// tool and the arguments), the tool must still be offered in `cx`, and
    /// the permission policy and the run are checked again at the gate. A
    /// denial finishes the call with the reason for the model.
    ///
    /// # Errors
    /// [`RuntimeError::NoPendingApproval`] when `call_id` does not wait in
    /// this run (it never did, was resumed already, expired, or belongs to
    /// another run); [`RuntimeError::ApprovalMismatch`] when the approval
    /// was given for another request. Neither consumes a waiting call.
    pub async fn resume(
        &self,
        call_id: &str,
        decision: ApprovalDecision,
        cx: &ToolContext,
    ) -> Result<ToolOutcome, RuntimeError> {
        let ttl = self.inner.config.approval_ttl;
        let ledger = &self.inner.ledger;
        let pending =
            PendingApprovals::take(ledger, cx.run_id(), call_id, ttl).ok_or_else(|| {
                RuntimeError::NoPendingApproval {
                    waiting: self.waiting_in(cx.run_id()),
                    call_id: call_id.to_owned(),
                    run_id: cx.run_id().clone(),
                }
            })?;
        if let ApprovalDecision::Approve { approval_id } = &decision
            && *approval_id != pending.request.approval_id
        {
            self.inner.pending.restore(ledger, pending);
            return Err(RuntimeError::ApprovalMismatch {
                call_id: call_id.to_owned(),
            });
        }
        Ok(call::resume(self, pending, decision, cx).await)
    }

    /// The calls of `run` waiting for approval, in words for an error.
    fn waiting_in(&self, run: &RunId) -> String {
        let pending = self.pending_approvals();
        permissions::waiting_words(pending.iter().filter(|request| &request.run_id == run))
    }

    /// Calls waiting for approval.
    #[must_use]
    pub fn pending_approvals(&self) -> Vec<ApprovalRequest> {
        PendingApprovals::requests(&self.inner.ledger, self.inner.config.approval_ttl)
    }

    /// Announces the start of a run to `run.started` hooks and observers.
    ///
    /// A `run.started` guard may refuse the task (an input guardrail): the
    /// refusal is returned, after the event, and the host ends the run
    /// without asking the model (the runner's
    /// [`RunOutcome::Refused`](https://docs.rs/iris-sdk-agent)).
    pub async fn start_run(&self, cx: &ToolContext) -> Option<Denial> {
        self.start_run_with(cx, || None).await
    }

    /// [`ToolExecutor::start_run`], its hooks shown what `request` makes
    /// (for a run an agent starts, `{"messages": [...]}`: the task they may
    /// refuse), made only when a `run.started` hook is there to see it.
    pub async fn start_run_with(
        &self,
        cx: &ToolContext,
        request: impl FnOnce() -> Option<Value>,
    ) -> Option<Denial> {
        let mut refused = None;
        if self.inner.hooks.has(HookEvent::RunStarted) {
            let mut input = HookInput::of_run(HookEvent::RunStarted, cx.run_id().clone());
            input.request = request();
            let fired = self.fired(cx.run_id(), HookEvent::RunStarted);
            refused = self.inner.hooks.start(&input, &fired).await;
        }
        self.emit(|| RunEvent::RunStarted {
            run_id: cx.run_id().clone(),
        });
        refused
    }

    /// Waits until every synchronous body of this run that was asked to
    /// stop (past its deadline, or cancelled) and ran on has ended, so the
    /// host knows that no effect of them lands later. The run's next call
    /// waits for them too.
    pub async fn wait_for_stopped(&self, cx: &ToolContext) {
        self.inner.lingering.settle(cx.run_id()).await;
    }

    /// Announces the end of a run (not a pause for approval) and ends it in
    /// the ledger: the call ids it ran, its calls that still wait for
    /// approval, and whatever else shares the ledger keeps for it (tools
    /// disclosed, history, file observations) are forgotten.
    pub async fn finish_run(&self, cx: &ToolContext) {
        self.inner.ledger.finish_run(cx.run_id());
        self.run_event(HookEvent::RunFinished, cx).await;
        self.emit(|| RunEvent::RunFinished {
            run_id: cx.run_id().clone(),
        });
    }

    async fn run_event(&self, event: HookEvent, cx: &ToolContext) {
        if self.inner.hooks.has(event) {
            let input = HookInput::of_run(event, cx.run_id().clone());
            let fired = self.fired(cx.run_id(), event);
            self.inner.hooks.notify(&input, &fired).await;
        }
    }

    /// Hears each hook of `event` in run `run` that answered, as a
    /// [`RunEvent::HookFired`].
    pub(crate) fn fired<'a>(
        &'a self,
        run: &'a RunId,
        event: HookEvent,
    ) -> impl Fn(&str, HookOutcome) + Send + Sync + 'a {
        move |hook: &str, outcome: HookOutcome| {
            self.emit(|| RunEvent::HookFired {
                run_id: run.clone(),
                call_id: None,
                hook: hook.to_owned(),
                on: event,
                outcome,
            });
        }
    }

    /// Delivery counters of each observer, in registration order.
    #[must_use]
    pub fn observer_stats(&self) -> Vec<ObserverStats> {
        self.inner.observers.stats()
    }

    /// Result processing: an oversized result is saved and previewed. A
    /// call that never reached a tool (`definition` is `None`) gets the
    /// executor's own limit.
    fn bound_result(
        &self,
        result: ToolResult,
        definition: Option<&iris_core::ToolDefinition>,
        cx: &ToolContext,
    ) -> ToolResult {
        let config = &self.inner.config;
        let configured = match definition {
            Some(definition) if !config.tool_max_result_chars.is_empty() => config
                .tool_max_result_chars
                .get(definition.name().as_str())
                .copied(),
            _ => None,
        };
        let policy = PreviewPolicy {
            max_chars: configured
                .or_else(|| definition.and_then(|d| d.result_policy().max_chars))
                .unwrap_or(config.max_result_chars),
        };
        if crate::artifacts::fits(&result, policy) {
            return result;
        }
        match &self.inner.artifacts {
            Some(store) => crate::artifacts::apply_result_policy(result, policy, store),
            None => crate::artifacts::apply_result_policy(
                result,
                policy,
                &ArtifactStore::in_workspace(cx.workspace_root()),
            ),
        }
    }

    /// The start of a call, when an observer will want its duration.
    #[inline]
    fn clock(&self) -> Option<std::time::Instant> {
        (!self.inner.observers.is_empty()).then(std::time::Instant::now)
    }

    #[inline]
    fn emit(&self, event: impl FnOnce() -> RunEvent) {
        if !self.inner.observers.is_empty() {
            self.inner.observers.emit(&event());
        }
    }

    /// Whether any observer listens: the run loop streams a model's answer
    /// only for them.
    #[must_use]
    pub fn has_observers(&self) -> bool {
        !self.inner.observers.is_empty()
    }

    /// The `tool.before` guards this executor holds over the calls of
    /// every child agent below its agent ([`HookRegistration::tree_wide`]),
    /// if any.
    #[must_use]
    pub fn tree_guards(&self) -> Option<TreeGuards> {
        self.inner.tree_guards.clone()
    }

    /// The executor's permission policy.
    #[must_use]
    pub fn policy(&self) -> Arc<dyn PermissionPolicy> {
        Arc::clone(&self.inner.policy)
    }

    /// The policy's answer for `request`, made stricter by the ceiling the
    /// context carries (the policies of the agents that delegated to this
    /// one), if any.
    pub(crate) fn permission(
        &self,
        request: &PermissionRequest<'_>,
        cx: &ToolContext,
    ) -> Permission {
        let own = self.inner.policy.check(request);
        match cx.extension::<PolicyCeiling>() {
            Some(ceiling) => ceiling.check(own, request),
            None => own,
        }
    }

    /// Hands `event` to the observers (for events of the run loop, such as
    /// streamed model text).
    pub fn emit_event(&self, event: RunEvent) {
        self.emit(|| event);
    }
}

impl fmt::Debug for ToolExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolExecutor")
            .field("registry", &self.inner.registry)
            .field("hooks", &self.inner.hooks)
            .field("middleware", &self.inner.middleware.len())
            .field("observers", &self.inner.observers)
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// Builds a [`ToolExecutor`].
#[must_use]
pub struct ToolExecutorBuilder {
    registry: SharedRegistry,
    policy: Arc<dyn PermissionPolicy>,
    hooks: Vec<HookRegistration>,
    middleware: Vec<Arc<dyn Middleware>>,
    observers: Observers,
    config: ExecutorConfig,
    artifacts: Option<ArtifactStore>,
    ledger: Option<Arc<RunLedger>>,
    ledger_limits: LedgerLimits,
}

impl ToolExecutorBuilder {
    /// Sets the permission policy (default: [`RulePolicy::default`]).
    pub fn policy(mut self, policy: impl PermissionPolicy) -> Self {
        self.policy = Arc::new(policy);
        self
    }

    /// Sets a shared permission policy, kept by the caller to change rules
    /// later (calls that wait for approval are checked against the rules
    /// of the moment at their gate).
    pub fn shared_policy(mut self, policy: Arc<dyn PermissionPolicy>) -> Self {
        self.policy = policy;
        self
    }

    /// Adds a hook after those already added.
    pub fn hook(mut self, hook: HookRegistration) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Adds a middleware inside those already added (the first is outermost).
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Adds a middleware that is already shared (as factories make them).
    pub fn shared_middleware(mut self, middleware: Arc<dyn Middleware>) -> Self {
        self.middleware.push(middleware);
        self
    }

    /// Adds an observer.
    pub fn observer(mut self, observer: impl RunEventObserver) -> Self {
        self.observers.add(Arc::new(observer));
        self
    }

    /// Adds an observer that is already shared.
    pub fn shared_observer(mut self, observer: Arc<dyn RunEventObserver>) -> Self {
        self.observers.add(observer);
        self
    }

    /// Sets how many calls of a read-only window run at once (at least 1).
    pub fn max_concurrency(mut self, limit: usize) -> Self {
        self.config.max_concurrency = limit.max(1);
        self
    }

    /// Sets the deadline of every body; `None` waits as long as it takes.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.timeout = timeout;
        self
    }

    /// Sets the deadline of one tool's body.
    pub fn tool_timeout(mut self, tool: impl Into<String>, timeout: Duration) -> Self {
        self.config.tool_timeouts.insert(tool.into(), timeout);
        self
    }

    /// Sets the model-content limit of tools whose result policy sets none
    /// (default [`DEFAULT_MAX_RESULT_CHARS`](crate::artifacts::DEFAULT_MAX_RESULT_CHARS)).
    pub fn max_result_chars(mut self, limit: usize) -> Self {
        self.config.max_result_chars = limit;
        self
    }

    /// Sets the model-content limit of one tool, over its own result policy.
    pub fn tool_max_result_chars(mut self, tool: impl Into<String>, limit: usize) -> Self {
        self.config.tool_max_result_chars.insert(tool.into(), limit);
        self
    }

    /// Sets how many calls may wait for approval at once, across runs
    /// (default [`DEFAULT_MAX_PENDING_APPROVALS`]); past it, a call that
    /// would wait is refused with a message for the model.
    pub fn max_pending_approvals(mut self, limit: usize) -> Self {
        self.config.max_pending_approvals = limit;
        self
    }

    /// Sets how many calls of one run may wait for approval at once
    /// (default [`DEFAULT_MAX_PENDING_APPROVALS_PER_RUN`]), so one run (one
    /// model answer with thousands of calls) cannot fill the store every
    /// run shares; past it, a call of that run that would wait is refused
    /// with a message for the model.
    pub fn max_pending_approvals_per_run(mut self, limit: usize) -> Self {
        self.config.max_pending_approvals_per_run = limit;
        self
    }

    /// Sets how long a synchronous body asked to stop is given to end
    /// (default [`DEFAULT_STOP_GRACE`]): one that ends within it is
    /// reported as it ended (stopped, or completed late with its result);
    /// one that does not is reported as one that may still complete, and
    /// [`ToolExecutor::wait_for_stopped`] waits for it.
    pub fn stop_grace(mut self, grace: Duration) -> Self {
        self.config.stop_grace = grace;
        self
    }

    /// Sets how long a call waits for its decision (default
    /// [`DEFAULT_APPROVAL_TTL`]); an expired call can no longer be resumed.
    pub fn approval_ttl(mut self, ttl: Duration) -> Self {
        self.config.approval_ttl = ttl;
        self
    }

    /// Sets how many runs the executor's ledger holds when runs never call
    /// [`ToolExecutor::finish_run`] (default
    /// [`DEFAULT_MAX_RUNS`](crate::ledger::DEFAULT_MAX_RUNS)); past it the
    /// oldest run is forgotten whole. Ignored with [`ledger`](Self::ledger).
    pub fn max_runs(mut self, limit: usize) -> Self {
        self.ledger_limits.max_runs = limit.max(1);
        self
    }

    /// Sets how long a run nothing touched stays in the executor's ledger
    /// (default [`DEFAULT_IDLE_TIMEOUT`](crate::ledger::DEFAULT_IDLE_TIMEOUT)).
    /// Ignored with [`ledger`](Self::ledger).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.ledger_limits.idle_timeout = timeout;
        self
    }

    /// Keeps per-run state in `ledger` instead of a ledger of its own: what
    /// a host does that ends runs in one place for several executors.
    pub fn ledger(mut self, ledger: Arc<RunLedger>) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// Saves oversized results in `store` instead of the workspace's
    /// `.iris/artifacts` folder.
    pub fn artifacts(mut self, store: ArtifactStore) -> Self {
        self.artifacts = Some(store);
        self
    }

    /// Finishes the executor, after checking every tool name it was given.
    ///
    /// Hook filters, per-tool deadlines and per-tool result limits may name
    /// a tool by its name or an alias; both mean the tool.
    ///
    /// # Errors
    /// [`RuntimeError::UnknownToolName`] when one of them names no
    /// registered tool: a typo would otherwise leave, say, a deny hook that
    /// never fires.
    pub fn build(mut self) -> Result<ToolExecutor, RuntimeError> {
        let registry = self.registry.snapshot();
        let hooks = HookDispatcher::new(std::mem::take(&mut self.hooks), &registry)?;
        self.config.tool_timeouts = canonical_keys(
            std::mem::take(&mut self.config.tool_timeouts),
            &registry,
            "`tool_timeout`",
        )?;
        self.config.tool_max_result_chars = canonical_keys(
            std::mem::take(&mut self.config.tool_max_result_chars),
            &registry,
            "`tool_max_result_chars`",
        )?;
        let ledger = self
            .ledger
            .unwrap_or_else(|| Arc::new(RunLedger::new(self.ledger_limits)));
        Ok(ToolExecutor {
            inner: Arc::new(Inner {
                registry: self.registry,
                policy: self.policy,
                staged: Staged::new(!self.middleware.is_empty(), &hooks),
                tree_guards: hooks.tree_guards(),
                hooks,
                middleware: self.middleware,
                observers: self.observers,
                config: self.config,
                artifacts: self.artifacts,
                pending: PendingApprovals::default(),
                lingering: Arc::new(lingering::Lingering::new(Arc::clone(&ledger))),
                ledger,
            }),
        })
    }
}

/// A per-tool setting keyed by canonical names instead of the names (or
/// aliases) it was given with.
fn canonical_keys<V>(
    settings: HashMap<String, V>,
    registry: &ToolRegistry,
    setting: &str,
) -> Result<HashMap<String, V>, RuntimeError> {
    let mut entries: Vec<(String, V)> = settings.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut canonical: HashMap<String, (String, V)> = HashMap::with_capacity(entries.len());
    for (given, value) in entries {
        let name = registry.canonical_name(&given, || setting.to_owned())?;
        if let Some((first, _)) = canonical.get(&name) {
            return Err(RuntimeError::ToolSetTwice {
                setting: setting.to_owned(),
                tool: name,
                first: first.clone(),
                second: given,
            });
        }
        canonical.insert(name, (given, value));
    }
    Ok(canonical
        .into_iter()
        .map(|(name, (_, value))| (name, value))
        .collect())
}

impl fmt::Debug for ToolExecutorBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolExecutorBuilder")
            .finish_non_exhaustive()
    }
}
