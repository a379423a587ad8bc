#![cfg_attr(docsrs, feature(doc_cfg))]
//! Agents and the run loop: an [`Agent`] (built in code
//! with [`Agent::builder`], or from an agent file with feature `assembly`)
//! is driven by an [`AgentRunner`], which asks a [`Model`], runs its calls
//! through the agent's executor, feeds the results back, and ends with the
//! model's answer, `max_steps`, cancellation or an error. When a call waits
//! for a person the run returns [`RunOutcome::Waiting`] with a serializable
//! [`RunState`], which [`AgentRunner::resume`] continues, in this process or
//! another built the same way.
//!
//! The model a runner asks is the model layer's ([`iris_model`]): a
//! host's own [`Model`], or an adapter its [`ModelConfig`] names.
//!
//! Per run, `run.started` hooks and the event come once (never on resume),
//! `run.finished` only at the real end. Per step the request carries the
//! instructions, the history, the eager tools and the deferred tools
//! disclosed so far; every call gets exactly one result, in call order, even
//! one that could not run.

mod agent;
#[cfg(feature = "assembly")]
pub mod assembly;
mod binding;
mod durable;
pub mod engine;
mod error;
#[cfg(all(feature = "fuzzing", feature = "assembly"))]
#[doc(hidden)]
pub mod fuzzing;
mod history;
mod seal;
mod state;
pub mod store;

use std::path::PathBuf;
use std::sync::Arc;

use iris_core::{RunId, ToolContext, ToolResult, ToolSpec, ToolUseBlock};
use rustc_hash::FxHashMap;
use tokio_util::sync::CancellationToken;

pub use agent::{Agent, AgentBuilder};
pub use engine::Engine;
pub use error::RunError;
pub use history::{ReadHistory, read_history};
pub use seal::{StateKey, StateKeyError};
pub use state::{FinishedCall, PendingCall, RUN_STATE_VERSION, RunOutcome, RunState};
pub use store::{RunStatus, RunStore, StoreError};

use durable::{Durable, Journal};

#[cfg(doc)]
use iris_model::ModelConfig;
use iris_model::{
    Message, Model, ModelDelta, ModelError, ModelOptions, ModelRequest, ModelResponse, ToolChoice,
    Usage,
};
use iris_runtime::{ApprovalDecision, RuntimeError, ToolOutcome};

/// Steps a run takes when the agent sets no step limit.
pub const DEFAULT_MAX_STEPS: u32 = 40;

/// Where a run's calls happen and how it is stopped.
#[derive(Debug, Clone)]
pub struct RunContext {
    workspace: PathBuf,
    run_id: RunId,
    cancel: CancellationToken,
}

impl RunContext {
    /// Calls of run `run_id` in `workspace` (the file tools' root).
    pub fn new(workspace: impl Into<PathBuf>, run_id: RunId) -> Self {
        Self {
            workspace: workspace.into(),
            run_id,
            cancel: CancellationToken::new(),
        }
    }

    /// Stops the run with this token: between steps, while the model
    /// answers, and in the middle of a tool (which is cancelled).
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// The run.
    #[must_use]
    pub fn run_id(&self) -> &RunId {
        &self.run_id
    }

    /// The token that cancels the run.
    #[must_use]
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }
}

/// Drives an [`Agent`] with a [`Model`].
pub struct AgentRunner {
    agent: Arc<Agent>,
    model: Arc<dyn Model>,
    options: ModelOptions,
    /// Seals the states handed out, and admits only sealed ones.
    state_key: Option<StateKey>,
    /// Where runs are written, when they outlive this process.
    durable: Option<Durable>,
    /// The durable engine the loop runs on, if any.
    engine: Option<Arc<dyn Engine>>,
}

