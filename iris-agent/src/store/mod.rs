//! Where runs are kept so that they outlive the process that started them:
//! the [`RunStore`] boundary, and the in-memory store for one process.
//!
//! A stored run is its [`RunState`] (history, step, waiting calls with
//! their approval requests, disclosures, usage), its [`RunStatus`], the
//! decisions people recorded for its waiting calls, a version every write
//! must name (compare-and-swap), and a lease naming the process that drives
//! it. Only the lease holder writes the state; any process records a
//! decision; a lease that was not renewed in time passes to whoever asks,
//! which is how a run survives the death of its process.
//!
//! Two runners sharing a store (one pausing a run, the other deciding and
//! finishing it) are shown in the `iris` crate's README, section *Runs that
//! outlive a process*, whose example runs as a test there.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use iris_core::{BoxFuture, RunId, ToolResult};
use iris_runtime::Reply;
pub use iris_runtime::journal::Claimed;
use serde::{Deserialize, Serialize};

use crate::state::{RunState, Wait};

mod memory;

pub use memory::{DEFAULT_MAX_RUNS, MemoryStore};

/// How long a lease lasts unless the runner is told otherwise; each write
/// of the state renews it.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(300);

/// How long a store keeps runs: every store forgets finished runs after
/// a while, and runs nobody wrote for a long time (a pause nobody ever
/// decided), so that it never grows without bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// A finished run is forgotten this long after its last write (one
    /// week unless set).
    pub finished: Duration,
    /// Any run is forgotten this long after its last write (thirty days
    /// unless set): longer than any pause a person may take to decide.
    pub idle: Duration,
    /// Least time between two sweeps for expired runs, made when a run is
    /// created (a minute unless set).
    pub sweep_every: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            finished: Duration::from_secs(7 * 24 * 60 * 60),
            idle: Duration::from_secs(30 * 24 * 60 * 60),
            sweep_every: Duration::from_secs(60),
        }
    }
}

impl Retention {
    /// Whether a run last written at `written` (ms) with `status` has
    /// expired at `now` (ms).
    #[must_use]
    pub fn expired(&self, status: RunStatus, written: u64, now: u64) -> bool {
        let age = now.saturating_sub(written);
        let limit = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        age >= limit(self.idle) || (status == RunStatus::Finished && age >= limit(self.finished))
    }
}

/// Where a stored run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// A process drives it (or did, until it died: see its lease).
    Running,
    /// Some calls wait for a person; no process holds it.
    Waiting,
    /// It ended (an answer, the step limit, cancellation or an error).
    Finished,
}

impl RunStatus {
    /// The status as stored.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Waiting => "waiting",
            RunStatus::Finished => "finished",
        }
    }

    /// The status stored as `text`, if it is one.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "running" => Some(RunStatus::Running),
            "waiting" => Some(RunStatus::Waiting),
            "finished" => Some(RunStatus::Finished),
            _ => None,
        }
    }
}

/// Which process drives a run, and until when unless it writes again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The process's name as a runner gives it.
    pub holder: String,
    /// Milliseconds since the Unix epoch.
    pub until_ms: u64,
}

/// A run as a store holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    /// The run's state as last written.
    pub state: RunState,
    /// Where it stands.
    pub status: RunStatus,
    /// Counts writes of the state: the next write must name it.
    pub version: u64,
    /// The process that drives it, while one does.
    pub lease: Option<Lease>,
    /// Replies recorded for its waiting items (decisions for approvals,
    /// answers for questions), by item id, in the order they were recorded
    /// (a later one for the same item replaces it).
    pub decisions: Vec<(String, Reply)>,
}

