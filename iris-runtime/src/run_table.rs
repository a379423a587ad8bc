//! Per-run state with a bound on how many runs it holds: a long-lived host
//! whose runs never say they finished still holds at most the newest
//! `limit` of them. The oldest run is dropped first.

use std::collections::{HashMap, VecDeque};

use iris_core::RunId;

/// State of type `T` per run, for at most `limit` runs.
#[derive(Debug)]
pub(crate) struct RunTable<T> {
    runs: HashMap<RunId, T>,
    /// Runs in the order they were added; may still name runs that were
    /// removed since, which are skipped (and compacted away) when found.
    order: VecDeque<RunId>,
    limit: usize,
}

impl<T> RunTable<T> {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            runs: HashMap::new(),
            order: VecDeque::new(),
            limit: limit.max(1),
        }
    }

    pub(crate) fn get(&self, run: &RunId) -> Option<&T> {
        self.runs.get(run)
    }

    /// The state of `run`, made with `make` (dropping the oldest run when
    /// the table is full) when it has none.
    pub(crate) fn get_or_insert_with(&mut self, run: &RunId, make: impl FnOnce() -> T) -> &mut T {
        if !self.runs.contains_key(run) {
            while self.runs.len() >= self.limit {
                let Some(oldest) = self.order.pop_front() else {
                    break;
                };
                self.runs.remove(&oldest);
            }
            self.order.push_back(run.clone());
            // Finished runs leave their names behind; drop them before the
            // queue outgrows the table by much.
            if self.order.len() > self.limit.saturating_mul(2) {
                let runs = &self.runs;
                self.order.retain(|r| runs.contains_key(r) || r == run);
            }
        }
        self.runs.entry(run.clone()).or_insert_with(make)
    }

    pub(crate) fn remove(&mut self, run: &RunId) -> Option<T> {
        self.runs.remove(run)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.runs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_at_most_the_newest_runs() {
        let mut table = RunTable::new(3);
        for i in 0..10 {
            *table.get_or_insert_with(&RunId::new(format!("r{i}")), || 0) += i;
        }
        assert_eq!(table.len(), 3);
        assert!(table.get(&RunId::new("r6")).is_none());
        assert_eq!(table.get(&RunId::new("r9")), Some(&9));
        // Removed runs free their place and leave the queue bounded.
        for i in 10..1000 {
            let run = RunId::new(format!("r{i}"));
            table.get_or_insert_with(&run, || 0);
            table.remove(&run);
        }
        assert!(table.order.len() <= 7);
    }
}
