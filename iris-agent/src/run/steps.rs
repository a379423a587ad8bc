//! The loop: a run starts, steps until the model answers without calls, a
//! call waits, the step limit, cancellation or an error, and ends; each
//! step offers its tools (the agent's and run control's), asks the model,
//! and hands its calls on ([`calls`](super::calls)).

use iris_core::{ToolContext, ToolSpec};
use iris_model::{
    FinishReason, Message, Model, ModelDelta, ModelError, ModelRequest, ModelResponse, Usage,
};
use tracing::Instrument as _;

use super::calls::{StepCalls, last_calls, paired};
use super::control::Turn;
use super::control::questions::{Steps, asked_in};
use super::identity;
use super::model_turn::{self, TurnRequest};
use super::spend;
use super::{AgentRunner, RunContext};
use crate::durable::{Durable, Journal};
use crate::store::RunStatus;
use crate::{RUN_STATE_VERSION, RunError, RunOutcome, RunState, history};

impl AgentRunner {
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
        self.start(vec![Message::User { text: input.into() }], Vec::new(), cx)
            .await
    }

    /// Starts a run with the person's `input` whose final answer must be a
    /// `T`, and returns it: the schema of `T` goes with each request as the
    /// provider's structured output (over the runner's and agent's own
    /// [`Output`](crate::Output)), and an answer that does not fit goes back
    /// to the model with its faults, at most
    /// [`Output::DEFAULT_RETRIES`](crate::Output::DEFAULT_RETRIES) times.
    ///
    /// ```no_run
    /// # async fn extract(runner: &iris_agent::AgentRunner, cx: &iris_agent::RunContext) -> Result<(), iris_agent::RunError> {
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Invoice {
    ///     customer: String,
    ///     total_cents: u64,
    /// }
    ///
    /// let invoice: Invoice = runner.run_for("Read invoice.txt and give me its customer and total.", cx).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// What [`AgentRunner::run`] returns, and [`RunError::Output`] when the
    /// run ended without a `T` (it waits for a person, ran out of steps,
    /// or its last answer did not fit), with how it ended.
    pub async fn run_for<T>(&self, input: impl Into<String>, cx: &RunContext) -> Result<T, RunError>
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema + 'static,
    {
        let runner = self.clone().with_output(crate::Output::of::<T>());
        let outcome = runner.run(input, cx).await?;
        outcome.output::<T>().map_err(|error| RunError::Output {
            error,
            outcome: Box::new(outcome),
        })
    }

    /// Starts a run whose history begins with `messages`, inside its
    /// `invoke_agent` span.
    pub(super) async fn start(
        &self,
        messages: Vec<Message>,
        skills: Vec<String>,
        cx: &RunContext,
    ) -> Result<RunOutcome, RunError> {
        // Boxed: a run's future holds a whole step's, and a host's own
        // futures stay small.
        super::spans::traced(
            self,
            cx,
            Box::pin(self.start_untraced(messages, skills, cx)),
        )
        .await
    }

    /// Starts a run whose history begins with `messages`, the skills
    /// `skills` active (preloaded into that history).
    async fn start_untraced(
        &self,
        messages: Vec<Message>,
        skills: Vec<String>,
        cx: &RunContext,
    ) -> Result<RunOutcome, RunError> {
        let tools_cx = self.tool_context(cx, &[])?;
        let state = RunState {
            version: RUN_STATE_VERSION,
            agent: self.agent.name().to_owned(),
            run_id: cx.run_id.clone(),
            step: 0,
            messages,
            finished: Vec::new(),
            waiting: Vec::new(),
            disclosed: Vec::new(),
            skills,
            usage: Usage::default(),
            children: Vec::new(),
            output: None,
            output_faults: 0,
            spent: crate::Spent::default(),
            seal: None,
        };
        // A budget that cannot be kept here is refused before anything is
        // stored or runs.
        let cx = &cx
            .counting_questions(|| asked_in(&state, Steps::All))
            .counting_spend(
                &self.spending(),
                self.engine.is_none(),
                crate::Spent::default,
            )?;
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
        if self.place.is_root() {
            // A run started again under an id it had is a new run: the
            // pauses consumed under that id were the old run's.
            self.agent.ledger().forget_pauses(&cx.run_id);
        }
        // `run.started` guards see the task they may refuse.
        let task = || Some(serde_json::json!({"messages": state.messages}));
        if let Some(refusal) = self.agent.executor().start_run_with(&tools_cx, task).await {
            // An input guardrail: the model is never asked.
            let outcome = self.end(refused(refusal, state), cx).await;
            return self.hand_out(outcome, &mut journal).await;
        }
        let outcome = self.drive(state, cx, &mut journal).await?;
        let outcome = self.spend_noted(outcome, cx);
        self.hand_out(outcome, &mut journal).await
    }

    /// Steps until the model answers without calls, a call waits, the step
    /// limit, cancellation or an error.
    pub(super) async fn drive(
        &self,
        mut state: RunState,
        cx: &RunContext,
        journal: &mut Option<Journal<'_>>,
    ) -> Result<RunOutcome, RunError> {
        let max_steps = self.place.max_steps(&self.agent);
        let executor = self.agent.executor();
        // Read once per drive: what the hooks see is built only for them.
        let asks = executor.watches_model_requests(self.place.guards.as_ref());
        let held = executor.watches_model_answers(self.place.guards.as_ref());
        loop {
            if cx.cancel.is_cancelled() {
                return Ok(self.end(RunOutcome::Cancelled(state), cx).await);
            }
            // A child's token budget ends it as its step limit does.
            if state.step >= max_steps || self.place.out_of_tokens(&state.usage) {
                return Ok(self.end(RunOutcome::MaxSteps(state), cx).await);
            }
            let (mut request, tools_cx) = match self.turn(&state, cx, asks).await? {
                Ok(turn) => turn,
                Err(refusal) => return Ok(self.end(refused(refusal, state), cx).await),
            };
            // A request the budget has no room for is not sent.
            let reservation = match self.reserve(&state, &mut request, cx) {
                Ok(reservation) => reservation,
                Err(over) => return Ok(self.end(spend::over_budget(over, state), cx).await),
            };
            let Some((response, judged)) = self.answer(&state, &request, held, cx).await else {
                return Ok(self.end(RunOutcome::Cancelled(state), cx).await);
            };
            let mut response = match response {
                Ok(response) => response,
                Err(err) => {
                    self.end(RunOutcome::Cancelled(state), cx).await;
                    return Err(err.into());
                }
            };
            state.step += 1;
            state.usage += response.usage;
            spend::settle(reservation, &response, &mut state, cx);
            if held {
                let judged = self
                    .kept_verdict(state.step, judged, &state.run_id, &mut response)
                    .await?;
                match model_turn::after(executor, judged, &mut state, &response, held) {
                    // An output guardrail: nothing of the answer is acted
                    // on or recorded.
                    Err(refusal) => return Ok(self.end(refused(refusal, state), cx).await),
                    // Sent back with feedback: asked again.
                    Ok(true) => {
                        self.keep(journal, &state, RunStatus::Running).await?;
                        continue;
                    }
                    Ok(false) => {}
                }
            }
            let calls = identity::owned(self.agent.ledger(), &state, response.tool_calls);
            // Calls the budget has no room for: none of the step's runs,
            // and the answer that made them is not recorded.
            if let Err(over) = spend::take_calls(calls.len(), cx) {
                return Ok(self.end(spend::over_budget(over, state), cx).await);
            }
            spend::note_spent(&mut state, cx);
            if calls.is_empty() {
                state.messages.push(Message::Assistant {
                    text: response.text.clone(),
                    tool_calls: calls,
                });
                let text = response.text.unwrap_or_default();
                match self.final_answer(text, response.finish, state) {
                    Ended::Run(outcome) => return Ok(self.end(outcome, cx).await),
                    Ended::Again(again) => {
                        state = again;
                        self.keep(journal, &state, RunStatus::Running).await?;
                        continue;
                    }
                }
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
            let StepCalls {
                finished,
                waiting,
                children,
                active_skills,
            } = self
                .run_step(&state, calls, request.narrowed(), &tools_cx, cx)
                .await;
            state.skills = active_skills;
            for child in children {
                state.keep_child(Some(child));
            }
            self.note_disclosed(&mut state).await?;
            if !waiting.is_empty() {
                state.finished = finished;
                state.waiting = waiting;
                return Ok(RunOutcome::Waiting(state));
            }
            // Every call finished: each result goes with the call of its
            // id.
            let answers = paired(last_calls(&state), finished);
            self.append(&mut state, answers);
            // What the step's child agents spent, kept with it.
            spend::note_spent(&mut state, cx);
            self.keep(journal, &state, RunStatus::Running).await?;
        }
    }

    /// The turn's request and the context of its calls, as the
    /// `model.before` hooks steered them when there are some (`asks`), or
    /// the hook that refused the turn.
    async fn turn(
        &self,
        state: &RunState,
        cx: &RunContext,
        asks: bool,
    ) -> Result<Result<(TurnRequest<'_>, ToolContext), iris_runtime::hooks::Denial>, RunError> {
        let (tools, mut tools_cx) = self.offer(state, cx)?;
        let request = TurnRequest::new(tools, self.agent.instructions(), &self.options);
        if !asks {
            return Ok(Ok((request, tools_cx)));
        }
        let (executor, guards) = (self.agent.executor(), self.place.guards.as_ref());
        let registry = self.agent.registry();
        Ok(
            match model_turn::before(executor, guards, state, request, &registry).await {
                Err(refusal) => Err(refusal),
                Ok((steered, offered)) => {
                    if let Some(offered) = offered {
                        tools_cx = self.context_offering(cx, state.run_id.clone(), offered)?;
                    }
                    Ok((steered, tools_cx))
                }
            },
        )
    }

    /// What the model's final answer `text` (no calls) ends the run as: cut
    /// off by its token limit, finished (with its output, when the run asks
    /// for one), or, for an answer that does not fit the output, the run
    /// with its faults told to the model, to go on (until the output's
    /// retries are spent: then the run ends without one).
    fn final_answer(&self, text: String, finish: FinishReason, mut state: RunState) -> Ended {
        if finish == FinishReason::Length {
            return Ended::Run(RunOutcome::CutOff { text, state });
        }
        let Some(output) = self.output() else {
            return Ended::Run(RunOutcome::Finished { text, state });
        };
        match output.check(&text) {
            Ok(value) => {
                state.output = Some(value);
                Ended::Run(RunOutcome::Finished { text, state })
            }
            Err(error) if state.output_faults < output.retry_count() => {
                // Back to the model with every fault located, as a tool's
                // arguments that do not fit are. An empty answer is kept as
                // a note: providers refuse an empty turn.
                if text.trim().is_empty()
                    && let Some(Message::Assistant { text: kept, .. }) = state.messages.last_mut()
                {
                    *kept = Some("(an empty answer)".to_owned());
                }
                state.output_faults += 1;
                state.messages.push(Message::User {
                    text: format!(
                        "Your answer is not the `{}` this task asks for: {error}. Answer again with only that JSON, every fault fixed.",
                        output.format().name()
                    ),
                });
                Ended::Again(state)
            }
            Err(error) => Ended::Run(RunOutcome::OutputInvalid { text, error, state }),
        }
    }

    /// Notes in `state` the tools its run disclosed so far. A replay on an
    /// engine does not run a kept `tool_search` again: what it disclosed
    /// comes back from the engine.
    async fn note_disclosed(&self, state: &mut RunState) -> Result<(), RunError> {
        let Some(discovery) = self.agent.discovery() else {
            return Ok(());
        };
        let disclosed = discovery.disclosed(&state.run_id);
        state.disclosed = match &self.engine {
            Some(engine) => {
                let kept = engine
                    .disclosed(state.step, disclosed)
                    .await
                    .map_err(RunError::Engine)?;
                discovery.restore_disclosed(&state.run_id, &kept);
                discovery.disclosed(&state.run_id)
            }
            None => disclosed,
        };
        Ok(())
    }

    /// Announces the real end of the run and ends it in the ledger (its
    /// call ids, disclosures, history and file observations go with it).
    pub(super) async fn end(&self, outcome: RunOutcome, cx: &RunContext) -> RunOutcome {
        match self.tool_context(cx, &[]) {
            Ok(tools_cx) => self.agent.executor().finish_run(&tools_cx).await,
            Err(_) => self.agent.ledger().finish_run(&cx.run_id),
        }
        outcome
    }

    /// What the `model.after` hooks made of step `step`'s answer: this
    /// attempt's verdict (`judged`, when the hooks judged it as it was
    /// asked for), kept by the engine, or on a replay the one the engine
    /// kept; the hooks judge the kept answer only when no verdict was kept
    /// (a crash between the two).
    async fn kept_verdict(
        &self,
        step: u32,
        judged: Option<model_turn::Judged>,
        run: &iris_core::RunId,
        response: &mut ModelResponse,
    ) -> Result<model_turn::Judged, RunError> {
        if let Some(engine) = &self.engine {
            let this = judged
                .as_ref()
                .map_or(serde_json::Value::Null, model_turn::kept);
            let kept = engine.judged(step, this).await.map_err(RunError::Engine)?;
            if let Some(kept) = model_turn::read_kept(&kept, response) {
                return Ok(kept);
            }
            if judged.is_none()
                && let Some(refused) = model_turn::refused_when_kept(response)
            {
                return Ok(refused);
            }
        }
        if let Some(judged) = judged {
            return Ok(judged);
        }
        let (executor, guards) = (self.agent.executor(), self.place.guards.as_ref());
        Ok(model_turn::judge(executor, guards, run, response).await)
    }

    /// The model's answer to the run so far, asked as `turn` says, with
    /// what the `model.after` hooks made of it when `held` (they judge it
    /// as it is asked for, so nothing of it streams to observers, is
    /// recorded in the trace or is kept by an engine before they passed
    /// it; `None` when an engine gave back a kept answer); `None` when the
    /// run was cancelled while it was asked.
    pub(super) async fn answer(
        &self,
        state: &RunState,
        turn: &TurnRequest<'_>,
        held: bool,
        cx: &RunContext,
    ) -> Option<(
        Result<ModelResponse, ModelError>,
        Option<model_turn::Judged>,
    )> {
        let messages = match self.agent.results_budget() {
            Some(budget) => {
                history::within_budget(&state.messages, budget, |tool| self.is_read_only(tool))
            }
            None => std::borrow::Cow::Borrowed(state.messages.as_slice()),
        };
        let request = ModelRequest {
            instructions: turn.instructions.as_deref(),
            messages: &messages,
            tools: &turn.tools,
            options: &turn.options,
            output: self.output().map(crate::Output::format),
        };
        let executor = self.agent.executor();
        let run_id = &state.run_id;
        let output = self.output();
        // The answer so far, read for a typed output's partial value.
        let so_far = std::sync::Mutex::new(String::new());
        // Observers see text as it arrives; calls run once complete.
        let on_delta = move |delta: ModelDelta<'_>| {
            if let ModelDelta::Text(text) = delta {
                executor.emit_event(iris_runtime::RunEvent::ModelText {
                    run_id: run_id.clone(),
                    text: text.to_owned(),
                });
                if let Some(output) = output {
                    let mut so_far = so_far
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    so_far.push_str(text);
                    if let Some(value) = output.partial(&so_far) {
                        executor.emit_event(iris_runtime::RunEvent::OutputPartial {
                            run_id: run_id.clone(),
                            value,
                        });
                    }
                }
            }
        };
        // Deltas only feed observers: with none, the whole answer is
        // enough, and a model that streams need not cut it up. Nor while a
        // `model.after` hook may redact the answer: observers hear it once
        // the hooks have passed it.
        let streaming = executor.has_observers() && !held;
        let (model, on_delta) = (&self.model, &on_delta);
        let judged = std::sync::Mutex::new(None);
        let judge_here = held && self.engine.is_some();
        let (verdict, guards) = (&judged, self.place.guards.as_ref());
        // The model is asked only when no engine keeps this step's answer.
        let ask = move || -> iris_core::BoxFuture<'_, Result<ModelResponse, ModelError>> {
            let asked = if streaming {
                model.complete_streaming(request, on_delta)
            } else {
                model.complete(request)
            };
            // Without an engine nothing keeps the answer: the hooks judge it
            // once it is back (no box around the model's future).
            if !judge_here {
                return asked;
            }
            Box::pin(async move {
                let mut response = asked.await?;
                let judged = model_turn::judge(executor, guards, run_id, &mut response).await;
                *verdict
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(judged);
                Ok(response)
            })
        };
        let span = super::spans::chat(self.model_config(), &request);
        if !turn.steered_by.is_empty() {
            span.record("iris.model.steered_by", turn.steered_by.join(","));
        }
        let answer = match &self.engine {
            Some(engine) => engine.answer(state.step + 1, Box::new(ask)),
            None => ask(),
        }
        .instrument(span.clone());
        let answered = tokio::select! {
            response = answer => Some(response),
            () = cx.cancel.cancelled() => None,
        };
        super::spans::chat_ended(&span, self.model_config(), answered.as_ref(), !held);
        let judged = judged
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        answered.map(|answered| (answered, judged))
    }

    /// The tools this step offers, and the context its calls run in
    /// (offering the same tools).
    pub(super) fn offer(
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
        let mut tools = tools;
        // Run control's own tools: never discovery candidates, never in
        // the executor's offer.
        let turn = Turn::new(self, state, cx);
        for owner in self.control.all() {
            owner.offer(&turn, &mut tools)?;
        }
        Ok((
            tools,
            self.context_offering(cx, state.run_id.clone(), offered)?,
        ))
    }

    /// A context for calls outside a step (run events, resumed calls),
    /// offering the eager tools and those disclosed.
    pub(super) fn tool_context(
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
        self.context_offering(cx, cx.run_id.clone(), offered)
    }

    /// The context for calls of `run` offering `offered`, with the run's
    /// cancellation and its call journal.
    fn context_offering(
        &self,
        cx: &RunContext,
        run: iris_core::RunId,
        offered: impl IntoIterator<Item = iris_core::ToolName>,
    ) -> Result<ToolContext, RunError> {
        let mut builder = self
            .agent
            .context_builder(&cx.workspace, run)
            .map_err(RunError::Context)?
            .offered(offered)
            .extension(cx.cancel.clone());
        if let Some(journaled) = self.journaled() {
            builder = builder.extension(journaled);
        }
        if let Some(ceiling) = &self.place.ceiling {
            // A child's calls answer to every agent above it too.
            builder = builder.extension(ceiling.clone());
        }
        if let Some(guards) = &self.place.guards {
            builder = builder.extension(guards.clone());
        }
        Ok(builder.build())
    }

    /// The journal of the run's calls: its store's or its engine's, or for
    /// a child its root's.
    pub(super) fn journaled(&self) -> Option<iris_runtime::journal::Journaled> {
        if let Some(engine) = &self.engine {
            return Some(iris_runtime::journal::Journaled(engine.calls()));
        }
        self.durable
            .as_ref()
            .map(Durable::journaled)
            .or_else(|| self.place.journal.clone())
    }

    /// Whether `tool` (as the model called it) only observes.
    pub(super) fn is_read_only(&self, tool: &str) -> bool {
        self.agent
            .registry()
            .resolve(tool)
            .is_some_and(|t| t.definition_dyn().capabilities().is_read_only())
    }
}

/// The outcome of a run a hook refused (`run.started`, `model.before` or
/// `model.after`), as it stood.
fn refused(refusal: iris_runtime::hooks::Denial, state: RunState) -> RunOutcome {
    tracing::info!(target: "iris::telemetry", hook = %refusal.hook, reason = %refusal.reason, "a hook refused the run");
    RunOutcome::Refused {
        hook: refusal.hook,
        reason: refusal.reason,
        state,
    }
}

/// Where a final answer leaves a run.
enum Ended {
    /// It ends so.
    Run(RunOutcome),
    /// It goes on from this state.
    Again(RunState),
}
