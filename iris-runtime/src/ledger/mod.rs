//! The run ledger: the one owner of everything that lives as long as a run.
//!
//! Each part of Iris that keeps something per run keeps it in a slot of the
//! run's ledger entry, a value of its own type: the executor its executed
//! call ids, waiting approvals and sync bodies still running; discovery the
//! tools it disclosed; the runner the full text of old results; the file
//! service what the run read. The ledger holds at most
//! [`LedgerLimits::max_runs`] runs and drops a run untouched for
//! [`LedgerLimits::idle_timeout`], so a host whose runs wait for a person
//! and are never resumed stays within a fixed bound. Ending a run, through
//! [`RunLedger::finish_run`] (which `ToolExecutor::finish_run` calls) or a
//! [`RunGuard`] that is dropped, forgets every slot at once.
//!
//! ```
//! use std::sync::Arc;
//! use iris_core::RunId;
//! use iris_runtime::ledger::RunLedger;
//!
//! #[derive(Default)]
//! struct Seen(Vec<String>);
//!
//! let ledger = Arc::new(RunLedger::default());
//! let run = RunId::new("run-1");
//! ledger.with_slot(&run, |seen: &mut Seen| seen.0.push("report.md".into()));
//! assert_eq!(ledger.read_slot(&run, |seen: &Seen| seen.0.len()), Some(1));
//! ledger.finish_run(&run);
//! assert_eq!(ledger.read_slot(&run, |seen: &Seen| seen.0.len()), None);
//! ```

use std::any::{Any, TypeId};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use iris_core::RunId;

use claims::{Claims, SpareSets};
use consumed::Consumed;
use held::Held;

mod claims;
mod consumed;
mod held;

/// Runs held at once unless configured.
pub const DEFAULT_MAX_RUNS: usize = 10_000;

/// How long a run may go untouched before it is dropped, unless
/// configured: one day, as long as a call waits for its approval.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// Least time between two sweeps for idle runs: a sweep walks every run.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// The ledger's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LedgerLimits {
    /// Most runs held; past it the oldest run is dropped whole. A dropped
    /// run's executed call ids are forgotten (a reused id could run again),
    /// its waiting calls expire and its edits must read again, so set it
    /// far above the runs a host keeps alive at once.
    pub max_runs: usize,
    /// A run nothing touched for this long is dropped whole: found by a
    /// sweep when a run is added, at most once a second, so a run may
    /// outlive it by that much, and is never dropped while in use.
    pub idle_timeout: Duration,
}

impl Default for LedgerLimits {
    fn default() -> Self {
        Self {
            max_runs: DEFAULT_MAX_RUNS,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        }
    }
}

/// What lives as long as a run, per run and per slot type; see the
/// [module docs](self).
///
/// A slot type is any `Default + Send + 'static` type; a part of Iris
/// keeps its own private type, so no two parts share a slot by accident.
pub struct RunLedger {
    runs: Mutex<Runs>,
    limits: LedgerLimits,
    /// Claim sets of finished runs, cleared and reused by new runs.
    spare: SpareSets,
    /// Pauses resumed already, outliving their runs; at most
    /// [`RunLedger::consumed_bound`].
    consumed: Mutex<Consumed>,
}

impl std::fmt::Debug for RunLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunLedger")
            .field("runs", &self.len())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Default for RunLedger {
    fn default() -> Self {
        Self::new(LedgerLimits::default())
    }
}

#[derive(Default)]
struct Runs {
    entries: Held<Entry>,
    /// Runs in the order they were added; may name runs dropped since,
    /// which are skipped (and compacted away) when met.
    order: VecDeque<RunId>,
    swept: Option<Instant>,
}

struct Entry {
    /// When a sweep last found the run touched (or when it was added).
    touched: Instant,
    /// Touched since the last sweep.
    seen: bool,
    /// The call ids the run claimed: kept apart from the typed slots since
    /// every call touches it.
    claims: Claims,
    /// A handful at most, one per part of Iris: a scan beats a map.
    slots: Vec<(TypeId, Box<dyn Any + Send>)>,
}

impl Entry {
    fn new(now: Instant, claims: Claims) -> Self {
        Self {
            touched: now,
            seen: false,
            claims,
            slots: Vec::new(),
        }
    }
}