/// Why a store refused, or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No run with this id is stored.
    #[error("no run `{run_id}` is stored; start it with `run`, or check the id")]
    NotFound {
        /// The run.
        run_id: RunId,
    },
    /// A run with this id is stored already.
    #[error("run `{run_id}` is stored already; resume it, or start a run with a new id")]
    Exists {
        /// The run.
        run_id: RunId,
    },
    /// Another process drives the run.
    #[error(
        "run `{run_id}` is driven by `{holder}` (its lease runs {remaining_ms} ms more); let it finish or pause, or resume after its lease ran out"
    )]
    Held {
        /// The run.
        run_id: RunId,
        /// Who holds it.
        holder: String,
        /// How long the lease still runs.
        remaining_ms: u64,
    },
    /// The run was written by someone else since it was read.
    #[error(
        "run `{run_id}` changed since it was read (version {expected} expected, {found} found): another process took it over; this process stops driving it"
    )]
    Conflict {
        /// The run.
        run_id: RunId,
        /// The version the write named.
        expected: u64,
        /// The version stored.
        found: u64,
    },
    /// A reply for an item that does not wait.
    #[error(
        "`{call_id}` does not wait for a person in run `{run_id}` (the run is {status}; {waiting}); reply only to the items its waiting state lists"
    )]
    NotWaiting {
        /// The calls that do wait, in words (`the calls that wait: ...`).
        waiting: String,
        /// The run.
        run_id: RunId,
        /// The call.
        call_id: String,
        /// Where the run stands.
        status: &'static str,
    },
    /// The store holds as many runs as it may.
    #[error(
        "the run store holds {limit} runs, none of them finished, so run `{run_id}` was not started; finish or remove runs, or raise the limit"
    )]
    Full {
        /// The run refused.
        run_id: RunId,
        /// The most runs the store holds.
        limit: usize,
    },
    /// A result for a call that was not claimed.
    #[error(
        "call `{call_id}` of run `{run_id}` was not claimed, so its result is not recorded; claim a call before its body runs"
    )]
    NotClaimed {
        /// The run.
        run_id: RunId,
        /// The call.
        call_id: String,
    },
    /// A reply that does not fit the item it names: a decision for a
    /// question, an answer for an approval, or an answer that was not
    /// among the choices. Nothing is recorded.
    #[error(
        "the reply to `{item_id}` of run `{run_id}` does not fit it: {why}; nothing was recorded"
    )]
    WrongReply {
        /// The run.
        run_id: RunId,
        /// The waiting item.
        item_id: String,
        /// What is wrong.
        #[source]
        why: crate::state::ReplyMismatch,
    },
    /// The run ended; there is nothing to resume.
    #[error("run `{run_id}` has finished; start a new run")]
    Finished {
        /// The run.
        run_id: RunId,
    },
    /// What the store holds for the run cannot be read back.
    #[error("run `{run_id}` is stored in a form this version cannot read: {detail}")]
    Corrupt {
        /// The run.
        run_id: RunId,
        /// What was wrong.
        detail: String,
    },
    /// The store itself failed (a file, a database, a connection).
    #[error("the run store failed: {0}")]
    Backend(String),
}

/// The durable parts of runs: their states, statuses, leases and the
/// decisions people recorded. Every write of a state is compare-and-swap
/// on the version read, and only the lease holder writes one.
///
/// Implementations: [`MemoryStore`] for one process; the SQLite store of
/// `iris-sdk-sqlite` for several processes on one machine.
pub trait RunStore: Send + Sync + 'static {
    /// Stores a new run, leased to `holder` for `lease`; refused with
    /// [`StoreError::Exists`] when the id is taken. Returns its version.
    fn create<'a>(
        &'a self,
        state: &'a RunState,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<u64, StoreError>>;

    /// The run as stored, if it is.
    fn load<'a>(&'a self, run: &'a RunId) -> BoxFuture<'a, Result<Option<StoredRun>, StoreError>>;

    /// Leases `run` to `holder` for `lease` from now, when no one else
    /// holds an unexpired lease on it ([`StoreError::Held`] otherwise), and
    /// returns it as stored then. Taking a lease is a write: the version
    /// moves on, so a process that lost its lease finds out at its next
    /// write. A finished run is refused with [`StoreError::Finished`].
    fn acquire<'a>(
        &'a self,
        run: &'a RunId,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<StoredRun, StoreError>>;

    /// Writes `state` with `status` when the run's version is still
    /// `expected` and `holder` holds its lease; returns the new version.
    /// A [`RunStatus::Running`] write renews the lease for `lease`; any
    /// other ends it and, for a run that waits, forgets the replies
    /// recorded for items that no longer wait as they did (those of items
    /// still waiting, [`replies_kept`], stand). Every write clears the run's call claims and its
    /// children's kept states: the state holds their results from then on.
    fn save<'a>(
        &'a self,
        state: &'a RunState,
        status: RunStatus,
        holder: &'a str,
        expected: u64,
        lease: Duration,
    ) -> BoxFuture<'a, Result<u64, StoreError>>;

    /// Claims call `call_id` of `run` for `holder` before its body runs, or
    /// tells what an earlier claim left: its result, or that it never
    /// recorded one. Refused ([`StoreError::Conflict`]) unless `holder`
    /// holds the run's lease. Claims last until the next write of the
    /// state, which holds their results by then.
    fn claim_call<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<Claimed, StoreError>>;

    /// Records the result of a claimed call; refused with
    /// [`StoreError::NotClaimed`] for a call without a claim.
    fn record_call<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        result: &'a ToolResult,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Whether this store keeps the states of child agents between their
    /// steps ([`keep_child`](Self::keep_child)). With it, a child cut off
    /// by a crash resumes from its last kept step when its run is taken
    /// over; without it, the child is reported interrupted as a whole.
    /// `false` by default.
    fn keeps_children(&self) -> bool {
        false
    }

    /// Keeps `state`, the state of child run `state.run_id` of `run` at one
    /// of its step boundaries, replacing the one kept before. Refused
    /// ([`StoreError::Conflict`]) unless `holder` holds the run's lease.
    /// Kept until the next write of the run's own state, which holds the
    /// child's outcome by then. Does nothing by default.
    fn keep_child<'a>(
        &'a self,
        run: &'a RunId,
        state: &'a RunState,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let _ = (run, state, holder);
        Box::pin(std::future::ready(Ok(())))
    }

    /// The state kept for child run `child` of `run`, if one is. By
    /// default an error: a store that says it keeps children's states
    /// without reading them back has a cut child reported interrupted, never
    /// started again as if it had kept nothing.
    fn kept_child<'a>(
        &'a self,
        run: &'a RunId,
        child: &'a RunId,
    ) -> BoxFuture<'a, Result<Option<RunState>, StoreError>> {
        let _ = run;
        Box::pin(std::future::ready(Err(StoreError::Backend(format!(
            "this store keeps no states of child agents, so that of `{child}` cannot be read"
        )))))
    }

    /// Records a person's reply to one waiting item of `run` (a decision
    /// for an approval, an answer for a question), from any process:
    /// refused with [`StoreError::NotWaiting`] unless the run waits and
    /// `item_id` is one of its waiting items, and with
    /// [`StoreError::WrongReply`] when the reply does not fit the item
    /// ([`check_reply`] says both).
    fn decide<'a>(
        &'a self,
        run: &'a RunId,
        item_id: &'a str,
        reply: &'a Reply,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The runs that wait for a person, oldest first, at most `limit`.
    fn waiting(&self, limit: usize) -> BoxFuture<'_, Result<Vec<RunId>, StoreError>>;

    /// Forgets `run` (a finished run a host no longer needs).
    fn remove<'a>(&'a self, run: &'a RunId) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// Milliseconds since the Unix epoch, now.