impl std::fmt::Debug for AgentRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRunner")
            .field("agent", &self.agent.name())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl AgentRunner {
    /// A runner of `agent` asking `model`; sampling options come from the
    /// agent's model configuration.
    pub fn new(agent: impl Into<Arc<Agent>>, model: impl Model) -> Self {
        let agent = agent.into();
        let options = ModelOptions {
            temperature: agent.model().and_then(|m| m.temperature),
            max_tokens: agent.model().and_then(|m| m.max_tokens),
            tool_choice: ToolChoice::Auto,
            parallel_tool_calls: true,
        };
        Self {
            agent,
            model: Arc::new(model),
            options,
            state_key: None,
            durable: None,
            engine: None,
        }
    }

    /// A runner of the same agent and model on `engine`: model answers,
    /// calls and states are kept in the engine's journal, and a run the
    /// engine replays gets its kept answers back (see [`engine`]). Made per
    /// run by the engine's integration (for Restate, per invocation); an
    /// engine takes the place of a store.
    #[must_use]
    pub fn on_engine(&self, engine: Arc<dyn Engine>) -> Self {
        Self {
            agent: Arc::clone(&self.agent),
            model: Arc::clone(&self.model),
            options: self.options.clone(),
            state_key: self.state_key.clone(),
            durable: None,
            engine: Some(engine),
        }
    }

    /// Writes every run to `store` at each step boundary, under this
    /// runner's lease: a run that waits can then be resumed by any process
    /// with the same store ([`AgentRunner::resume_stored`]), and a run whose
    /// process died is taken over once its lease has run out. See
    /// [`store`] for what is written when.
    #[must_use]
    pub fn with_store(mut self, store: impl Into<Arc<dyn RunStore>>) -> Self {
        self.durable = Some(Durable::new(store.into()));
        self
    }

    /// Names this process in the leases it takes (by default host, process
    /// id and start time). Two processes must never share a name.
    #[must_use]
    pub fn with_holder(mut self, holder: impl Into<String>) -> Self {
        if let Some(durable) = &mut self.durable {
            durable.holder = holder.into();
        }
        self
    }

    /// How long a lease lasts without a write (by default
    /// [`store::DEFAULT_LEASE`]): a run whose process died is taken over
    /// that long after its last step at most. Longer than the slowest step.
    #[must_use]
    pub fn with_lease(mut self, lease: std::time::Duration) -> Self {
        if let Some(durable) = &mut self.durable {
            durable.lease = lease;
        }
        self
    }

    /// The store runs are written to, if any.
    #[must_use]
    pub fn store(&self) -> Option<&Arc<dyn RunStore>> {
        self.durable.as_ref().map(|d| &d.store)
    }

    /// Records a person's decision for one waiting call of a stored run,
    /// from any process; [`AgentRunner::resume_stored`] then continues the
    /// run once every waiting call has one.
    ///
    /// # Errors
    /// [`RunError::NoStore`] without a store; [`RunError::Store`] when the
    /// run is not stored or `call_id` does not wait in it.
    pub async fn decide(
        &self,
        run_id: &RunId,
        call_id: &str,
        decision: ApprovalDecision,
    ) -> Result<(), RunError> {
        let durable = self.durable.as_ref().ok_or(RunError::NoStore)?;
        durable.store.decide(run_id, call_id, &decision).await?;
        Ok(())
    }

    /// Continues the stored run `cx` names: a run that waits, with the
    /// decisions recorded for it ([`AgentRunner::decide`]); or a run whose
    /// process died (its lease ran out), from its last step boundary:
    /// calls it left without a result run again when their tool is
    /// idempotent or read-only, and are reported to the model as
    /// interrupted otherwise.
    ///
    /// # Errors
    /// [`RunError::NoStore`] without a store; [`RunError::Store`] when the
    /// run is not stored, has finished, or another process drives it
    /// ([`StoreError::Held`]); [`RunError::MissingDecision`] when a waiting
    /// call has no decision yet (the run keeps waiting); and what
    /// [`AgentRunner::resume`] refuses.
    pub async fn resume_stored(&self, cx: &RunContext) -> Result<RunOutcome, RunError> {
        let durable = self.durable.as_ref().ok_or(RunError::NoStore)?;
        let stored = durable
            .store
            .acquire(&cx.run_id, &durable.holder, durable.lease)
            .await?;
        let mut journal = Some(Journal::new(durable, stored.version));
        if stored.status == RunStatus::Running {
            let outcome = self.take_over(stored.state, cx, &mut journal).await?;
            return self.hand_out(outcome, &mut journal).await;
        }
        let state = stored.state.clone();
        match self
            .resume_with(stored.state, stored.decisions, cx, &mut journal)
            .await
        {
            // Nothing ran: the run waits as before, for whoever comes next.
            Err(err @ (RunError::MissingDecision { .. } | RunError::UnknownDecision { .. })) => {
                durable::save(&mut journal, &state, RunStatus::Waiting).await?;
                Err(err)
            }
            other => other,
        }
    }

    /// Seals every state this runner hands out with `key`, and resumes
    /// only states that carry a seal of `key` over exactly what they hold.
    /// Give every process that resumes the same runs the same key when
    /// states are kept where someone could edit them.
    #[must_use]
    pub fn with_state_key(mut self, key: StateKey) -> Self {
        self.state_key = Some(key);
        self
    }

    /// A runner of `agent` asking the model its configuration names,
    /// through the matching adapter (`openai_chat` and `openai_responses`
    /// with feature `openai`, `anthropic` with feature `anthropic`).
    ///
    /// # Errors
    /// [`RunError::Model`] when the agent names no model, names one whose
    /// adapter is not built in, or its key variable is not set.
    pub fn connect(agent: impl Into<Arc<Agent>>) -> Result<Self, RunError> {
        let agent = agent.into();
        let Some(config) = agent.model() else {
            return Err(ModelError::new(
                "the agent names no `model`; give it one (`Agent::builder(..).model(..)`, or a `model` section in its file), or build the runner with `AgentRunner::new(agent, model)`",
            )
            .into());
        };
        let model = config.connect()?;
        Ok(Self::new(agent, model))
    }

    /// The agent.
    #[must_use]
    pub fn agent(&self) -> &Arc<Agent> {
        &self.agent
    }

    /// Starts a run with the person's `input`.
    ///
    /// # Errors
    /// [`RunError`] when the model fails or the tool context cannot be made;
    /// the run is finished (`run.finished` hooks ran) either way.
    pub async fn run(
        &self,
        input: impl Into<String>,
        cx: &RunContext,
    ) -> Result<RunOutcome, RunError> {
        let tools_cx = self.tool_context(cx, &[])?;
        let state = RunState {
            version: RUN_STATE_VERSION,
            agent: self.agent.name().to_owned(),
            run_id: cx.run_id.clone(),
            step: 0,
            messages: vec![Message::User { text: input.into() }],
            finished: Vec::new(),
            pending: Vec::new(),
            disclosed: Vec::new(),
            usage: Usage::default(),
            seal: None,
        };
        // Stored before anything runs: a run id already taken is refused
        // before `run.started`.
        let mut journal = match &self.durable {
            Some(durable) => {
                let version = durable
                    .store
                    .create(&state, &durable.holder, durable.lease)
                    .await?;
                Some(Journal::new(durable, version))
            }
            None => None,
        };
        self.agent.executor().start_run(&tools_cx).await;
        let outcome = self.drive(state, cx, &mut journal).await?;
        self.hand_out(outcome, &mut journal).await
    }

    /// Makes `outcome`'s state the one that resumes its run: remembered
    /// when the run waits, sealed when the runner has a key, and written
    /// (waiting, or finished) when it has a store.
    async fn hand_out(
        &self,
        mut outcome: RunOutcome,
        journal: &mut Option<Journal<'_>>,
    ) -> Result<RunOutcome, RunError> {
        let waits = matches!(outcome, RunOutcome::Waiting(_));
        let state = outcome.state_mut();
        state.seal = None;
        if waits {
            binding::remember(self.agent.ledger(), state);
        }
        if let Some(key) = &self.state_key {
            key.seal(state);
        }
        let status = if waits {
            RunStatus::Waiting
        } else {
            RunStatus::Finished
        };
        self.keep(journal, outcome.state(), status).await?;
        Ok(outcome)
    }

    /// Writes `state` to the run's store and engine, when it has them.
    async fn keep(
        &self,
        journal: &mut Option<Journal<'_>>,
        state: &RunState,
        status: RunStatus,
    ) -> Result<(), RunError> {
        durable::save(journal, state, status).await?;
        if let Some(engine) = &self.engine {
            engine.save(state, status).await.map_err(RunError::Engine)?;
        }
        Ok(())
    }

    /// Continues a run that waited, with one decision per waiting call (by
    /// call id). Calls that finished before the pause keep their results and
    /// never run again; a denied call gives the model the denial. An approval
    /// runs exactly the call that was shown: if the tool, its arguments or
    /// the policy changed since, the executor refuses it at the gate.
    ///
    /// # Errors
    /// [`RunError::WrongState`] for a state of another agent or version,
    /// [`RunError::StateMismatch`] for a state that was edited, belongs to
    /// another run, or resumed its pause already (see the binding rules in
    /// [`RunState`]),
    /// [`RunError::MissingDecision`] / [`RunError::UnknownDecision`] when
    /// the decisions do not match the waiting calls, [`RunError::Runtime`]
    /// when an approval no longer matches its call; nothing runs then.
    ///
    /// A runner with a store resumes a state only while it is the one
    /// stored, and writes the run on as it goes; see
    /// [`AgentRunner::resume_stored`] for decisions recorded in the store.
    pub async fn resume(
        &self,
        state: RunState,
        decisions: impl IntoIterator<Item = (String, ApprovalDecision)>,
        cx: &RunContext,
    ) -> Result<RunOutcome, RunError> {
        let Some(durable) = &self.durable else {
            return self.resume_with(state, decisions, cx, &mut None).await;
        };
        let stored = durable
            .store
            .acquire(&state.run_id, &durable.holder, durable.lease)
            .await?;
        let mut journal = Some(Journal::new(durable, stored.version));
        if stored.status != RunStatus::Waiting || stored.state != state {
            let why = "it is not the state the store holds for the run (an older pause, or an edit); resume with `resume_stored`".to_owned();
            durable::save(&mut journal, &stored.state, stored.status).await?;
            return Err(RunError::StateMismatch {
                run_id: state.run_id,
                why,
            });
        }
        let outcome = self.resume_with(state, decisions, cx, &mut journal).await;
        if outcome.is_err() {
            // Nothing ran: the run waits as before.
            durable::save(&mut journal, &stored.state, RunStatus::Waiting).await?;
        }
        outcome
    }

    async fn resume_with(
        &self,
        mut state: RunState,
        decisions: impl IntoIterator<Item = (String, ApprovalDecision)>,
        cx: &RunContext,
        journal: &mut Option<Journal<'_>>,
    ) -> Result<RunOutcome, RunError> {
        if state.version != RUN_STATE_VERSION || state.agent != self.agent.name() {
            return Err(RunError::WrongState {
                saved: format!("agent `{}` (state version {})", state.agent, state.version),
                running: format!(
                    "agent `{}` (state version {RUN_STATE_VERSION})",
                    self.agent.name()
                ),
            });
        }
        let mut decisions: FxHashMap<String, ApprovalDecision> = decisions.into_iter().collect();
        for pending in &state.pending {
            if !decisions.contains_key(&pending.call.id) {
                return Err(RunError::MissingDecision {
                    call_id: pending.call.id.clone(),
                });
            }
        }
        if let Some(extra) = decisions
            .keys()
            .find(|id| !state.pending.iter().any(|p| &p.call.id == *id))
        {
            return Err(RunError::UnknownDecision {
                waiting: store::waiting_calls(&state),
                call_id: extra.clone(),
            });
        }
        let seal = state.seal.take();
        if let Some(key) = &self.state_key {
            key.verify(&state, seal.as_deref())
                .map_err(|why| RunError::StateMismatch {
                    run_id: state.run_id.clone(),
                    why: why.to_owned(),
                })?;
        }
        binding::check(
            self.agent.ledger(),
            &self.agent.registry(),
            &state,
            &cx.run_id,
        )?;
        self.restore(&state);
        let tools_cx = self.tool_context(cx, &state.disclosed)?;
        let mut results: FxHashMap<String, ToolResult> = std::mem::take(&mut state.finished)
            .into_iter()
            .map(|f| (f.call_id, f.result))
            .collect();
        for pending in std::mem::take(&mut state.pending) {
            let decision = decisions
                .remove(&pending.call.id)
                .unwrap_or_else(|| ApprovalDecision::deny("no decision"));
            let result = self.run_decided(pending, decision, &tools_cx).await?;
            results.insert(result.0, result.1);
        }
        if let Some(Message::Assistant { tool_calls, .. }) = state.messages.last() {
            let answers = tool_messages(tool_calls, &mut results);
            self.append(&mut state, answers);
            self.keep(journal, &state, RunStatus::Running).await?;
        }
        let outcome = self.drive(state, cx, journal).await?;
        self.hand_out(outcome, journal).await
    }

    /// What a run keeps in this process's ledger besides its state: the
    /// tools it disclosed, and the full text of its results.
    fn restore(&self, state: &RunState) {
        if let Some(discovery) = self.agent.discovery() {
            discovery.restore_disclosed(&state.run_id, &state.disclosed);
        }
        if self.agent.results_budget().is_some() {
            history::record_all(self.agent.ledger(), &state.run_id, &state.messages);
        }
    }

    /// Takes over a run whose process died: the calls of its last step go
    /// through the executor again, where the run's journal answers for
    /// those that ran (their result) or were cut off (interrupted); then
    /// the run goes on.
    async fn take_over(
        &self,
        mut state: RunState,
        cx: &RunContext,
        journal: &mut Option<Journal<'_>>,
    ) -> Result<RunOutcome, RunError> {
        if state.run_id != cx.run_id {
            return Err(RunError::StateMismatch {
                run_id: state.run_id,
                why: format!(
                    "the run context names run `{}`; resume with the context of the stored run",
                    cx.run_id
                ),
            });
        }
        self.restore(&state);
        let open_calls = last_calls(&state).to_vec();
        if !open_calls.is_empty() {
            // Through the executor again: the journal answers for the calls
            // that ran or were interrupted; the rest run now.
            let (_, tools_cx) = self.offer(&state, cx)?;
            let outcomes = self
                .agent
                .executor()
                .execute_batch(open_calls.clone(), &tools_cx)
                .await;
            let mut results = FxHashMap::default();
            for (call, outcome) in open_calls.iter().zip(outcomes) {
                match outcome {
                    ToolOutcome::Finished { call_id, result } => {
                        results.insert(call_id, result);
                    }
                    ToolOutcome::Waiting(request) => state.pending.push(PendingCall {
                        call: call.clone(),
                        request: *request,
                    }),
                }
            }
            if !state.pending.is_empty() {
                state.finished = open_calls
                    .iter()
                    .filter_map(|call| {
                        let result = results.remove(&call.id)?;
                        Some(FinishedCall {
                            call_id: call.id.clone(),
                            result,
                        })
                    })
                    .collect();
                return Ok(RunOutcome::Waiting(state));
            }
            let answers = tool_messages(&open_calls, &mut results);
            self.append(&mut state, answers);
            self.keep(journal, &state, RunStatus::Running).await?;
        }
        self.drive(state, cx, journal).await
    }

    /// The outcome of one waiting call under `decision`.
    async fn run_decided(
        &self,
        pending: PendingCall,
        decision: ApprovalDecision,
        cx: &ToolContext,
    ) -> Result<(String, ToolResult), RunError> {
        let executor = self.agent.executor();
        let call_id = pending.call.id.clone();
        let outcome = match executor.resume(&call_id, decision.clone(), cx).await {
            Ok(outcome) => outcome,
            // Another process paused this run: the call is admitted again,
            // and its fresh request must be the one the person decided on.
            Err(RuntimeError::NoPendingApproval { .. }) => {
                if let ApprovalDecision::Deny { reason } = &decision {
                    let result = ToolResult::error(
                        iris_core::ToolErrorKind::PermissionDenied,
                        format!("the user denied this call: {reason}"),
                    );
                    return Ok((call_id, result));
                }
                match executor.execute_one(pending.call, cx).await {
                    ToolOutcome::Waiting(request)
                        if request.approval_id == pending.request.approval_id =>
                    {
                        executor.resume(&call_id, decision, cx).await?
                    }
                    ToolOutcome::Waiting(_) => {
                        // Drop the fresh wait: the approval was for another call.
                        let _ = executor
                            .resume(&call_id, ApprovalDecision::deny("approval mismatch"), cx)
                            .await;
                        return Err(RunError::Runtime(RuntimeError::ApprovalMismatch {
                            call_id,
                        }));
                    }
                    finished @ ToolOutcome::Finished { .. } => finished,
                }
            }
            Err(other) => return Err(other.into()),
        };
        match outcome {
            ToolOutcome::Finished { call_id, result } => Ok((call_id, result)),
            ToolOutcome::Waiting(request) => {
                Err(RunError::Runtime(RuntimeError::ApprovalMismatch {
                    call_id: request.call_id,
                }))
            }
        }
    }

    /// The model's answer to the run so far, offering `tools`; `None` when
    /// the run was cancelled while it was asked.
    async fn answer(
        &self,
        state: &RunState,
        tools: &[ToolSpec],
        cx: &RunContext,
    ) -> Option<Result<ModelResponse, ModelError>> {
        let messages = match self.agent.results_budget() {
            Some(budget) => {
                history::within_budget(&state.messages, budget, |tool| self.is_read_only(tool))
            }
            None => std::borrow::Cow::Borrowed(state.messages.as_slice()),
        };
        let request = ModelRequest {
            instructions: self.agent.instructions(),
            messages: &messages,
            tools,
            options: &self.options,
        };
        let executor = self.agent.executor();
        let run_id = &state.run_id;
        // Observers see text as it arrives; calls run once complete.
        let on_delta = move |delta: ModelDelta<'_>| {
            if let ModelDelta::Text(text) = delta {
                executor.emit_event(iris_runtime::RunEvent::ModelText {
                    run_id: run_id.clone(),
                    text: text.to_owned(),
                });
            }
        };
        // Deltas only feed observers: with none, the whole answer is
        // enough, and a model that streams need not cut it up.
        let mut answer = if executor.has_observers() {
            self.model.complete_streaming(request, &on_delta)
        } else {
            self.model.complete(request)
        };
        if let Some(engine) = &self.engine {
            answer = engine.answer(state.step + 1, answer);
        }
        tokio::select! {
            response = answer => Some(response),
            () = cx.cancel.cancelled() => None,
        }
    }

    /// Steps until the model answers without calls, a call waits, the step
    /// limit, cancellation or an error.
    async fn drive(
        &self,
        mut state: RunState,
        cx: &RunContext,
        journal: &mut Option<Journal<'_>>,
    ) -> Result<RunOutcome, RunError> {
        let max_steps = self.agent.max_steps().unwrap_or(DEFAULT_MAX_STEPS);
        loop {
            if cx.cancel.is_cancelled() {
                return Ok(self.end(RunOutcome::Cancelled(state), cx).await);
            }
            if state.step >= max_steps {
                return Ok(self.end(RunOutcome::MaxSteps(state), cx).await);
            }
            let (tools, tools_cx) = self.offer(&state, cx)?;
            let Some(response) = self.answer(&state, &tools, cx).await else {
                return Ok(self.end(RunOutcome::Cancelled(state), cx).await);
            };
            let response = match response {
                Ok(response) => response,
                Err(err) => {
                    self.end(RunOutcome::Cancelled(state), cx).await;
                    return Err(err.into());
                }
            };
            state.step += 1;
            state.usage += response.usage;
            let calls = response.tool_calls;
            if calls.is_empty() {
                state.messages.push(Message::Assistant {
                    text: response.text.clone(),
                    tool_calls: calls,
                });
                let text = response.text.unwrap_or_default();
                return Ok(self.end(RunOutcome::Finished { text, state }, cx).await);
            }
            // The answer is kept before any of its calls runs: a process
            // that takes the run over knows which calls were made. The one
            // copy of the calls: the executor takes one, the history keeps
            // the other.
            state.messages.push(Message::Assistant {
                text: response.text,
                tool_calls: calls.clone(),
            });
            self.keep(journal, &state, RunStatus::Running).await?;
            let outcomes = self.agent.executor().execute_batch(calls, &tools_cx).await;
            let calls = last_calls(&state);
            // In call order; a call's id moves from its outcome.
            let mut finished = Vec::with_capacity(calls.len());
            let mut pending = Vec::new();
            for (call, outcome) in calls.iter().zip(outcomes) {
                match outcome {
                    ToolOutcome::Finished { call_id, result } => {
                        finished.push(FinishedCall { call_id, result });
                    }
                    ToolOutcome::Waiting(request) => pending.push(PendingCall {
                        call: call.clone(),
                        request: *request,
                    }),
                }
            }
            if let Some(discovery) = self.agent.discovery() {
                state.disclosed = discovery.disclosed(&state.run_id);
            }
            if !pending.is_empty() {
                state.finished = finished;
                state.pending = pending;
                return Ok(RunOutcome::Waiting(state));
            }
            // Every call finished, so results pair with calls in order.
            let answers = last_calls(&state)
                .iter()
                .zip(finished)
                .map(|(call, finished)| Message::Tool {
                    call_id: finished.call_id,
                    tool: call.name.clone(),
                    result: finished.result,
                })
                .collect();
            self.append(&mut state, answers);
            self.keep(journal, &state, RunStatus::Running).await?;
        }
    }

    /// The tools this step offers, and the context its calls run in
    /// (offering the same tools).
    fn offer(
        &self,
        state: &RunState,
        cx: &RunContext,
    ) -> Result<(Vec<ToolSpec>, ToolContext), RunError> {
        let (tools, offered): (Vec<ToolSpec>, Vec<iris_core::ToolName>) =
            match self.agent.discovery() {
                Some(discovery) => {
                    let request = discovery.request(&self.agent.registry().view(), &state.run_id);
                    (request.specs, request.offered)
                }
                None => self
                    .agent
                    .registry()
                    .tools()
                    .map(|t| {
                        let definition = t.definition_dyn();
                        (definition.spec(), definition.name().clone())
                    })
                    .unzip(),
            };
        let mut builder = self
            .agent
            .context_builder(&cx.workspace, state.run_id.clone())
            .map_err(RunError::Context)?
            .offered(offered)
            .extension(cx.cancel.clone());
        if let Some(journaled) = self.journaled() {
            builder = builder.extension(journaled);
        }
        Ok((tools, builder.build()))
    }

    /// A context for calls outside a step (run events, resumed calls),
    /// offering the eager tools and those disclosed.
    fn tool_context(
        &self,
        cx: &RunContext,
        disclosed: &[iris_core::ToolName],
    ) -> Result<ToolContext, RunError> {
        let registry = self.agent.registry();
        let offered = registry
            .tools()
            .map(|t| t.definition_dyn())
            .filter(|d| d.exposure() == iris_core::Exposure::Eager || disclosed.contains(d.name()))
            .map(|d| d.name().clone());
        let mut builder = self
            .agent
            .context_builder(&cx.workspace, cx.run_id.clone())
            .map_err(RunError::Context)?
            .offered(offered)
            .extension(cx.cancel.clone());
        if let Some(journaled) = self.journaled() {
            builder = builder.extension(journaled);
        }
        Ok(builder.build())
    }

    /// The journal of the run's calls: its store's or its engine's.
    fn journaled(&self) -> Option<iris_runtime::journal::Journaled> {
        if let Some(engine) = &self.engine {
            return Some(iris_runtime::journal::Journaled(engine.calls()));
        }
        self.durable.as_ref().map(Durable::journaled)
    }

    /// Appends the results of `calls` and keeps their full text for
    /// `read_history` when old ones may be shortened.
    fn append(&self, state: &mut RunState, answers: Vec<Message>) {
        let first = state.messages.len();
        state.messages.extend(answers);
        if self.agent.results_budget().is_some() {
            history::record_all(self.agent.ledger(), &state.run_id, &state.messages[first..]);
        }
    }

    /// Whether `tool` (as the model called it) only observes.
    fn is_read_only(&self, tool: &str) -> bool {
        self.agent
            .registry()
            .resolve(tool)
            .is_some_and(|t| t.definition_dyn().capabilities().is_read_only())
    }

    /// Announces the real end of the run and ends it in the ledger (its
    /// call ids, disclosures, history and file observations go with it).
    async fn end(&self, outcome: RunOutcome, cx: &RunContext) -> RunOutcome {
        match self.tool_context(cx, &[]) {
            Ok(tools_cx) => self.agent.executor().finish_run(&tools_cx).await,
            Err(_) => self.agent.ledger().finish_run(&cx.run_id),
        }
        outcome
    }
}

/// The calls of the history's last step (none when it ends otherwise).
fn last_calls(state: &RunState) -> &[ToolUseBlock] {
    match state.messages.last() {
        Some(Message::Assistant { tool_calls, .. }) => tool_calls,
        _ => &[],
    }
}

/// One `Tool` message per call, in call order; a call without a result
/// (which the executor never leaves) still gets one, so the model never
/// sees a call without an output.
fn tool_messages(
    calls: &[ToolUseBlock],
    results: &mut FxHashMap<String, ToolResult>,
) -> Vec<Message> {
    calls
        .iter()
        .map(|call| {
            let result = results.remove(&call.id).unwrap_or_else(|| {
                ToolResult::error(
                    iris_core::ToolErrorKind::Internal,
                    "this call got no result; try it again",
                )
            });
            Message::Tool {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                result,
            }
        })
        .collect()
}