/// A run's id as the consumed pauses name it.
fn run_hash(run: &RunId) -> u64 {
    use std::hash::BuildHasher as _;
    rustc_hash::FxBuildHasher.hash_one(run.as_str())
}

/// What the ledger let go of under its lock, dropped after the lock is
/// released: a slot's `Drop` may take locks of its own.
type Dropped = Vec<Entry>;

impl RunLedger {
    /// A ledger with these bounds (a `max_runs` of 0 holds one run).
    #[must_use]
    pub fn new(limits: LedgerLimits) -> Self {
        Self {
            runs: Mutex::new(Runs::default()),
            limits: LedgerLimits {
                max_runs: limits.max_runs.max(1),
                idle_timeout: limits.idle_timeout,
            },
            spare: SpareSets::default(),
            consumed: Mutex::new(Consumed::default()),
        }
    }

    /// The bounds.
    #[must_use]
    pub fn limits(&self) -> LedgerLimits {
        self.limits
    }

    /// Runs held now.
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no run is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `run` is held.
    #[must_use]
    pub fn contains(&self, run: &RunId) -> bool {
        self.lock().entries.contains(run)
    }

    /// Runs `f` on `run`'s slot of type `T`, made with `T::default()` (and
    /// the run added, dropping the oldest when the ledger is full) when it
    /// has none. The ledger is locked meanwhile: keep `f` short and never
    /// reach the ledger from it.
    pub fn with_slot<T, R>(&self, run: &RunId, f: impl FnOnce(&mut T) -> R) -> R
    where
        T: Default + Send + 'static,
    {
        self.on_entry(run, |entry| with_made(entry, f))
    }

    /// Claims `call_id` for `run` (adding the run when missing): `true` the
    /// first time, `false` when the run claimed it already. A call id runs
    /// at most once per run while the run is held.
    pub fn claim(&self, run: &RunId, call_id: &str) -> bool {
        self.on_entry(run, |entry| entry.claims.first_time(call_id))
    }

    /// Runs `f` on `run`'s slot of type `T` when it has one; `None`
    /// otherwise (nothing is added).
    pub fn read_slot<T, R>(&self, run: &RunId, f: impl FnOnce(&T) -> R) -> Option<R>
    where
        T: Send + 'static,
    {
        self.update_slot(run, |slot: &mut T| f(slot))
    }

    /// Runs `f` on `run`'s slot of type `T` when it has one, mutably.
    pub fn update_slot<T, R>(&self, run: &RunId, f: impl FnOnce(&mut T) -> R) -> Option<R>
    where
        T: Send + 'static,
    {
        let mut runs = self.lock();
        let entry = runs.entries.get_mut(run)?;
        entry.seen = true;
        find_mut::<T>(entry).map(f)
    }

    /// Takes `run`'s slot of type `T` out of the ledger.
    pub fn take_slot<T>(&self, run: &RunId) -> Option<T>
    where
        T: Send + 'static,
    {
        let mut runs = self.lock();
        let entry = runs.entries.get_mut(run)?;
        entry.seen = true;
        let at = entry
            .slots
            .iter()
            .position(|(id, _)| *id == TypeId::of::<T>())?;
        let (_, slot) = entry.slots.swap_remove(at);
        slot.downcast::<T>().ok().map(|slot| *slot)
    }

    /// Runs `f` on every held run's slot of type `T`, in no given order.
    pub fn for_each_slot<T>(&self, mut f: impl FnMut(&RunId, &mut T))
    where
        T: Send + 'static,
    {
        let mut runs = self.lock();
        for (run, entry) in runs.entries.iter_mut() {
            if let Some(slot) = find_mut::<T>(entry) {
                f(run, slot);
            }
        }
    }

    /// Consumes the pause `pause` of run `run` names (a digest its owner
    /// makes of what the pause waits on): `true` the first time, `false`
    /// when it was consumed already. Unlike a run's slots it outlives the run, so a
    /// pause is consumed once for the life of the ledger; the latest
    /// [`consumed_bound`](Self::consumed_bound) are kept.
    pub fn consume_pause(&self, run: &RunId, pause: [u8; 32]) -> bool {
        let bound = self.consumed_bound();
        self.consumed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .first_time(pause, run_hash(run), bound)
    }

    /// Forgets the pauses of `run` consumed so far: a run started again
    /// under the same id is a new run, whose pauses are its own.
    pub fn forget_pauses(&self, run: &RunId) {
        self.consumed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .forget_run(run_hash(run));
    }

