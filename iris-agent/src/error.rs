//! Why a run could not go on.

use iris_runtime::RuntimeError;

use iris_model::ModelError;

/// A run that failed, or a resume that was refused.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The model could not answer.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The state was saved by another agent or another version.
    #[error(
        "this state was saved by {saved}, and this runner is for {running}; resume it with the agent and Iris version that saved it"
    )]
    WrongState {
        /// What saved it.
        saved: String,
        /// What runs now.
        running: String,
    },
    /// A saved state that does not resume its run as it was saved.
    #[error(
        "refusing to resume run `{run_id}` from this state: {why}; resume with the state exactly as the run returned it"
    )]
    StateMismatch {
        /// The run the state names.
        run_id: iris_core::RunId,
        /// What did not match.
        why: String,
    },
    /// A waiting call has no decision.
    #[error("call `{call_id}` waits for approval and has no decision; give one per waiting call")]
    MissingDecision {
        /// The call.
        call_id: String,
    },
    /// A decision names a call that does not wait.
    #[error("call `{call_id}` does not wait for approval in this state ({waiting})")]
    UnknownDecision {
        /// The calls that do wait, in words.
        waiting: String,
        /// The call.
        call_id: String,
    },
    /// The executor refused a resume (the call changed since it was shown).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The run store refused or failed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// A stored run was asked of a runner without a store.
    #[error(
        "this runner keeps no runs; give it a store with `AgentRunner::with_store` to resume or decide stored runs"
    )]
    NoStore,
    /// The engine the run is on could not keep its state.
    #[error("the run's engine could not keep its state: {0}")]
    Engine(String),
    /// The context for the run's calls could not be made.
    #[error("the run's tool context could not be made: {0}")]
    Context(RuntimeError),
}

iris_runtime::__wings::debug_as_display!(RunError);
