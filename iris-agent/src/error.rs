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
    /// The run's budget cannot be kept where the run runs.
    #[error("the run's budget cannot be kept: {why}")]
    Budget {
        /// Why, and what to do.
        why: String,
    },
    /// A run asked for a typed output ([`AgentRunner::run_for`](crate::AgentRunner::run_for))
    /// ended without one: `outcome` is how it ended (a run that waits
    /// resumes from its state as any other).
    #[error("the run ended without its output: {error}")]
    Output {
        /// Why there is no output.
        #[source]
        error: crate::OutputError,
        /// How the run ended.
        outcome: Box<crate::RunOutcome>,
    },
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
    /// A resume with no reply for any waiting item (and none expired).
    #[error(
        "`{call_id}` waits for a person and no reply was given for it or any other waiting item; reply to at least one (the run waits on the rest)"
    )]
    MissingDecision {
        /// The first waiting item.
        call_id: String,
    },
    /// A reply names an item that does not wait.
    #[error("`{call_id}` does not wait for a person in this state ({waiting})")]
    UnknownDecision {
        /// The items that do wait, in words.
        waiting: String,
        /// The item the reply named.
        call_id: String,
    },
    /// A reply that does not fit its item: a decision for a question, an
    /// answer for an approval, or an answer that was not among the choices.
    #[error(
        "the reply to `{item_id}` does not fit it: {why}; nothing ran, and the run still waits"
    )]
    WrongReply {
        /// The waiting item.
        item_id: String,
        /// What is wrong.
        #[source]
        why: crate::state::ReplyMismatch,
    },
    /// A tool of the agent has the name run control's own tool needs.
    #[error(
        "the agent has a tool named `{name}`, which the runner's questions use; rename that tool, or run without `with_questions`"
    )]
    NameTaken {
        /// The name.
        name: String,
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
    /// The engine the run is on could not keep its state (its own error is
    /// the source).
    #[error("the run's engine could not keep its state: {0}")]
    Engine(#[source] iris_runtime::journal::JournalError),
    /// The context for the run's calls could not be made.
    #[error("the run's tool context could not be made: {0}")]
    Context(iris_tools::fs::FileServiceError),
}

iris_runtime::__wings::debug_as_display!(RunError);

/// Why an [`Agent`](crate::Agent) cannot be built.
#[derive(thiserror::Error)]
pub enum AgentBuildError {
    /// A part of an agent keeps per-run state in another ledger than the
    /// executor's, so ending a run would leave it behind.
    #[error("the agent's {part} keeps per-run state in another ledger than the executor's; {fix}")]
    LedgerMismatch {
        /// The part (`discovery`).
        part: &'static str,
        /// How to build it over the executor's ledger.
        fix: &'static str,
    },
    /// Two things an agent offers the model share a name (a child agent
    /// and a tool, or two child agents).
    #[error(
        "`{name}` names both {first} and {second}; the model could not tell them apart: rename one"
    )]
    DuplicateName {
        /// The shared name.
        name: String,
        /// What had it first, in words.
        first: String,
        /// What had it too, in words.
        second: String,
    },
    /// A child agent served as a tool names no model, and none was given
    /// for it.
    #[error(
        "child agent `{agent}` names no model and its parent none either: give its file (or its parent's) a `model` section"
    )]
    NoModel {
        /// The child.
        agent: String,
    },
    /// A name the model cannot call.
    #[error("`{name}` cannot be offered to a model: {why}")]
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong with it.
        why: String,
    },
    /// The executor refused a tool the agent adds (`read_history`, a child
    /// agent's tool).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

iris_runtime::__wings::debug_as_display!(AgentBuildError);

impl RunError {
    /// Whether this error refused a resume before anything ran: the run
    /// waits as before, and its pauses are still there to resume.
    pub(crate) fn refused_before_running(&self) -> bool {
        matches!(
            self,
            RunError::MissingDecision { .. }
                | RunError::UnknownDecision { .. }
                | RunError::WrongReply { .. }
                | RunError::WrongState { .. }
                | RunError::StateMismatch { .. }
        )
    }
}
