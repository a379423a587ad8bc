//! Which call ids reached their body, per run: a call id runs at most once.
//!
//! The ids of at most `limit` runs are kept: a host whose runs never call
//! `finish_run` still holds a bounded set. Past the limit the oldest run's
//! ids are forgotten, and a call that reuses one of them could run again,
//! so the limit is set far above the runs a host keeps alive at once.

use std::collections::VecDeque;
use std::hash::BuildHasher as _;

use hashbrown::HashTable;
use iris_core::RunId;
use rustc_hash::{FxBuildHasher, FxHashMap};

/// Finished runs' sets kept for reuse.
const SPARE_SETS: usize = 8;
/// Sets that grew past this many ids are dropped rather than kept.
const MAX_KEPT_IDS: usize = 4096;
/// Sets whose text grew past this many bytes are dropped rather than kept.
const MAX_KEPT_TEXT: usize = 256 * 1024;

/// Call ids per run. A finished run's set is cleared and kept for the next
/// run, so a steady stream of runs records ids without allocating; the set
/// used last is kept apart, so the usual call (of the same run as the one
/// before) finds it without a lookup.
#[derive(Debug)]
pub(super) struct ExecutedIds {
    /// The run recorded last: most calls belong to the run before them.
    current: Option<(RunId, RunIds)>,
    runs: FxHashMap<RunId, RunIds>,
    spare: Vec<RunIds>,
    /// Runs in the order they began; may name finished runs, skipped when
    /// met.
    order: VecDeque<RunId>,
    limit: usize,
}

impl Default for ExecutedIds {
    fn default() -> Self {
        Self::with_limit(DEFAULT_MAX_RUNS)
    }
}

/// Runs whose call ids are kept unless configured.
pub const DEFAULT_MAX_RUNS: usize = 10_000;

/// The ids of one run, their text side by side in one buffer: recording an
/// id copies its bytes instead of allocating a string for each (that
/// allocation was the larger part of the cost of recording).
#[derive(Debug, Default)]
struct RunIds {
    text: String,
    /// Hash, start and length in `text` of each id.
    spans: HashTable<(u64, usize, usize)>,
}

impl RunIds {
    fn insert(&mut self, id: &str) -> bool {
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

    fn clear(&mut self) {
        self.text.clear();
        self.spans.clear();
    }

    fn worth_keeping(&self) -> bool {
        self.spans.capacity() <= MAX_KEPT_IDS && self.text.capacity() <= MAX_KEPT_TEXT
    }
}

impl ExecutedIds {
    pub(super) fn with_limit(limit: usize) -> Self {
        Self {
            current: None,
            runs: FxHashMap::default(),
            spare: Vec::new(),
            order: VecDeque::new(),
            limit: limit.max(1),
        }
    }

    /// Runs whose ids are held.
    fn held(&self) -> usize {
        self.runs.len() + usize::from(self.current.is_some())
    }

    /// Makes room for a new run and notes when it began.
    fn admit(&mut self, run: &RunId) {
        while self.held() >= self.limit {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            self.finish(&oldest);
        }
        self.order.push_back(run.clone());
        if self.order.len() > self.limit.saturating_mul(2) {
            let (runs, current) = (&self.runs, &self.current);
            self.order.retain(|r| {
                r == run || runs.contains_key(r) || current.as_ref().is_some_and(|(c, _)| c == r)
            });
        }
    }

    /// Records `call_id` for `run`; `false` when it was already recorded.
    pub(super) fn first_time(&mut self, run: &RunId, call_id: &str) -> bool {
        self.ids_of(run).insert(call_id)
    }

