//! The store of one process: runs in a map, gone when the process ends.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use iris_core::{BoxFuture, RunId, ToolResult};
use iris_runtime::Reply;
use rustc_hash::FxHashMap;

use super::{
    Claimed, Lease, Retention, RunStatus, RunStore, StoreError, StoredRun, check_reply,
    check_writer, held_by_other, lease_end, now_ms, replies_kept,
};
use crate::state::RunState;

/// Runs held at once unless set.
pub const DEFAULT_MAX_RUNS: usize = 10_000;

/// Runs kept in this process's memory, with the same rules as a durable
/// store (versions, leases, decisions, retention): for one process, and
/// for tests. It holds at most [`DEFAULT_MAX_RUNS`] runs unless set: past
/// that the oldest finished runs go first, and a new run is refused
/// ([`StoreError::Full`]) when none has finished.
#[derive(Debug)]
pub struct MemoryStore {
    runs: Mutex<Runs>,
    retention: Retention,
    max_runs: usize,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self {
            runs: Mutex::default(),
            retention: Retention::default(),
            max_runs: DEFAULT_MAX_RUNS,
        }
    }
}

#[derive(Debug, Default)]
struct Runs {
    by_id: FxHashMap<RunId, Kept>,
    /// Counts runs created, for the order `waiting` lists them in.
    created: u64,
    /// When the last sweep for expired runs was (ms).
    swept: u64,
}

/// One run as the store keeps it.
#[derive(Debug)]
struct Kept {
    run: StoredRun,
    /// Its place in the order of creation.
    order: u64,
    /// When it was last written (ms), for retention.
    written: u64,
    /// Its claimed calls by call id, with their results once recorded.
    calls: FxHashMap<String, Option<ToolResult>>,
    /// The states of its children at their last step boundary, part of
    /// this run's record (one per child run, replaced at each boundary).
    children: Vec<RunState>,
}

