//! Resuming: a waiting run with its decisions, a stored run, or a run whose
//! process died, taken over.

use iris_core::{ToolResult, ToolUseBlock};
use rustc_hash::FxHashMap;

use iris_model::Message;
use iris_runtime::{Reply, ToolOutcome};

use super::calls::{last_calls, tool_messages};
use super::control::expired;
use super::control::questions::{Steps, asked_in};
use super::replies::checked_replies;
use super::{AgentRunner, RunContext};
use crate::durable::{self, Journal};
use crate::store::{self, RunStatus};
use crate::{
    FinishedCall, OLDEST_RUN_STATE_VERSION, RUN_STATE_VERSION, RunError, RunOutcome, RunState,
    WaitingItem, binding, history,
};

impl AgentRunner {
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
    /// Exactly-once needs that store: without one, the process that paused
    /// the run refuses a second resume of its state, but a copy of the state
    /// resumed by runners in other processes runs its approved calls in
    /// each of them.
    pub async fn resume<R: Into<Reply>>(
        &self,
        state: RunState,
        replies: impl IntoIterator<Item = (String, R)>,
        cx: &RunContext,
    ) -> Result<RunOutcome, RunError> {
        let replies: Vec<(String, Reply)> =
            replies.into_iter().map(|(id, r)| (id, r.into())).collect();
        // Boxed: a resume's future holds a whole step's, and a host's own
        // futures stay small.
        super::spans::traced(self, cx, Box::pin(self.resume_untraced(state, replies, cx))).await
    }

