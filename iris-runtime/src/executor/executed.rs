//! Which call ids reached their body, per run: a call id runs at most once.

use iris_core::RunId;
use rustc_hash::{FxHashMap, FxHashSet};

/// Finished runs' sets kept for reuse.
const SPARE_SETS: usize = 8;
/// Sets grown past this many slots are dropped rather than kept.
const MAX_KEPT_CAPACITY: usize = 4096;

/// Call ids per run. A finished run's set is cleared and kept for the next
/// run, so a steady stream of runs does not regrow (and rehash) a set from
/// nothing each time.
#[derive(Debug, Default)]
pub(super) struct ExecutedIds {
    runs: FxHashMap<RunId, FxHashSet<String>>,
    spare: Vec<FxHashSet<String>>,
}

impl ExecutedIds {
    /// Records `call_id` for `run`; `false` when it was already recorded.
    pub(super) fn first_time(&mut self, run: &RunId, call_id: &str) -> bool {
        if let Some(ids) = self.runs.get_mut(run) {
            return ids.insert(call_id.to_owned());
        }
        let mut ids = self.spare.pop().unwrap_or_default();
        ids.insert(call_id.to_owned());
        self.runs.insert(run.clone(), ids);
        true
    }

    /// Forgets a finished run's ids.
    pub(super) fn finish(&mut self, run: &RunId) {
        if let Some(mut ids) = self.runs.remove(run)
            && self.spare.len() < SPARE_SETS
            && ids.capacity() <= MAX_KEPT_CAPACITY
        {
            ids.clear();
            self.spare.push(ids);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_run_once_per_run_and_sets_are_reused() {
        let mut executed = ExecutedIds::default();
        let (a, b) = (RunId::new("a"), RunId::new("b"));
        assert!(executed.first_time(&a, "call_1"));
        assert!(!executed.first_time(&a, "call_1"));
        assert!(executed.first_time(&b, "call_1"));
        executed.finish(&a);
        assert_eq!(executed.spare.len(), 1);
        assert!(
            executed.first_time(&a, "call_1"),
            "a finished run starts afresh"
        );
        assert!(executed.spare.is_empty());
    }
}