impl MemoryStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps runs as long as `retention` says.
    #[must_use]
    pub fn with_retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// Holds at most `max_runs` runs.
    #[must_use]
    pub fn with_max_runs(mut self, max_runs: usize) -> Self {
        self.max_runs = max_runs.max(1);
        self
    }

    fn with<R>(&self, f: impl FnOnce(&mut Runs) -> R) -> R {
        f(&mut self.runs.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// `f` on `run`'s entry, or [`StoreError::NotFound`].
    fn on_run<R>(
        &self,
        run: &RunId,
        f: impl FnOnce(&mut Kept) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        self.with(|runs| match runs.by_id.get_mut(run) {
            Some(kept) => f(kept),
            None => Err(StoreError::NotFound {
                run_id: run.clone(),
            }),
        })
    }
}

impl Runs {
    /// Forgets the runs `retention` says have expired, at most once per
    /// its `sweep_every`.
    fn sweep(&mut self, retention: &Retention, now: u64) {
        let every = u64::try_from(retention.sweep_every.as_millis()).unwrap_or(u64::MAX);
        if self.swept != 0 && now.saturating_sub(self.swept) < every {
            return;
        }
        self.swept = now;
        self.by_id
            .retain(|_, kept| !retention.expired(kept.run.status, kept.written, now));
    }

    /// Makes room for one more run under `max_runs`, forgetting the runs
    /// that finished longest ago; `false` when none has finished.
    fn make_room(&mut self, max_runs: usize) -> bool {
        while self.by_id.len() >= max_runs {
            let oldest = self
                .by_id
                .iter()
                .filter(|(_, kept)| kept.run.status == RunStatus::Finished)
                .min_by_key(|(_, kept)| kept.written)
                .map(|(id, _)| id.clone());
            match oldest {
                Some(run) => {
                    self.by_id.remove(&run);
                }
                None => return false,
            }
        }
        true
    }
}

fn ready<'a, T: Send + 'a>(value: T) -> BoxFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl RunStore for MemoryStore {
    fn create<'a>(
        &'a self,
        state: &'a RunState,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        ready(self.with(|runs| {
            let now = now_ms();
            runs.sweep(&self.retention, now);
            let run_id = &state.run_id;
            if runs.by_id.contains_key(run_id) {
                return Err(StoreError::Exists {
                    run_id: run_id.clone(),
                });
            }
            if !runs.make_room(self.max_runs) {
                return Err(StoreError::Full {
                    run_id: run_id.clone(),
                    limit: self.max_runs,
                });
            }
            runs.created += 1;
            let kept = Kept {
                run: StoredRun {
                    state: state.clone(),
                    status: RunStatus::Running,
                    version: 1,
                    lease: Some(Lease {
                        holder: holder.to_owned(),
                        until_ms: lease_end(now, lease),
                    }),
                    decisions: Vec::new(),
                },
                order: runs.created,
                written: now,
                calls: FxHashMap::default(),
                children: Vec::new(),
            };
            runs.by_id.insert(run_id.clone(), kept);
            Ok(1)
        }))
    }

    fn load<'a>(&'a self, run: &'a RunId) -> BoxFuture<'a, Result<Option<StoredRun>, StoreError>> {
        ready(Ok(self.with(|runs| {
            runs.by_id.get(run).map(|kept| kept.run.clone())
        })))
    }

    fn acquire<'a>(
        &'a self,
        run: &'a RunId,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<StoredRun, StoreError>> {
        ready(self.on_run(run, |kept| {
            if kept.run.status == RunStatus::Finished {
                return Err(StoreError::Finished {
                    run_id: run.clone(),
                });
            }
            let now = now_ms();
            if let Some(held) = held_by_other(run, kept.run.lease.as_ref(), holder, now) {
                return Err(held);
            }
            kept.run.lease = Some(Lease {
                holder: holder.to_owned(),
                until_ms: lease_end(now, lease),
            });
            kept.run.version += 1;
            kept.written = now;
            Ok(kept.run.clone())
        }))
    }

    fn save<'a>(
        &'a self,
        state: &'a RunState,
        status: RunStatus,
        holder: &'a str,
        expected: u64,
        lease: Duration,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        ready(self.on_run(&state.run_id, |kept| {
            let stored = &mut kept.run;
            let lease_holder = stored.lease.as_ref().map(|l| l.holder.as_str());
            check_writer(
                &state.run_id,
                stored.version,
                lease_holder,
                holder,
                Some(expected),
            )?;
            let now = now_ms();
            if status == RunStatus::Waiting {
                let kept = replies_kept(&stored.state, state);
                stored.decisions.retain(|(id, _)| kept.contains(id));
            }
            stored.state = state.clone();
            stored.status = status;
            stored.version += 1;
            stored.lease = (status == RunStatus::Running).then(|| Lease {
                holder: holder.to_owned(),
                until_ms: lease_end(now, lease),
            });
            kept.calls.clear();
            kept.children.clear();
            kept.written = now;
            Ok(kept.run.version)
        }))
    }

    fn claim_call<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<Claimed, StoreError>> {
        ready(self.on_run(run, |kept| {
            let lease_holder = kept.run.lease.as_ref().map(|l| l.holder.as_str());
            check_writer(run, kept.run.version, lease_holder, holder, None)?;
            Ok(match kept.calls.get(call_id) {
                Some(Some(result)) => Claimed::Ran(result.clone()),
                Some(None) => Claimed::Unfinished,
                None => {
                    kept.calls.insert(call_id.to_owned(), None);
                    Claimed::New
                }
            })
        }))
    }

    fn record_call<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        result: &'a ToolResult,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        // A call of a run that is not kept was not claimed either.
        ready(self.with(|runs| {
            match runs
                .by_id
                .get_mut(run)
                .and_then(|kept| kept.calls.get_mut(call_id))
            {
                Some(slot) => {
                    *slot = Some(result.clone());
                    Ok(())
                }
                None => Err(StoreError::NotClaimed {
                    run_id: run.clone(),
                    call_id: call_id.to_owned(),
                }),
            }
        }))
    }

    fn keeps_children(&self) -> bool {
        true
    }

    fn keep_child<'a>(
        &'a self,
        run: &'a RunId,
        state: &'a RunState,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        ready(self.on_run(run, |kept| {
            let lease_holder = kept.run.lease.as_ref().map(|l| l.holder.as_str());
            check_writer(run, kept.run.version, lease_holder, holder, None)?;
            match kept.children.iter_mut().find(|c| c.run_id == state.run_id) {
                Some(slot) => slot.clone_from(state),
                None => kept.children.push(state.clone()),
            }
            Ok(())
        }))
    }

    fn kept_child<'a>(
        &'a self,
        run: &'a RunId,
        child: &'a RunId,
    ) -> BoxFuture<'a, Result<Option<RunState>, StoreError>> {
        ready(Ok(self.with(|runs| {
            runs.by_id
                .get(run)
                .and_then(|kept| kept.children.iter().find(|c| c.run_id == *child).cloned())
        })))
    }

    fn decide<'a>(
        &'a self,
        run: &'a RunId,
        item_id: &'a str,
        reply: &'a Reply,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        ready(self.on_run(run, |kept| {
            let stored = &mut kept.run;
            check_reply(run, &stored.state, stored.status, item_id, reply)?;
            // A later reply replaces the earlier one where it stood: replies
            // keep the order their items were first decided in, as in the
            // SQLite store.
            match stored.decisions.iter_mut().find(|(id, _)| id == item_id) {
                Some((_, kept)) => *kept = reply.clone(),
                None => stored.decisions.push((item_id.to_owned(), reply.clone())),
            }
            Ok(())
        }))
    }

    fn waiting(&self, limit: usize) -> BoxFuture<'_, Result<Vec<RunId>, StoreError>> {
        ready(Ok(self.with(|runs| {
            let mut waiting: Vec<(u64, &RunId)> = runs
                .by_id
                .iter()
                .filter(|(_, kept)| kept.run.status == RunStatus::Waiting)
                .map(|(id, kept)| (kept.order, id))
                .collect();
            waiting.sort_by_key(|(order, _)| *order);
            waiting
                .into_iter()
                .take(limit)
                .map(|(_, id)| id.clone())
                .collect()
        })))
    }

    fn remove<'a>(&'a self, run: &'a RunId) -> BoxFuture<'a, Result<(), StoreError>> {
        self.with(|runs| runs.by_id.remove(run));
        ready(Ok(()))
    }
}

impl From<MemoryStore> for Arc<dyn RunStore> {
    fn from(store: MemoryStore) -> Self {
        Arc::new(store)
    }
}