    /// Gives back a pause [`consume_pause`](Self::consume_pause) took, when
    /// the resume that took it was refused before anything ran.
    pub fn restore_pause(&self, pause: &[u8; 32]) {
        self.consumed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .forget(pause);
    }

    /// How many consumed pauses are kept: eight per run the ledger holds
    /// (at the default bound, 80,000 digests, about 6 MB).
    #[must_use]
    pub fn consumed_bound(&self) -> usize {
        self.limits.max_runs.saturating_mul(8)
    }

    /// Ends `run`: every slot of it is dropped, whatever part kept it.
    pub fn finish_run(&self, run: &RunId) {
        let removed = self.lock().entries.remove(run);
        if let Some(entry) = removed {
            self.spare.keep(entry.claims);
        }
    }

    /// A guard whose drop ends `run` (see [`finish_run`](Self::finish_run)).
    #[must_use]
    pub fn guard(self: &Arc<Self>, run: RunId) -> RunGuard {
        RunGuard {
            ledger: Arc::clone(self),
            run,
        }
    }

    /// Runs `f` on `run`'s entry, adding the run when missing.
    fn on_entry<R>(&self, run: &RunId, f: impl FnOnce(&mut Entry) -> R) -> R {
        let mut runs = self.lock();
        // The usual call: a run already held, found with one lookup, no
        // copy of its id and no clock read.
        if let Some(entry) = runs.entries.get_mut(run) {
            entry.seen = true;
            return f(entry);
        }
        let dropped = self.admit(&mut runs, run);
        let answer = match runs.entries.get_mut(run) {
            Some(entry) => f(entry),
            // Never taken: `admit` added the run.
            None => f(&mut Entry::new(Instant::now(), Claims::default())),
        };
        drop(runs);
        drop(dropped);
        answer
    }

    /// Adds `run` (not held): idle runs are swept when a sweep is due, then
    /// the oldest runs dropped until it fits. Returns what was let go of,
    /// to be dropped once the lock is released.
    fn admit(&self, runs: &mut Runs, run: &RunId) -> Dropped {
        let now = Instant::now();
        let mut dropped = Dropped::new();
        self.sweep_idle(runs, now, &mut dropped);
        while runs.entries.len() >= self.limits.max_runs {
            let Some(oldest) = runs.order.pop_front() else {
                break;
            };
            dropped.extend(runs.entries.remove(&oldest));
        }
        runs.order.push_back(run.clone());
        if runs.order.len() > self.limits.max_runs.saturating_mul(2) {
            let Runs { entries, order, .. } = &mut *runs;
            order.retain(|r| r == run || entries.contains(r));
        }
        runs.entries
            .insert(run.clone(), Entry::new(now, self.spare.take()));
        dropped
    }

    /// Drops the runs nothing touched for the idle timeout, at most once per
    /// sweep interval. A run is stamped with the time of the first sweep
    /// that finds it touched since the one before, so the per-call path
    /// reads no clock: a run may outlive its timeout by one interval, and
    /// is never dropped while in use.
    fn sweep_idle(&self, runs: &mut Runs, now: Instant, dropped: &mut Dropped) {
        let timeout = self.limits.idle_timeout;
        let every = SWEEP_EVERY.min(timeout / 2);
        if runs.swept.is_some_and(|at| now.duration_since(at) < every) {
            return;
        }
        runs.swept = Some(now);
        let idle: Vec<RunId> = runs
            .entries
            .iter_mut()
            .filter_map(|(run, entry)| {
                if std::mem::take(&mut entry.seen) {
                    entry.touched = now;
                    None
                } else {
                    (now.duration_since(entry.touched) >= timeout).then(|| run.clone())
                }
            })
            .collect();
        for run in idle {
            dropped.extend(runs.entries.remove(&run));
        }
    }