#[must_use]
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The end of a lease of `lease` taken at `now`.
#[must_use]
pub fn lease_end(now: u64, lease: Duration) -> u64 {
    now.saturating_add(u64::try_from(lease.as_millis()).unwrap_or(u64::MAX))
}

/// Checks a reply to item `item_id` of `run`, stored as `state` with
/// `status`, before a store records it: the run waits, the item is one of
/// its waiting items, and the reply fits it (a decision for an approval, an
/// answer among the choices for a question). For stores.
///
/// # Errors
/// [`StoreError::NotWaiting`] or [`StoreError::WrongReply`].
pub fn check_reply(
    run: &RunId,
    state: &RunState,
    status: RunStatus,
    item_id: &str,
    reply: &Reply,
) -> Result<(), StoreError> {
    let item = state.find_pending(item_id);
    let Some(item) = item.filter(|_| status == RunStatus::Waiting) else {
        return Err(StoreError::NotWaiting {
            waiting: if status == RunStatus::Waiting {
                waiting_calls(state)
            } else {
                "nothing waits".to_owned()
            },
            run_id: run.clone(),
            call_id: item_id.to_owned(),
            status: status.as_str(),
        });
    };
    item.fits(reply).map_err(|why| StoreError::WrongReply {
        run_id: run.clone(),
        item_id: item_id.to_owned(),
        why,
    })
}

/// The items of `after`, a waiting state a store is about to write over
/// `before`, whose recorded replies stand: those that waited in `before`
/// too, shown the same way (the same approval or question id). A resume
/// that ran some items and left the rest waiting, or found no reply for
/// any, keeps the replies recorded for the rest; a new pause starts with
/// none. For stores.
#[must_use]
pub fn replies_kept(before: &RunState, after: &RunState) -> Vec<String> {
    let was = before.pending();
    after
        .pending()
        .into_iter()
        .filter(|item| {
            was.iter()
                .any(|w| w.id == item.id && w.item.request_id() == item.item.request_id())
        })
        .map(|item| item.id)
        .collect()
}

/// The items that wait in `state`, in words for an error: "the call that
/// waits is `c2` (`write_file`)", or "nothing waits".
#[must_use]
pub fn waiting_calls(state: &RunState) -> String {
    let items: Vec<String> = state
        .pending()
        .iter()
        .map(|pending| match pending.item.wait() {
            Wait::Approval { request } => format!("`{}` (`{}`)", pending.id, request.tool),
            _ => format!("`{}` (a question)", pending.id),
        })
        .collect();
    match items.as_slice() {
        [] => "nothing waits".to_owned(),
        [one] => format!("the item that waits is {one}"),
        many => format!("the items that wait are {}", many.join(", ")),
    }
}

/// Refuses a write by `holder` of a run at `version` leased to
/// `lease_holder`, unless `holder` holds the lease and, when a version is
/// `expected`, the run is still at it.
///
/// # Errors
/// [`StoreError::Conflict`] otherwise.
pub fn check_writer(
    run: &RunId,
    version: u64,
    lease_holder: Option<&str>,
    holder: &str,
    expected: Option<u64>,
) -> Result<(), StoreError> {
    if lease_holder == Some(holder) && expected.is_none_or(|e| e == version) {
        return Ok(());
    }
    Err(StoreError::Conflict {
        run_id: run.clone(),
        expected: expected.unwrap_or(version),
        found: version,
    })
}

/// The refusal for a lease someone else holds at `now`, if one does.
#[must_use]
pub fn held_by_other(
    run: &RunId,
    lease: Option<&Lease>,
    holder: &str,
    now: u64,
) -> Option<StoreError> {
    match lease {
        Some(lease) if lease.holder != holder && lease.until_ms > now => Some(StoreError::Held {
            run_id: run.clone(),
            holder: lease.holder.clone(),
            remaining_ms: lease.until_ms - now,
        }),
        _ => None,
    }
}
