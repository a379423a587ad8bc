//! Calls waiting for a person: each run's are its slot in the run ledger
//! (so they end with the run), bounded in number across runs and in age.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use iris_core::RunId;
use rustc_hash::FxHashMap;

use super::permissions::ApprovalRequest;
use crate::ledger::RunLedger;

/// A call parked until a person decides: what its approval request does
/// not hold already, owning its tool now, since it outlives the request
/// that resolved it.
pub(super) struct Parked {
    pub(super) tool: std::sync::Arc<dyn iris_core::DynTool>,
    pub(super) repair: Option<&'static str>,
    pub(super) args: iris_core::ParsedArgs,
}

/// Most calls that may wait at once, across runs, unless configured.
pub const DEFAULT_MAX_PENDING_APPROVALS: usize = 10_000;

/// Most calls one run may have waiting at once, unless configured: one run
/// (one model answer with thousands of calls) cannot fill the store that
/// every run shares.
pub const DEFAULT_MAX_PENDING_APPROVALS_PER_RUN: usize = 64;

/// How long a call waits for its decision unless configured: one day.
pub const DEFAULT_APPROVAL_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// Least time between two sweeps of a full store.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Set on a call's context by a server whose callers have no identity (an
/// MCP session over stdio, or over HTTP without authentication): its
/// executor-wide cap of waiting calls is applied to each run (one session
/// each) instead, so that one caller's unanswered approvals cannot refuse
/// another's. Across runs the default bound
/// ([`DEFAULT_MAX_PENDING_APPROVALS`]) still holds.
#[derive(Debug, Clone, Copy)]
pub struct CapWaitingPerRun;

/// A call parsed and waiting for its approval.
pub(super) struct Pending {
    pub(super) request: ApprovalRequest,
    pub(super) parked: Parked,
    pub(super) since: Instant,
}

/// Why a call could not start waiting.
#[derive(Debug)]
pub(super) enum Refusal {
    /// As many calls wait as the executor allows.
    Full { limit: usize },
    /// As many calls of this run wait as one run may have.
    RunFull { limit: usize },
}

/// One run's waiting calls, by call id: two runs may both use a provider's
/// `call_0`, and a second call that reuses a waiting id is refused before
/// it gets here (see `claim`).
#[derive(Default)]
struct Waiting {
    calls: FxHashMap<String, Pending>,
    /// The executor's count of waiting calls, which a run the ledger drops
    /// lowers by its own.
    counted: Option<Arc<AtomicUsize>>,
}

impl Waiting {
    fn remove(&mut self, call_id: &str) -> Option<Pending> {
        let pending = self.calls.remove(call_id)?;
        if let Some(count) = &self.counted {
            count.fetch_sub(1, Ordering::AcqRel);
        }
        Some(pending)
    }

    fn retain_fresh(&mut self, ttl: Duration) {
        let before = self.calls.len();
        self.calls.retain(|_, p| p.since.elapsed() < ttl);
        if let Some(count) = &self.counted {
            count.fetch_sub(before - self.calls.len(), Ordering::AcqRel);
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if let Some(count) = &self.counted {
            count.fetch_sub(self.calls.len(), Ordering::AcqRel);
        }
    }
}

/// How many calls may wait: in all, and in one run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) limit: usize,
    pub(super) per_run: usize,
}

/// The executor's view of the waiting calls in its ledger.
#[derive(Default)]
pub(super) struct PendingApprovals {
    count: Arc<AtomicUsize>,
    /// When expired calls were last swept out; sweeping walks every run,
    /// so a full store is swept at most once a second, not on each insert.
    swept: Mutex<Option<Instant>>,
}

impl PendingApprovals {
    /// Adds a waiting call after dropping those that waited past `ttl`.
    pub(super) fn insert(
        &self,
        ledger: &RunLedger,
        pending: Pending,
        limits: Limits,
        ttl: Duration,
    ) -> Result<(), (Refusal, Box<Pending>)> {
        let Limits { limit, per_run } = limits;
        let run = &pending.request.run_id;
        let waiting_in_run = ledger
            .update_slot(run, |waiting: &mut Waiting| {
                waiting.retain_fresh(ttl);
                waiting.calls.len()
            })
            .unwrap_or(0);
        if waiting_in_run >= per_run {
            return Err((Refusal::RunFull { limit: per_run }, Box::new(pending)));
        }
        if self.count.load(Ordering::Acquire) >= limit && self.sweep_due() {
            ledger.for_each_slot(|_, waiting: &mut Waiting| waiting.retain_fresh(ttl));
        }
        if self.count.load(Ordering::Acquire) >= limit {
            return Err((Refusal::Full { limit }, Box::new(pending)));
        }
        self.put(ledger, pending);
        Ok(())
    }

    /// Takes the call `call_id` of `run` if it waits and has not expired.
    pub(super) fn take(
        ledger: &RunLedger,
        run: &RunId,
        call_id: &str,
        ttl: Duration,
    ) -> Option<Pending> {
        let pending =
            ledger.update_slot(run, |waiting: &mut Waiting| waiting.remove(call_id))??;
        (pending.since.elapsed() < ttl).then_some(pending)
    }

    /// Puts back a call that `take` returned and that must keep waiting.
    pub(super) fn restore(&self, ledger: &RunLedger, pending: Pending) {
        self.put(ledger, pending);
    }

    fn put(&self, ledger: &RunLedger, pending: Pending) {
        let run = pending.request.run_id.clone();
        ledger.with_slot(&run, |waiting: &mut Waiting| {
            let count = waiting
                .counted
                .get_or_insert_with(|| Arc::clone(&self.count));
            let id = pending.request.call_id.clone();
            if waiting.calls.insert(id, pending).is_none() {
                count.fetch_add(1, Ordering::AcqRel);
            }
        });
    }

    /// Every waiting call's request that has not expired.
    pub(super) fn requests(ledger: &RunLedger, ttl: Duration) -> Vec<ApprovalRequest> {
        let mut requests = Vec::new();
        ledger.for_each_slot(|_, waiting: &mut Waiting| {
            requests.extend(
                waiting
                    .calls
                    .values()
                    .filter(|p| p.since.elapsed() < ttl)
                    .map(|p| p.request.clone()),
            );
        });
        requests
    }

    fn sweep_due(&self) -> bool {
        let mut swept = self.swept.lock().unwrap_or_else(PoisonError::into_inner);
        let due = swept.is_none_or(|at| at.elapsed() >= SWEEP_EVERY);
        if due {
            *swept = Some(Instant::now());
        }
        due
    }
}