    /// [`AgentRunner::resume`], outside its span.
    async fn resume_untraced(
        &self,
        state: RunState,
        replies: Vec<(String, Reply)>,
        cx: &RunContext,
    ) -> Result<RunOutcome, RunError> {
        let Some(durable) = &self.durable else {
            return self.resume_with(state, replies, cx, &mut None).await;
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
        let outcome = self.resume_with(state, replies, cx, &mut journal).await;
        if let Err(err) = &outcome
            && err.refused_before_running()
        {
            // Nothing ran: the run waits as before.
            durable::save(&mut journal, &stored.state, RunStatus::Waiting).await?;
        }
        outcome
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
    /// ([`StoreError::Held`](crate::StoreError::Held)); [`RunError::MissingDecision`] when a waiting
    /// call has no decision yet (the run keeps waiting); and what
    /// [`AgentRunner::resume`] refuses.
    pub async fn resume_stored(&self, cx: &RunContext) -> Result<RunOutcome, RunError> {
        super::spans::traced(self, cx, Box::pin(self.resume_stored_untraced(cx))).await
    }

    /// [`AgentRunner::resume_stored`], outside its span.
    async fn resume_stored_untraced(&self, cx: &RunContext) -> Result<RunOutcome, RunError> {
        let durable = self.durable.as_ref().ok_or(RunError::NoStore)?;
        let stored = durable
            .store
            .acquire(&cx.run_id, &durable.holder, durable.lease)
            .await?;
        let mut journal = Some(Journal::new(durable, stored.version));
        if stored.status == RunStatus::Running {
            let outcome = self
                .take_over(stored.state, stored.decisions, cx, &mut journal)
                .await?;
            return self.hand_out(outcome, &mut journal).await;
        }
        let state = stored.state.clone();
        match self
            .resume_with(stored.state, stored.decisions, cx, &mut journal)
            .await
        {
            // Nothing ran: the run waits as before, for whoever comes next.
            Err(err) if err.refused_before_running() => {
                durable::save(&mut journal, &state, RunStatus::Waiting).await?;
                Err(err)
            }
            other => other,
        }
    }

    pub(super) async fn resume_with(
        &self,
        mut state: RunState,
        replies: Vec<(String, Reply)>,
        cx: &RunContext,
        journal: &mut Option<Journal<'_>>,
    ) -> Result<RunOutcome, RunError> {
        if !(OLDEST_RUN_STATE_VERSION..=RUN_STATE_VERSION).contains(&state.version)
            || state.agent != self.agent.name()
        {
            return Err(RunError::WrongState {
                saved: format!("agent `{}` (state version {})", state.agent, state.version),
                running: format!(
                    "agent `{}` (state versions {OLDEST_RUN_STATE_VERSION} to {RUN_STATE_VERSION})",
                    self.agent.name()
                ),
            });
        }
        // A state from outside is what this host sealed before anything
        // in it is read as true (what waits, what a reply must fit).
        let seal = state.seal.take();
        if let Some(key) = self.sealing_key() {
            key.verify(&state, seal.as_deref())
                .map_err(|why| RunError::StateMismatch {
                    run_id: state.run_id.clone(),
                    why: why.to_owned(),
                })?;
        }
        let replies = checked_replies(&state, replies)?;
        let now = self.now_for(&state).await?;
        let pending = state.pending();
        if let Some(first) = pending.first()
            && !pending
                .iter()
                .any(|p| replies.contains_key(&p.id) || expired(&p.item, now))
        {
            return Err(RunError::MissingDecision {
                call_id: first.id.clone(),
            });
        }
        binding::check(&self.agent, &state, &cx.run_id)?;
        let pauses = self.consume_pauses(&state, &replies)?;
        let outcome = self.resume_checked(state, replies, now, cx, journal).await;
        if let Err(err) = &outcome
            && err.refused_before_running()
        {
            // Nothing ran: the pause is still there to resume.
            for pause in &pauses {
                self.agent.ledger().restore_pause(pause);
            }
        }
        outcome
    }

    /// Consumes, at the root of a tree, the pause of every item `replies`
    /// decide: a person's reply is taken once for the life of this process
    /// (the run's own slots end with it; these do not), so a second resume
    /// of a pause, even after the first finished the run, is refused before
    /// anything runs. The pauses taken, to give back if the resume is
    /// refused before anything ran. A store or an engine keeps this itself,
    /// for every process (a stored pause resumes only while the run waits
    /// in it; an engine replays the one resume it journaled).
    fn consume_pauses(
        &self,
        state: &RunState,
        replies: &FxHashMap<String, Reply>,
    ) -> Result<Vec<[u8; 32]>, RunError> {
        if !self.place.is_root() || self.durable.is_some() || self.engine.is_some() {
            return Ok(Vec::new());
        }
        let ledger = self.agent.ledger();
        let mut taken = Vec::with_capacity(replies.len());
        for id in replies.keys() {
            let Some(item) = state.find_pending(id) else {
                continue;
            };
            let pause = pause_key(&state.run_id, id, item.request_id());
            if !ledger.consume_pause(&state.run_id, pause) {
                for pause in &taken {
                    ledger.restore_pause(pause);
                }
                return Err(RunError::StateMismatch {
                    run_id: state.run_id.clone(),
                    why: format!(
                        "item `{}` was decided in this process already, and a pause is resumed once: this state is an older copy of the run",
                        iris_runtime::__wings::shorten(id)
                    ),
                });
            }
            taken.push(pause);
        }
        Ok(taken)
    }

    /// [`AgentRunner::resume_with`] once the state and its replies are
    /// checked and the pauses consumed.
    async fn resume_checked(
        &self,
        mut state: RunState,
        replies: FxHashMap<String, Reply>,
        now: u64,
        cx: &RunContext,
        journal: &mut Option<Journal<'_>>,
    ) -> Result<RunOutcome, RunError> {
        let spent = state.spent;
        let cx = &cx
            .counting_questions(|| asked_in(&state, Steps::All))
            .counting_spend(&self.spending(), self.engine.is_none(), || spent)?;
        self.restore(&state);
        // From here the state is written in this version's shape.
        state.version = RUN_STATE_VERSION;
        // Under way from here: the store takes no reply for the run while
        // its decided calls run, and a process that takes it over after a
        // crash keeps what had finished and asks the journal for the rest.
        self.keep(journal, &state, RunStatus::Running).await?;
        // The tools of the calls that wait for a decision were offered when
        // they were made (a hook may have offered one for that turn only):
        // a person's approval runs them.
        let mut offered = state.disclosed.clone();
        offered.extend(
            state
                .waiting
                .iter()
                .filter_map(WaitingItem::approval_request)
                .map(|request| request.tool.clone()),
        );
        let tools_cx = self.tool_context(cx, &offered)?;
        let (mut results, still_waiting) = self
            .apply_replies(&mut state, replies, now, &tools_cx, cx)
            .await?;
        if !still_waiting.is_empty() {
            // Some items have their replies and the rest wait on: what ran
            // is kept as finished and never runs again.
            state.finished = finished_in_order(last_calls(&state), &mut results);
            state.waiting = still_waiting;
            let outcome = self.spend_noted(RunOutcome::Waiting(state), cx);
            return self.hand_out(outcome, journal).await;
        }
        if let Some(Message::Assistant { tool_calls, .. }) = state.messages.last() {
            let answers = tool_messages(tool_calls, &mut results);
            self.append(&mut state, answers);
            self.keep(journal, &state, RunStatus::Running).await?;
        }
        let outcome = self.drive(state, cx, journal).await?;
        let outcome = self.spend_noted(outcome, cx);
        self.hand_out(outcome, journal).await
    }

    /// The time a resume of `state` decides expiries by: the engine's kept
    /// reading on an engine (a replay decides as the first attempt did),
    /// the clock otherwise; asked only when a waiting question expires.
    async fn now_for(&self, state: &RunState) -> Result<u64, RunError> {
        let expires = state.pending().iter().any(|p| {
            p.item
                .question_request()
                .is_some_and(|request| request.expires_at_ms.is_some())
        });
        if expires {
            self.clock_ms().await
        } else {
            Ok(store::now_ms())
        }
    }

    /// The time now: the engine's kept reading on an engine, the clock
    /// otherwise.
    pub(super) async fn clock_ms(&self) -> Result<u64, RunError> {
        match &self.engine {
            Some(engine) => engine.now_ms().await.map_err(RunError::Engine),
            None => Ok(store::now_ms()),
        }
    }

    /// What a run keeps in this process's ledger besides its state: the
    /// tools it disclosed, and the full text of its results.
    pub(super) fn restore(&self, state: &RunState) {
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
    pub(super) async fn take_over(
        &self,
        mut state: RunState,
        replies: Vec<(String, Reply)>,
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
        state.version = RUN_STATE_VERSION;
        // A run cut off while it resumed still lists the calls that had
        // finished before its pause (they keep their results) and the items
        // that waited: approvals go through the executor with the rest, and
        // questions are asked again as they were shown.
        let mut results: FxHashMap<String, ToolResult> = std::mem::take(&mut state.finished)
            .into_iter()
            .map(|f| (f.call_id, f.result))
            .collect();
        let kept: FxHashMap<String, WaitingItem> = std::mem::take(&mut state.waiting)
            .into_iter()
            .filter(|item| self.is_run_control(&state, cx, item.call()))
            .map(|item| (item.id().to_owned(), item))
            .collect();
        // The questions of the cut-off step that were asked wait in `kept`;
        // the rest are asked (and counted) again.
        let cx = &cx.counting_questions(|| {
            let waiting = kept
                .values()
                .filter_map(WaitingItem::question_request)
                .map(|request| u32::try_from(request.questions.len()).unwrap_or(u32::MAX))
                .fold(0, u32::saturating_add);
            asked_in(&state, Steps::BeforeLast).saturating_add(waiting)
        });
        let spent = state.spent;
        let cx = &cx
            .clone()
            .counting_spend(&self.spending(), self.engine.is_none(), || spent)?;
        let open_calls = last_calls(&state).to_vec();
        if !open_calls.is_empty() {
            let mut replies: FxHashMap<String, Reply> = replies.into_iter().collect();
            let (_, tools_cx) = self.offer(&state, cx)?;
            let (control, to_run): (Vec<_>, Vec<_>) = open_calls
                .iter()
                .filter(|call| !results.contains_key(&call.id))
                .cloned()
                .partition(|call| self.is_run_control(&state, cx, call));
            // Through the executor again: the journal answers for the calls
            // that ran or were interrupted; the rest run now.
            let outcomes = self
                .agent
                .executor()
                .execute_batch(to_run.clone(), &tools_cx)
                .await;
            for (call, outcome) in to_run.iter().zip(outcomes) {
                match outcome {
                    ToolOutcome::Finished { call_id, result } => {
                        results.insert(call_id, result);
                    }
                    ToolOutcome::Waiting(request) => {
                        // Decided before the process died (it was resuming):
                        // the decision stands, and the journal answers for a
                        // body that started.
                        match replies.remove(&*iris_core::CallPath::join(None, &call.id)) {
                            Some(Reply::Decision(decision)) => {
                                let (call_id, result) = self
                                    .run_decided(call, &request, decision, &tools_cx)
                                    .await?;
                                results.insert(call_id, result);
                            }
                            _ => state.waiting.push(WaitingItem::approval(
                                &state.run_id,
                                call.clone(),
                                request.tool,
                                request.reason,
                            )),
                        }
                    }
                }
            }
            self.take_over_control(&mut state, control, kept, &mut replies, &mut results, cx)
                .await;
            if !state.waiting.is_empty() {
                // In call order, as a fresh pause lists them.
                state.waiting.sort_by_key(|item| {
                    open_calls
                        .iter()
                        .position(|c| c.id == item.id())
                        .unwrap_or(usize::MAX)
                });
                state.finished = finished_in_order(&open_calls, &mut results);
                return Ok(self.spend_noted(RunOutcome::Waiting(state), cx));
            }
            let answers = tool_messages(&open_calls, &mut results);
            self.append(&mut state, answers);
            self.keep(journal, &state, RunStatus::Running).await?;
        }
        let outcome = self.drive(state, cx, journal).await?;
        Ok(self.spend_noted(outcome, cx))
    }
}

/// What names one pause of one item: the root run, the item's path and the
/// request a person replied to (its id binds the run, call and what was
/// shown).
fn pause_key(root: &iris_core::RunId, item: &str, request: &str) -> [u8; 32] {
    use sha2::{Digest as _, Sha256};
    let mut hasher = Sha256::new();
    for part in [root.as_str(), item, request] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize().into()
}

/// The results of `calls` that have one, in call order, taken out of
/// `results`.
fn finished_in_order(
    calls: &[ToolUseBlock],
    results: &mut FxHashMap<String, ToolResult>,
) -> Vec<FinishedCall> {
    calls
        .iter()
        .filter_map(|call| {
            let result = results.remove(&call.id)?;
            Some(FinishedCall {
                call_id: call.id.clone(),
                result,
            })
        })
        .collect()
}
