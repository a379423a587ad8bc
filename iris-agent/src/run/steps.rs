//! The loop: a run starts, steps until the model answers without calls, a
//! call waits, the step limit, cancellation or an error, and ends.

use iris_model::{FinishReason, Message, Usage};

use super::calls::{StepCalls, last_calls, paired};
use super::identity;
use super::questions::{Steps, asked_in};
use super::{AgentRunner, RunContext};
use crate::durable::Journal;
use crate::store::RunStatus;
use crate::{RUN_STATE_VERSION, RunError, RunOutcome, RunState};

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
        self.traced(cx, Box::pin(self.start_untraced(messages, skills, cx)))
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
        if self.place.is_root() {
            // A run started again under an id it had is a new run: the
            // pauses consumed under that id were the old run's.
            self.agent.ledger().forget_pauses(&cx.run_id);
        }
        self.agent.executor().start_run(&tools_cx).await;
        let cx = &cx.counting_questions(|| asked_in(&state, Steps::All));
        let outcome = self.drive(state, cx, &mut journal).await?;
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
        let max_steps = self.max_steps();
        loop {
            if cx.cancel.is_cancelled() {
                return Ok(self.end(RunOutcome::Cancelled(state), cx).await);
            }
            // A child's token budget ends it as its step limit does.
            if state.step >= max_steps || self.out_of_tokens(&state.usage) {
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
            let calls = identity::owned(self.agent.ledger(), &state, response.tool_calls);
            if calls.is_empty() {
                state.messages.push(Message::Assistant {
                    text: response.text.clone(),
                    tool_calls: calls,
                });
                let text = response.text.unwrap_or_default();
                let outcome = if response.finish == FinishReason::Length {
                    RunOutcome::CutOff { text, state }
                } else {
                    RunOutcome::Finished { text, state }
                };
                return Ok(self.end(outcome, cx).await);
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
            } = self.run_step(&state, calls, &tools_cx, cx).await;
            state.skills = active_skills;
            for child in children {
                state.keep_child(Some(child));
            }
            if let Some(discovery) = self.agent.discovery() {
                let disclosed = discovery.disclosed(&state.run_id);
                state.disclosed = match &self.engine {
                    // A replay does not run a kept `tool_search` again: what
                    // it disclosed comes back from the engine.
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
            }
            if !waiting.is_empty() {
                state.finished = finished;
                state.waiting = waiting;
                return Ok(RunOutcome::Waiting(state));
            }
            // Every call finished: each result goes with the call of its
            // id.
            let answers = paired(last_calls(&state), finished);
            self.append(&mut state, answers);
            self.keep(journal, &state, RunStatus::Running).await?;
        }
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
}
