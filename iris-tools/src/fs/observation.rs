//! Read observations: what a run has seen of each file, so an edit can be
//! refused when it would act on text the model never read or on a file that
//! changed since.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use iris_core::RunId;
use rustc_hash::FxHashMap;

use iris_runtime::ledger::RunLedger;

/// A SHA-256 of a file's whole content.
pub type ContentHash = [u8; 32];

/// What one run has seen of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// Hash of the whole content when it was last read or written.
    pub hash: ContentHash,
    /// Lines the run has seen (1-based, inclusive, sorted, disjoint).
    pub seen: LineRanges,
    /// Lines the file had then.
    pub total_lines: usize,
}

/// A set of line numbers kept as sorted, disjoint, non-adjacent ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineRanges(Vec<(usize, usize)>);

impl LineRanges {
    /// Every line of a file of `total` lines.
    #[must_use]
    pub fn all(total: usize) -> Self {
        let mut ranges = Self::default();
        ranges.insert(1, total.max(1));
        ranges
    }

    /// The ranges, sorted.
    #[must_use]
    pub fn ranges(&self) -> &[(usize, usize)] {
        &self.0
    }

    /// Adds lines `first..=last`.
    pub fn insert(&mut self, first: usize, last: usize) {
        if first > last {
            return;
        }
        let (mut first, mut last) = (first, last);
        let mut kept = Vec::with_capacity(self.0.len() + 1);
        for &(a, b) in &self.0 {
            if b + 1 < first || last + 1 < a {
                kept.push((a, b));
            } else {
                first = first.min(a);
                last = last.max(b);
            }
        }
        kept.push((first, last));
        kept.sort_unstable();
        self.0 = kept;
    }

    /// The first line of `first..=last` that is not in the set.
    #[must_use]
    pub fn first_unseen(&self, first: usize, last: usize) -> Option<usize> {
        let mut line = first;
        for &(a, b) in &self.0 {
            if line > last {
                return None;
            }
            if a > line {
                return Some(line);
            }
            if b >= line {
                line = b + 1;
            }
        }
        (line <= last).then_some(line)
    }

    /// Records that lines `first..=old_last` became `new_count` lines:
    /// later lines move by the difference, and the new lines count as
    /// seen (the run wrote them).
    pub fn replace(&mut self, first: usize, old_last: usize, new_count: usize) {
        let old_count = old_last + 1 - first;
        // Lines after the replaced ones are past `old_count`, so this cannot underflow.
        let shift = |line: usize| (line + new_count).saturating_sub(old_count);
        let mut moved = Self::default();
        for &(a, b) in &self.0 {
            if b < first {
                moved.insert(a, b);
            } else if a > old_last {
                moved.insert(shift(a), shift(b));
            } else {
                // Overlaps the replaced lines: its part before them stays,
                // its part after them moves.
                if a < first {
                    moved.insert(a, first - 1);
                }
                if b > old_last {
                    moved.insert(shift(old_last + 1), shift(b));
                }
            }
        }
        if new_count > 0 {
            moved.insert(first, first + new_count - 1);
        }
        *self = moved;
    }
}

/// What each run read through one file service, kept in the run ledger
/// (so it is bounded and ends with the run).
#[derive(Debug)]
pub(crate) struct ObservationLog {
    ledger: Arc<RunLedger>,
    /// Tells this service's observations from those of another service
    /// (another workspace) sharing the ledger.
    service: u64,
}

/// One run's observations, per file service.
#[derive(Default)]
struct RunObservations(FxHashMap<u64, HashMap<PathBuf, Observation>>);

/// Files one run's observations cover at most; past it one is forgotten
/// for each new one. Forgetting is always safe: an edit of a forgotten file
/// is only asked to read it again.
const MAX_FILES_PER_RUN: usize = 10_000;

impl ObservationLog {
    pub(crate) fn new(ledger: Arc<RunLedger>) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Self {
            ledger,
            service: NEXT.fetch_add(1, Ordering::Relaxed),
        }
    }

    pub(crate) fn ledger(&self) -> &Arc<RunLedger> {
        &self.ledger
    }

    pub(crate) fn get(&self, run: &RunId, key: &Path) -> Option<Observation> {
        self.ledger
            .read_slot(run, |seen: &RunObservations| {
                seen.0.get(&self.service)?.get(key).cloned()
            })
            .flatten()
    }

    /// Merges a read of `first..=last` into what the run saw; a read of
    /// changed content starts over from this read alone.
    pub(crate) fn record_read(
        &self,
        run: &RunId,
        key: &Path,
        hash: ContentHash,
        total_lines: usize,
        lines: Option<(usize, usize)>,
    ) {
        self.with_files(run, |files| {
            make_room(files, key);
            let entry = files
                .entry(key.to_path_buf())
                .or_insert_with(|| Observation {
                    hash,
                    seen: LineRanges::default(),
                    total_lines,
                });
            if entry.hash != hash {
                *entry = Observation {
                    hash,
                    seen: LineRanges::default(),
                    total_lines,
                };
            }
            if let Some((first, last)) = lines {
                entry.seen.insert(first, last);
            }
        });
    }

    pub(crate) fn set(&self, run: &RunId, key: &Path, observation: Observation) {
        self.with_files(run, |files| {
            make_room(files, key);
            files.insert(key.to_path_buf(), observation);
        });
    }

    fn with_files(&self, run: &RunId, f: impl FnOnce(&mut HashMap<PathBuf, Observation>)) {
        self.ledger.with_slot(run, |seen: &mut RunObservations| {
            f(seen.0.entry(self.service).or_default());
        });
    }
}

/// Forgets one file of a full run before `key` is added to it.
fn make_room(files: &mut HashMap<PathBuf, Observation>, key: &Path) {
    if files.len() >= MAX_FILES_PER_RUN && !files.contains_key(key) {
        let forgotten = files.keys().next().cloned();
        if let Some(forgotten) = forgotten {
            files.remove(&forgotten);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_report_gaps() {
        let mut r = LineRanges::default();
        r.insert(10, 20);
        r.insert(1, 5);
        r.insert(6, 9);
        assert_eq!(r.ranges(), &[(1, 20)]);
        r.insert(30, 40);
        assert_eq!(r.first_unseen(1, 20), None);
        assert_eq!(r.first_unseen(15, 35), Some(21));
        assert_eq!(r.first_unseen(41, 41), Some(41));
    }

    #[test]
    fn replacing_lines_moves_what_follows() {
        let mut r = LineRanges::default();
        r.insert(1, 10);
        r.insert(20, 30);
        // Lines 5..=6 became 4 lines: everything after moves by 2.
        r.replace(5, 6, 4);
        assert_eq!(r.ranges(), &[(1, 12), (22, 32)]);
        // Lines 3..=8 became one line: later lines move back by 5.
        r.replace(3, 8, 1);
        assert_eq!(r.ranges(), &[(1, 7), (17, 27)]);
    }
}