    fn lock(&self) -> MutexGuard<'_, Runs> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn find_mut<T: Send + 'static>(entry: &mut Entry) -> Option<&mut T> {
    entry
        .slots
        .iter_mut()
        .find(|(id, _)| *id == TypeId::of::<T>())
        .and_then(|(_, slot)| slot.downcast_mut::<T>())
}

/// Runs `f` on `entry`'s slot of type `T`, made with `T::default()` when
/// missing.
fn with_made<T: Default + Send + 'static, R>(entry: &mut Entry, f: impl FnOnce(&mut T) -> R) -> R {
    let found = entry
        .slots
        .iter()
        .position(|(id, _)| *id == TypeId::of::<T>());
    let at = found.unwrap_or_else(|| {
        entry
            .slots
            .push((TypeId::of::<T>(), Box::new(T::default())));
        entry.slots.len() - 1
    });
    match entry.slots[at].1.downcast_mut::<T>() {
        Some(slot) => f(slot),
        // Never taken: the slot under `TypeId::of::<T>()` is a `T`.
        None => f(&mut T::default()),
    }
}

/// Ends its run when dropped: every slot of it in the ledger is forgotten.
#[derive(Debug)]
pub struct RunGuard {
    ledger: Arc<RunLedger>,
    run: RunId,
}

impl RunGuard {
    /// The run.
    #[must_use]
    pub fn run_id(&self) -> &RunId {
        &self.run
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        self.ledger.finish_run(&self.run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Count(u32);

    #[derive(Default)]
    struct Names(Vec<&'static str>);

    fn run(i: usize) -> RunId {
        RunId::new(format!("run-{i}"))
    }

    #[test]
    fn slots_of_one_run_are_apart_and_end_together() {
        let ledger = RunLedger::default();
        ledger.with_slot(&run(1), |c: &mut Count| c.0 += 2);
        ledger.with_slot(&run(1), |n: &mut Names| n.0.push("a"));
        ledger.with_slot(&run(2), |c: &mut Count| c.0 += 5);
        assert_eq!(ledger.read_slot(&run(1), |c: &Count| c.0), Some(2));
        assert_eq!(ledger.read_slot(&run(1), |n: &Names| n.0.len()), Some(1));
        assert_eq!(ledger.read_slot(&run(2), |n: &Names| n.0.len()), None);
        ledger.finish_run(&run(1));
        assert_eq!(ledger.read_slot(&run(1), |c: &Count| c.0), None);
        assert_eq!(ledger.read_slot(&run(2), |c: &Count| c.0), Some(5));
        assert_eq!(ledger.take_slot::<Count>(&run(2)).map(|c| c.0), Some(5));
        assert_eq!(ledger.read_slot(&run(2), |c: &Count| c.0), None);
    }

    #[test]
    fn holds_at_most_the_newest_runs_and_its_queue_stays_bounded() {
        let ledger = RunLedger::new(LedgerLimits {
            max_runs: 3,
            ..LedgerLimits::default()
        });
        for i in 0..10 {
            ledger.with_slot(&run(i), |c: &mut Count| c.0 += 1);
        }
        assert_eq!(ledger.len(), 3);
        assert!(!ledger.contains(&run(6)));
        assert!(ledger.contains(&run(9)));
        for i in 10..1000 {
            ledger.with_slot(&run(i), |c: &mut Count| c.0 += 1);
            ledger.finish_run(&run(i));
        }
        assert!(ledger.lock().order.len() <= 7);
    }

    #[test]
    fn idle_runs_are_swept_and_runs_in_use_are_kept() {
        let ledger = RunLedger::new(LedgerLimits {
            max_runs: 10,
            idle_timeout: Duration::from_millis(40),
        });
        ledger.with_slot(&run(1), |c: &mut Count| c.0 += 1);
        ledger.with_slot(&run(2), |c: &mut Count| c.0 += 1);
        for i in 0..4 {
            std::thread::sleep(Duration::from_millis(25));
            // Run 2 is in use; each new run sweeps.
            ledger.with_slot(&run(2), |c: &mut Count| c.0 += 1);
            ledger.with_slot(&run(10 + i), |c: &mut Count| c.0 += 1);
        }
        assert!(!ledger.contains(&run(1)), "untouched for 100 ms");
        assert_eq!(ledger.read_slot(&run(2), |c: &Count| c.0), Some(5));
    }

    #[test]
    fn a_guard_ends_its_run() {
        let ledger = Arc::new(RunLedger::default());
        {
            let guard = ledger.guard(run(1));
            ledger.with_slot(guard.run_id(), |c: &mut Count| c.0 += 1);
            assert!(ledger.contains(&run(1)));
        }
        assert!(!ledger.contains(&run(1)));
    }
}
