//! Which call ids of one run were claimed (reached their body or began to
//! wait for approval): a call id runs at most once. Every run entry of the
//! ledger holds its set, the one slot every call touches.

use std::hash::BuildHasher as _;
use std::sync::{Mutex, PoisonError};

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// Finished runs' sets kept for reuse.
const SPARE_SETS: usize = 8;
/// Sets that grew past this many ids are dropped rather than kept.
const MAX_KEPT_IDS: usize = 4096;
/// Sets whose text grew past this many bytes are dropped rather than kept.
const MAX_KEPT_TEXT: usize = 256 * 1024;

/// The ids of one run, their text side by side in one buffer: recording an
/// id copies its bytes instead of allocating a string for each (that
/// allocation was the larger part of the cost of recording).
#[derive(Debug, Default)]
pub(crate) struct Claims {
    text: String,
    /// Hash, start and length in `text` of each id.
    spans: HashTable<(u64, usize, usize)>,
}

impl Claims {
    /// Records `id`; `false` when it was already recorded.
    pub(crate) fn first_time(&mut self, id: &str) -> bool {
        let hash = FxBuildHasher.hash_one(id);
        let text = &self.text;
        let same = |&(h, start, len): &(u64, usize, usize)| {
            h == hash && text.get(start..start + len) == Some(id)
        };
        match self.spans.entry(hash, same, |&(h, _, _)| h) {
            hashbrown::hash_table::Entry::Occupied(_) => false,
            hashbrown::hash_table::Entry::Vacant(slot) => {
                slot.insert((hash, self.text.len(), id.len()));
                self.text.push_str(id);
                true
            }
        }
    }
}

/// Sets of finished runs, cleared and kept for the next runs: a steady
/// stream of runs records ids without growing a new table each time.
#[derive(Debug, Default)]
pub(crate) struct SpareSets(Mutex<Vec<Claims>>);

impl SpareSets {
    /// A set for a new run.
    pub(crate) fn take(&self) -> Claims {
        self.lock().pop().unwrap_or_default()
    }

    /// Keeps a finished run's set, unless enough are kept or it grew large.
    pub(crate) fn keep(&self, mut ids: Claims) {
        if ids.spans.capacity() > MAX_KEPT_IDS || ids.text.capacity() > MAX_KEPT_TEXT {
            return;
        }
        ids.text.clear();
        ids.spans.clear();
        let mut spare = self.lock();
        if spare.len() < SPARE_SETS {
            spare.push(ids);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Claims>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use iris_core::RunId;
    use proptest::prelude::*;

    use super::*;
    use crate::ledger::{LedgerLimits, RunLedger};

    #[derive(Debug, Clone)]
    enum Step {
        Record { run: usize, id: String },
        Finish { run: usize },
    }

    fn step() -> impl Strategy<Value = Step> {
        // Few runs and short ids from a small alphabet, so runs interleave
        // and ids repeat, share prefixes and run into each other in the buffer.
        let letter = prop_oneof![Just('a'), Just('b'), Just('_'), Just('1'), Just('é')];
        let id = proptest::collection::vec(letter, 0..6).prop_map(String::from_iter);
        prop_oneof![
            8 => (0..3usize, id).prop_map(|(run, id)| Step::Record { run, id }),
            1 => (0..3usize).prop_map(|run| Step::Finish { run }),
        ]
    }

    fn first_time(ledger: &RunLedger, run: &RunId, id: &str) -> bool {
        ledger.claim(run, id)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Hostile call ids (the model and the provider make them) are told
        /// apart exactly as a plain set of strings per run would.
        #[test]
        fn agrees_with_a_set_per_run(steps in proptest::collection::vec(step(), 0..200)) {
            let runs = [RunId::new("a"), RunId::new("b"), RunId::new("c")];
            let ledger = RunLedger::default();
            let mut model: HashMap<usize, HashSet<String>> = HashMap::new();
            for step in steps {
                match step {
                    Step::Record { run, id } => {
                        let expected = model.entry(run).or_default().insert(id.clone());
                        prop_assert_eq!(first_time(&ledger, &runs[run], &id), expected, "{:?} in run {}", id, run);
                    }
                    Step::Finish { run } => {
                        ledger.finish_run(&runs[run]);
                        model.remove(&run);
                    }
                }
            }
        }
    }

    #[test]
    fn runs_that_take_turns_keep_their_own_ids() {
        let ledger = RunLedger::default();
        let (a, b) = (RunId::new("a"), RunId::new("b"));
        for i in 0..50 {
            let id = format!("call_{i}");
            assert!(first_time(&ledger, &a, &id));
            assert!(first_time(&ledger, &b, &id));
            assert!(!first_time(&ledger, &a, &id));
            assert!(!first_time(&ledger, &b, &id));
        }
        ledger.finish_run(&b);
        assert!(first_time(&ledger, &b, "call_0"), "b starts afresh");
        assert!(!first_time(&ledger, &a, "call_0"), "a still remembers");
    }

    #[test]
    fn runs_that_never_finish_are_bounded() {
        let ledger = RunLedger::new(LedgerLimits {
            max_runs: 3,
            ..LedgerLimits::default()
        });
        for i in 0..1_000 {
            let run = RunId::new(format!("run-{i}"));
            assert!(first_time(&ledger, &run, "call_0"));
            assert!(!first_time(&ledger, &run, "call_0"));
            assert!(ledger.len() <= 3);
        }
        // The newest runs still refuse a repeated id.
        assert!(!first_time(&ledger, &RunId::new("run-998"), "call_0"));
        assert!(!first_time(&ledger, &RunId::new("run-999"), "call_0"));
    }

    #[test]
    fn ids_that_share_text_are_told_apart() {
        let mut ids = Claims::default();
        // "ab" + "c" and "a" + "bc" leave the same bytes in the buffer.
        for id in ["ab", "c", "a", "bc", "abc", ""] {
            assert!(ids.first_time(id), "{id:?} is new");
        }
        for id in ["ab", "c", "a", "bc", "abc", ""] {
            assert!(!ids.first_time(id), "{id:?} was recorded");
        }
        assert!(ids.first_time("ca"));
    }

    #[test]
    fn many_ids_survive_the_table_growing() {
        let mut ids = Claims::default();
        for i in 0..10_000 {
            assert!(ids.first_time(&format!("call_{i}")));
        }
        for i in 0..10_000 {
            assert!(!ids.first_time(&format!("call_{i}")));
        }
    }
}
