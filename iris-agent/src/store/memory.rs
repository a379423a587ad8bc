//! The store of one process: runs in a map, gone when the process ends.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use iris_core::{BoxFuture, RunId, ToolResult};
use iris_runtime::ApprovalDecision;
use rustc_hash::FxHashMap;

use super::{
    Claimed, Lease, Retention, RunStatus, RunStore, StoreError, StoredRun, held_by_other,
    lease_end, now_ms, waits_in,
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
    /// When each run was last written (ms), for retention.
    written: FxHashMap<RunId, u64>,
    /// When the last sweep for expired runs was (ms).
    swept: u64,
    by_id: FxHashMap<RunId, StoredRun>,
    /// Order of creation, for `waiting`.
    next: u64,
    created: FxHashMap<RunId, u64>,
    /// Claimed calls by run and call id, with their results once recorded.
    calls: FxHashMap<(RunId, String), Option<ToolResult>>,
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
}

impl Runs {
    fn forget(&mut self, run: &RunId) {
        self.by_id.remove(run);
        self.created.remove(run);
        self.written.remove(run);
        self.calls.retain(|(id, _), _| id != run);
    }

    /// Forgets the runs `retention` says have expired, at most once per
    /// its `sweep_every`.
    fn sweep(&mut self, retention: &Retention, now: u64) {
        let every = u64::try_from(retention.sweep_every.as_millis()).unwrap_or(u64::MAX);
        if self.swept != 0 && now.saturating_sub(self.swept) < every {
            return;
        }
        self.swept = now;
        let expired: Vec<RunId> = self
            .by_id
            .iter()
            .filter(|(id, stored)| {
                let written = self.written.get(*id).copied().unwrap_or(0);
                retention.expired(stored.status, written, now)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for run in &expired {
            self.forget(run);
        }
    }

    /// Makes room for one more run under `max_runs`, forgetting the runs
    /// that finished longest ago; `false` when none has finished.
    fn make_room(&mut self, max_runs: usize) -> bool {
        while self.by_id.len() >= max_runs {
            let oldest = self
                .by_id
                .iter()
                .filter(|(_, stored)| stored.status == RunStatus::Finished)
                .min_by_key(|(id, _)| self.written.get(*id).copied().unwrap_or(0))
                .map(|(id, _)| id.clone());
            match oldest {
                Some(run) => self.forget(&run),
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
            if runs.by_id.contains_key(&state.run_id) {
                return Err(StoreError::Exists {
                    run_id: state.run_id.clone(),
                });
            }
            if !runs.make_room(self.max_runs) {
                return Err(StoreError::Full {
                    run_id: state.run_id.clone(),
                    limit: self.max_runs,
                });
            }
            runs.written.insert(state.run_id.clone(), now);
            runs.next += 1;
            let order = runs.next;
            runs.created.insert(state.run_id.clone(), order);
            runs.by_id.insert(
                state.run_id.clone(),
                StoredRun {
                    state: state.clone(),
                    status: RunStatus::Running,
                    version: 1,
                    lease: Some(Lease {
                        holder: holder.to_owned(),
                        until_ms: lease_end(now_ms(), lease),
                    }),
                    decisions: Vec::new(),
                },
            );
            Ok(1)
        }))
    }

    fn load<'a>(&'a self, run: &'a RunId) -> BoxFuture<'a, Result<Option<StoredRun>, StoreError>> {
        ready(Ok(self.with(|runs| runs.by_id.get(run).cloned())))
    }

    fn acquire<'a>(
        &'a self,
        run: &'a RunId,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<StoredRun, StoreError>> {
        ready(self.with(|runs| {
            let stored = runs
                .by_id
                .get_mut(run)
                .ok_or_else(|| StoreError::NotFound {
                    run_id: run.clone(),
                })?;
            if stored.status == RunStatus::Finished {
                return Err(StoreError::Finished {
                    run_id: run.clone(),
                });
            }
            let now = now_ms();
            if let Some(held) = held_by_other(run, stored.lease.as_ref(), holder, now) {
                return Err(held);
            }
            stored.lease = Some(Lease {
                holder: holder.to_owned(),
                until_ms: lease_end(now, lease),
            });
            stored.version += 1;
            let taken = stored.clone();
            runs.written.insert(run.clone(), now);
            Ok(taken)
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
        ready(self.with(|runs| {
            let run = &state.run_id;
            let stored = runs
                .by_id
                .get_mut(run)
                .ok_or_else(|| StoreError::NotFound {
                    run_id: run.clone(),
                })?;
            if stored.version != expected
                || stored.lease.as_ref().is_none_or(|l| l.holder != holder)
            {
                return Err(StoreError::Conflict {
                    run_id: run.clone(),
                    expected,
                    found: stored.version,
                });
            }
            stored.state = state.clone();
            stored.status = status;
            stored.version += 1;
            stored.lease = (status == RunStatus::Running).then(|| Lease {
                holder: holder.to_owned(),
                until_ms: lease_end(now_ms(), lease),
            });
            if status == RunStatus::Waiting {
                stored.decisions.clear();
            }
            let version = stored.version;
            runs.calls.retain(|(id, _), _| id != run);
            runs.written.insert(run.clone(), now_ms());
            Ok(version)
        }))
    }

    fn claim_call<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<Claimed, StoreError>> {
        ready(self.with(|runs| {
            let stored = runs.by_id.get(run).ok_or_else(|| StoreError::NotFound {
                run_id: run.clone(),
            })?;
            if stored.lease.as_ref().is_none_or(|l| l.holder != holder) {
                return Err(StoreError::Conflict {
                    run_id: run.clone(),
                    expected: stored.version,
                    found: stored.version,
                });
            }
            let key = (run.clone(), call_id.to_owned());
            Ok(match runs.calls.get(&key) {
                Some(Some(result)) => Claimed::Ran(result.clone()),
                Some(None) => Claimed::Unfinished,
                None => {
                    runs.calls.insert(key, None);
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
        ready(self.with(
            |runs| match runs.calls.get_mut(&(run.clone(), call_id.to_owned())) {
                Some(slot) => {
                    *slot = Some(result.clone());
                    Ok(())
                }
                None => Err(StoreError::NotClaimed {
                    run_id: run.clone(),
                    call_id: call_id.to_owned(),
                }),
            },
        ))
    }

    fn decide<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        decision: &'a ApprovalDecision,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        ready(self.with(|runs| {
            let stored = runs
                .by_id
                .get_mut(run)
                .ok_or_else(|| StoreError::NotFound {
                    run_id: run.clone(),
                })?;
            if stored.status != RunStatus::Waiting || !waits_in(&stored.state, call_id) {
                return Err(StoreError::NotWaiting {
                    run_id: run.clone(),
                    call_id: call_id.to_owned(),
                    status: stored.status.as_str(),
                });
            }
            stored.decisions.retain(|(id, _)| id != call_id);
            stored
                .decisions
                .push((call_id.to_owned(), decision.clone()));
            Ok(())
        }))
    }

    fn waiting(&self, limit: usize) -> BoxFuture<'_, Result<Vec<RunId>, StoreError>> {
        ready(Ok(self.with(|runs| {
            let mut waiting: Vec<(u64, RunId)> = runs
                .by_id
                .iter()
                .filter(|(_, stored)| stored.status == RunStatus::Waiting)
                .map(|(id, _)| (runs.created.get(id).copied().unwrap_or(0), id.clone()))
                .collect();
            waiting.sort_by_key(|(order, _)| *order);
            waiting.into_iter().take(limit).map(|(_, id)| id).collect()
        })))
    }

    fn remove<'a>(&'a self, run: &'a RunId) -> BoxFuture<'a, Result<(), StoreError>> {
        self.with(|runs| {
            runs.forget(run);
        });
        ready(Ok(()))
    }
}

impl From<MemoryStore> for std::sync::Arc<dyn RunStore> {
    fn from(store: MemoryStore) -> Self {
        std::sync::Arc::new(store)
    }
}
