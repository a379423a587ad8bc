//! The waiting path: a run that waits is handed out (remembered, sealed,
//! stored), and a person's decision is recorded for it.

use iris_core::RunId;

#[cfg(doc)]
use iris_runtime::ApprovalDecision;
use iris_runtime::Reply;

use super::AgentRunner;
use crate::durable::{self, Journal};
use crate::store::RunStatus;
use crate::{RunError, RunOutcome, RunState, binding};

impl AgentRunner {
    /// Makes `outcome`'s state the one that resumes its run: remembered
    /// when the run waits, sealed when the runner has a key, and written
    /// (waiting, or finished) when it has a store.
    pub(super) async fn hand_out(
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
        // The host's own key seals the states that wait, which are what a
        // person's reply resumes; a run that ended keeps its history
        // unsealed (a pass over all of it at every end), and resumes only
        // with a key the host gives, which seals every state.
        if let Some(key) = self.sealing_key()
            && (waits || self.seals_every_state())
        {
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
    pub(super) async fn keep(
        &self,
        journal: &mut Option<Journal<'_>>,
        state: &RunState,
        status: RunStatus,
    ) -> Result<(), RunError> {
        durable::save(journal, state, status).await?;
        // A child's own step boundaries, on its root's store: a crash
        // costs it at most the step it was in.
        if let Some(checkpoints) = &self.place.checkpoints
            && status == RunStatus::Running
        {
            checkpoints.keep(state).await?;
        }
        if let Some(engine) = &self.engine {
            engine.save(state, status).await.map_err(RunError::Engine)?;
        }
        Ok(())
    }

    /// Records a person's reply to one waiting item of a stored run, from
    /// any process: a decision ([`ApprovalDecision`]) for a call that waits
    /// for approval, an answer ([`QuestionReply`](iris_runtime::QuestionReply))
    /// for a question. [`AgentRunner::resume_stored`] then continues the
    /// run with the replies recorded (the items without one wait on).
    ///
    /// # Errors
    /// [`RunError::NoStore`] without a store; [`RunError::Store`] when the
    /// run is not stored, `item_id` does not wait in it, or the reply does
    /// not fit the item (nothing is recorded then).
    pub async fn decide(
        &self,
        run_id: &RunId,
        item_id: &str,
        reply: impl Into<Reply>,
    ) -> Result<(), RunError> {
        let durable = self.durable.as_ref().ok_or(RunError::NoStore)?;
        durable.store.decide(run_id, item_id, &reply.into()).await?;
        Ok(())
    }
}
