//! Calls waiting for a person, kept per run and per call id, bounded in
//! number and in age so that a long-lived host never grows without limit.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use iris_core::{ParsedArgs, RunId};

use super::permissions::ApprovalRequest;
use super::pipeline::Prepared;

/// Most calls that may wait at once, across runs, unless configured.
pub const DEFAULT_MAX_PENDING_APPROVALS: usize = 10_000;

/// How long a call waits for its decision unless configured: one day.
pub const DEFAULT_APPROVAL_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// Least time between two sweeps of a full store.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// A call parsed and waiting for its approval.
pub(super) struct Pending {
    pub(super) request: ApprovalRequest,
    pub(super) prepared: Prepared,
    pub(super) args: ParsedArgs,
    pub(super) since: Instant,
}

/// Why a call could not start waiting.
#[derive(Debug)]
pub(super) enum Refusal {
    /// As many calls wait as the executor allows.
    Full { limit: usize },
}

/// The waiting calls. A call is found by its run and its call id together:
/// two runs may both use a provider's `call_0`, and a second call that
/// reuses a waiting id is refused before it gets here (see `claim`).
#[derive(Default)]
pub(super) struct PendingApprovals {
    runs: HashMap<RunId, HashMap<String, Pending>>,
    count: usize,
    /// When expired calls were last swept out; sweeping walks every call,
    /// so a full store is swept at most once a second, not on each insert.
    swept: Option<Instant>,
}

impl PendingApprovals {
    /// Adds a waiting call after dropping those that waited past `ttl`.
    pub(super) fn insert(
        &mut self,
        pending: Pending,
        limit: usize,
        ttl: Duration,
    ) -> Result<(), (Refusal, Box<Pending>)> {
        if self.count >= limit && self.swept.is_none_or(|at| at.elapsed() >= SWEEP_EVERY) {
            self.expire(ttl);
        }
        if self.count >= limit {
            return Err((Refusal::Full { limit }, Box::new(pending)));
        }
        self.put(pending);
        Ok(())
    }

    /// Takes the call `call_id` of `run` if it waits and has not expired.
    pub(super) fn take(&mut self, run: &RunId, call_id: &str, ttl: Duration) -> Option<Pending> {
        let calls = self.runs.get_mut(run)?;
        let pending = calls.remove(call_id)?;
        self.count -= 1;
        if calls.is_empty() {
            self.runs.remove(run);
        }
        (pending.since.elapsed() < ttl).then_some(pending)
    }

    /// Puts back a call that `take` returned and that must keep waiting.
    pub(super) fn restore(&mut self, pending: Pending) {
        self.put(pending);
    }

    fn put(&mut self, pending: Pending) {
        let run = pending.request.run_id.clone();
        let id = pending.request.call_id.clone();
        if self
            .runs
            .entry(run)
            .or_default()
            .insert(id, pending)
            .is_none()
        {
            self.count += 1;
        }
    }

    /// Drops every call of `run`.
    pub(super) fn forget_run(&mut self, run: &RunId) {
        if let Some(calls) = self.runs.remove(run) {
            self.count -= calls.len();
        }
    }

    /// Every waiting call's request that has not expired.
    pub(super) fn requests(&self, ttl: Duration) -> Vec<ApprovalRequest> {
        self.runs
            .values()
            .flat_map(HashMap::values)
            .filter(|p| p.since.elapsed() < ttl)
            .map(|p| p.request.clone())
            .collect()
    }

    fn expire(&mut self, ttl: Duration) {
        self.swept = Some(Instant::now());
        let mut dropped = 0;
        self.runs.retain(|_, calls| {
            let before = calls.len();
            calls.retain(|_, p| p.since.elapsed() < ttl);
            dropped += before - calls.len();
            !calls.is_empty()
        });
        self.count -= dropped;
    }
}