    /// The set of `run`, made current.
    fn ids_of(&mut self, run: &RunId) -> &mut RunIds {
        let is_current = matches!(&self.current, Some((current, _)) if current == run);
        if !is_current {
            let ids = if let Some(ids) = self.runs.remove(run) {
                ids
            } else {
                self.admit(run);
                self.spare.pop().unwrap_or_default()
            };
            if let Some((previous, ids)) = self.current.replace((run.clone(), ids)) {
                self.runs.insert(previous, ids);
            }
        }
        let (_, ids) = self
            .current
            .get_or_insert_with(|| (run.clone(), RunIds::default()));
        ids
    }

    /// Forgets a finished run's ids.
    pub(super) fn finish(&mut self, run: &RunId) {
        let finished = match &self.current {
            Some((current, _)) if current == run => self.current.take().map(|(_, ids)| ids),
            _ => self.runs.remove(run),
        };
        if let Some(mut ids) = finished
            && self.spare.len() < SPARE_SETS
            && ids.worth_keeping()
        {
            ids.clear();
            self.spare.push(ids);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use proptest::prelude::*;

    use super::*;

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

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Hostile call ids (the model and the provider make them) are told
        /// apart exactly as a plain set of strings per run would.
        #[test]
        fn agrees_with_a_set_per_run(steps in proptest::collection::vec(step(), 0..200)) {
            let runs = [RunId::new("a"), RunId::new("b"), RunId::new("c")];
            let mut executed = ExecutedIds::default();
            let mut model: HashMap<usize, HashSet<String>> = HashMap::new();
            for step in steps {
                match step {
                    Step::Record { run, id } => {
                        let expected = model.entry(run).or_default().insert(id.clone());
                        prop_assert_eq!(executed.first_time(&runs[run], &id), expected, "{:?} in run {}", id, run);
                    }
                    Step::Finish { run } => {
                        executed.finish(&runs[run]);
                        model.remove(&run);
                    }
                }
            }
        }
    }

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

    #[test]
    fn runs_that_take_turns_keep_their_own_ids() {
        let mut executed = ExecutedIds::default();
        let (a, b) = (RunId::new("a"), RunId::new("b"));
        for i in 0..50 {
            let id = format!("call_{i}");
            assert!(executed.first_time(&a, &id));
            assert!(executed.first_time(&b, &id));
            assert!(!executed.first_time(&a, &id));
            assert!(!executed.first_time(&b, &id));
        }
        executed.finish(&b);
        assert!(executed.first_time(&b, "call_0"), "b starts afresh");
        assert!(!executed.first_time(&a, "call_0"), "a still remembers");
        executed.finish(&a);
        executed.finish(&b);
        assert!(executed.current.is_none() && executed.runs.is_empty());
    }

    #[test]
    fn runs_that_never_finish_are_bounded() {
        let mut executed = ExecutedIds::with_limit(3);
        for i in 0..1_000 {
            let run = RunId::new(format!("run-{i}"));
            assert!(executed.first_time(&run, "call_0"));
            assert!(!executed.first_time(&run, "call_0"));
            assert!(executed.held() <= 3);
            assert!(executed.order.len() <= 7);
        }
        // The newest runs still refuse a repeated id.
        assert!(!executed.first_time(&RunId::new("run-998"), "call_0"));
        assert!(!executed.first_time(&RunId::new("run-999"), "call_0"));
    }

    #[test]
    fn ids_that_share_text_are_told_apart() {
        let mut ids = RunIds::default();
        // "ab" + "c" and "a" + "bc" leave the same bytes in the buffer.
        for id in ["ab", "c", "a", "bc", "abc", ""] {
            assert!(ids.insert(id), "{id:?} is new");
        }
        for id in ["ab", "c", "a", "bc", "abc", ""] {
            assert!(!ids.insert(id), "{id:?} was recorded");
        }
        assert!(ids.insert("ca"));
    }

    #[test]
    fn many_ids_survive_the_table_growing() {
        let mut ids = RunIds::default();
        for i in 0..10_000 {
            assert!(ids.insert(&format!("call_{i}")));
        }
        for i in 0..10_000 {
            assert!(!ids.insert(&format!("call_{i}")));
        }
    }
}
