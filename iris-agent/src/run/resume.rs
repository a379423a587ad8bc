//! Resuming: a waiting run with its decisions, a stored run, or a run whose
//! process died, taken over.

use iris_core::{ToolContext, ToolResult};
use rustc_hash::FxHashMap;

use iris_model::Message;
use iris_runtime::{ApprovalDecision, RuntimeError, ToolOutcome};

use super::calls::{last_calls, tool_messages};
use super::{AgentRunner, RunContext};
use crate::durable::{self, Journal};
use crate::store::{self, RunStatus};
use crate::{
    FinishedCall, PendingCall, RUN_STATE_VERSION, RunError, RunOutcome, RunState, binding, history,
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
            Err(err @ (RunError::MissingDecision { .. } | RunError::UnknownDecision { .. })) => {
                durable::save(&mut journal, &state, RunStatus::Waiting).await?;
                Err(err)
            }
            other => other,
        }
    }

    pub(super) async fn resume_with(
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
        // Under way from here: the store takes no decision for the run while
        // its decided calls run, and a process that takes it over after a
        // crash keeps what had finished and asks the journal for the rest.
        self.keep(journal, &state, RunStatus::Running).await?;
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
        decisions: Vec<(String, ApprovalDecision)>,
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
        // A run cut off while it resumed still lists the calls that had
        // finished before its pause (they keep their results) and those that
        // waited (they go through the executor with the rest).
        let mut results: FxHashMap<String, ToolResult> = std::mem::take(&mut state.finished)
            .into_iter()
            .map(|f| (f.call_id, f.result))
            .collect();
        state.pending.clear();
        let open_calls = last_calls(&state).to_vec();
        if !open_calls.is_empty() {
            // Through the executor again: the journal answers for the calls
            // that ran or were interrupted; the rest run now.
            let (_, tools_cx) = self.offer(&state, cx)?;
            let to_run: Vec<_> = open_calls
                .iter()
                .filter(|call| !results.contains_key(&call.id))
                .cloned()
                .collect();
            let outcomes = self
                .agent
                .executor()
                .execute_batch(to_run.clone(), &tools_cx)
                .await;
            let mut decisions: FxHashMap<String, ApprovalDecision> =
                decisions.into_iter().collect();
            for (call, outcome) in to_run.iter().zip(outcomes) {
                match outcome {
                    ToolOutcome::Finished { call_id, result } => {
                        results.insert(call_id, result);
                    }
                    ToolOutcome::Waiting(request) => {
                        let pending = PendingCall {
                            call: call.clone(),
                            request: *request,
                        };
                        // Decided before the process died (it was resuming):
                        // the decision stands, and the journal answers for a
                        // body that started.
                        match decisions.remove(&call.id) {
                            Some(decision) => {
                                let (call_id, result) =
                                    self.run_decided(pending, decision, &tools_cx).await?;
                                results.insert(call_id, result);
                            }
                            None => state.pending.push(pending),
                        }
                    }
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
    pub(super) async fn run_decided(
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
}
