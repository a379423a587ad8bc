//! The run loop on a durable execution engine (Restate, for one): the
//! engine keeps each model answer, each call that may not run twice and the
//! run's state in its own journal, and after a crash runs the loop again
//! from the start, where every kept answer and result comes back from the
//! journal instead of running again. The loop is the same code in process,
//! on a [`RunStore`](crate::RunStore) and on an engine; which one is a
//! choice at construction ([`AgentRunner::on_engine`](crate::AgentRunner::on_engine)).
//!
//! What an engine must guarantee for the loop to replay: `answer` returns
//! the kept answer of a step that was answered before, without asking the
//! model (its `ask` is never called then, so a model that acts when asked
//! is not asked again); the call journal answers as a store's does (a recorded result, or
//! unfinished for a call claimed and never recorded); and everything it
//! keeps, it keeps in the order the loop asks, which is the same on every
//! replay.

use std::sync::Arc;

use iris_core::{BoxFuture, ToolName};
use iris_model::{ModelError, ModelResponse};
use iris_runtime::journal::{CallJournal, JournalError};

use crate::state::RunState;
use crate::store::RunStatus;

/// How the loop asks the model for one step's answer: called at most once,
/// and only when the engine keeps no answer for the step.
pub type Ask<'a> =
    Box<dyn FnOnce() -> BoxFuture<'a, Result<ModelResponse, ModelError>> + Send + 'a>;

/// A durable execution engine a run's loop runs on; see the
/// [module docs](self).
pub trait Engine: Send + Sync + 'static {
    /// The model's answer to step `step`: what `ask()` answers the first
    /// time, the kept one when the run is replayed (then `ask` is dropped
    /// without being called).
    fn answer<'a>(
        &'a self,
        step: u32,
        ask: Ask<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;

    /// Where the run's calls are claimed and recorded.
    fn calls(&self) -> Arc<dyn CallJournal>;

    /// The time now, in milliseconds since the Unix epoch, as the run's
    /// replays will see it: an engine keeps the first reading, so a replay
    /// decides as the first attempt did (whether a question expired). The
    /// loop asks only when a question that waits has an expiry.
    fn now_ms(&self) -> BoxFuture<'_, Result<u64, JournalError>> {
        Box::pin(async { Ok(crate::store::now_ms()) })
    }

    /// The tools disclosed once step `step` ended, as the run's first
    /// attempt saw them (`disclosed` is this attempt's reading): an engine
    /// keeps the first reading, so that a replay, which does not run a kept
    /// `tool_search` again, offers the model what the first attempt
    /// offered. By default, `disclosed`. The loop asks only when the agent
    /// discovers tools.
    fn disclosed(
        &self,
        step: u32,
        disclosed: Vec<ToolName>,
    ) -> BoxFuture<'_, Result<Vec<ToolName>, JournalError>> {
        let _ = step;
        Box::pin(async move { Ok(disclosed) })
    }

    /// What the `model.after` hooks made of step `step`'s answer, as the
    /// run's first attempt judged it (`judged` is this attempt's verdict,
    /// `null` when the answer came back kept and the hooks did not judge
    /// it): an engine keeps the first, so that a replay takes the path
    /// the first attempt took. The hooks judge an answer where it is asked
    /// for, so [`Engine::answer`] keeps it as they left it (redacted, or
    /// emptied when refused), never the model's raw words; this is where
    /// their verdict is kept. By default, `judged`. The loop asks only
    /// when the agent has `model.after` hooks.
    fn judged(
        &self,
        step: u32,
        judged: serde_json::Value,
    ) -> BoxFuture<'_, Result<serde_json::Value, JournalError>> {
        let _ = step;
        Box::pin(async move { Ok(judged) })
    }

    /// Keeps the run's state at a step boundary, for those who look at the
    /// run from outside (its status, its waiting calls). A failure stops
    /// the run.
    fn save<'a>(
        &'a self,
        state: &'a RunState,
        status: RunStatus,
    ) -> BoxFuture<'a, Result<(), JournalError>>;
}
