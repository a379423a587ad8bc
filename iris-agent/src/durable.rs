//! A runner with a [`RunStore`]: the run's state written at each step
//! boundary under the runner's lease, so that any process with the same
//! store can resume a run that waits, or take over one whose process died.
//!
//! What is written when: the new run before its first step; the model's
//! answer (with its calls) before any call runs; a claim before the body
//! of each call that may not run twice, and its result after; the step's
//! results once every call finished; the waiting state at a pause (the
//! lease ends); the last state at the end. A process that takes a run over
//! runs the calls of the last step again through the executor: a call that
//! recorded its result gets it without running, one claimed without a
//! result is reported to the model as interrupted, and the rest run (calls
//! of idempotent and read-only tools are never claimed: they run again).

use std::sync::Arc;
use std::time::Duration;

use iris_core::{BoxFuture, RunId, ToolResult};
use iris_runtime::journal::{CallJournal, Claimed, JournalError, Journaled};

use crate::error::RunError;
use crate::state::RunState;
use crate::store::{DEFAULT_LEASE, RunStatus, RunStore};

/// The store a runner writes to, and under which name.
#[derive(Clone)]
pub(crate) struct Durable {
    pub(crate) store: Arc<dyn RunStore>,
    pub(crate) holder: String,
    pub(crate) lease: Duration,
}

impl Durable {
    pub(crate) fn new(store: Arc<dyn RunStore>) -> Self {
        Self {
            store,
            holder: default_holder(),
            lease: DEFAULT_LEASE,
        }
    }
}

/// A name for this process that no other process shares: host, process id
/// and the moment it was made.
fn default_holder() -> String {
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "host".to_owned());
    format!("{host}:{}:{}", std::process::id(), crate::store::now_ms())
}

/// The writes of one run by its lease holder: the version to name next.
pub(crate) struct Journal<'r> {
    durable: &'r Durable,
    version: u64,
}

impl<'r> Journal<'r> {
    pub(crate) fn new(durable: &'r Durable, version: u64) -> Self {
        Self { durable, version }
    }

    /// Writes `state` as `status`; a refused write (the lease was lost,
    /// someone else wrote) stops the run.
    pub(crate) async fn save(
        &mut self,
        state: &RunState,
        status: RunStatus,
    ) -> Result<(), RunError> {
        let d = self.durable;
        self.version = d
            .store
            .save(state, status, &d.holder, self.version, d.lease)
            .await?;
        Ok(())
    }
}

/// Writes `state` when there is a journal.
pub(crate) async fn save(
    journal: &mut Option<Journal<'_>>,
    state: &RunState,
    status: RunStatus,
) -> Result<(), RunError> {
    match journal {
        Some(journal) => journal.save(state, status).await,
        None => Ok(()),
    }
}

/// A run's calls claimed and recorded in its store, under the runner's
/// lease.
struct StoreJournal {
    store: Arc<dyn RunStore>,
    holder: String,
    /// Whether the ids it is given are the root run's own call ids, kept
    /// under their escaped [`CallPath`](iris_core::CallPath) segment, or
    /// keys a child's journal wrote already.
    escape: bool,
}

impl StoreJournal {
    /// The key `call_id` is kept under.
    fn key<'a>(&self, call_id: &'a str) -> std::borrow::Cow<'a, str> {
        if self.escape {
            std::borrow::Cow::Owned(iris_core::CallPath::join(None, call_id))
        } else {
            std::borrow::Cow::Borrowed(call_id)
        }
    }
}

impl CallJournal for StoreJournal {
    fn claim<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
    ) -> BoxFuture<'a, Result<Claimed, JournalError>> {
        Box::pin(async move {
            self.store
                .claim_call(run, &self.key(call_id), &self.holder)
                .await
                .map_err(|e| {
                    JournalError::new(format!("the run store could not claim call `{call_id}`"), e)
                })
        })
    }

    fn record<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        result: &'a ToolResult,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            self.store
                .record_call(run, &self.key(call_id), result)
                .await
                .map_err(|e| {
                    JournalError::new(
                        format!("the run store could not record the result of call `{call_id}`"),
                        e,
                    )
                })
        })
    }
}

impl Durable {
    /// The context extension that journals the runner's calls.
    pub(crate) fn journaled(&self) -> Journaled {
        Journaled(Arc::new(StoreJournal {
            store: Arc::clone(&self.store),
            holder: self.holder.clone(),
            escape: true,
        }))
    }

    /// The store's journal taking keys as they are, for a child's journal
    /// that writes the whole path of each call itself.
    pub(crate) fn keyed_journal(&self) -> Arc<dyn CallJournal> {
        Arc::new(StoreJournal {
            store: Arc::clone(&self.store),
            holder: self.holder.clone(),
            escape: false,
        })
    }
}
