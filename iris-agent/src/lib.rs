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
//! Run control sits beside the executor, never inside its hooks and
//! middleware: approvals (the policy asked), questions the model puts to
//! the person ([`AgentRunner::with_questions`], the built-in
//! `ask_question`), and child agents the host declares
//! ([`AgentBuilder::child`], [`ChildAgent`]) that the model calls like
//! tools. All three make a run wait on one path: [`RunState::waiting`]
//! lists the run's waiting items (a child's own state inside its item),
//! [`RunState::pending`] lists the whole tree's flat with the ids a reply
//! names, and [`AgentRunner::resume`] takes replies ([`Reply`]: a decision
//! or an answer) for any of them.
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
mod budget;
mod children;
mod contract;
mod durable;
pub mod engine;
mod error;
mod files;
#[cfg(all(feature = "fuzzing", feature = "assembly"))]
#[doc(hidden)]
pub mod fuzzing;
mod history;
mod output;
mod run;
mod seal;
mod state;
pub mod store;

pub use agent::{Agent, AgentBuilder, Telemetry};
pub use budget::{Budget, BudgetKind, OverBudget, Price, PriceTable, Spent};
pub use children::ChildAgent;
pub use engine::Engine;
pub use error::{AgentBuildError, RunError};
pub use history::{ReadHistory, read_history};
pub use iris_skills::Skills;
pub use output::{Output, OutputError};
pub use run::{AgentRunner, AgentTool, Answerer, Delegation, Questions, RunContext};
pub use seal::{StateKey, StateKeyError};
pub use state::{
    ChildRun, FinishedCall, OLDEST_RUN_STATE_VERSION, PendingItem, RUN_STATE_VERSION,
    ReplyMismatch, RunOutcome, RunState, Wait, WaitingItem,
};
pub use store::{RunStatus, RunStore, StoreError};

/// Call identity as run control holds it: a model's ids checked, and the
/// paths that name a call anywhere in a tree of agents.
pub use iris_core::{CallId, CallIdError, CallPath};
pub use iris_runtime::Reply;
/// Questions the model asks the person, and the replies a waiting run
/// takes: run control, beside approvals.
pub use iris_runtime::question::{
    ASK_QUESTION, Answer, Question, QuestionEnding, QuestionOption, QuestionReply, QuestionRequest,
};

#[cfg(doc)]
use iris_model::{Model, ModelConfig};
