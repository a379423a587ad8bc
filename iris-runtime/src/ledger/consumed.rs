//! Pauses a person's replies were taken for: a pause is consumed once, and
//! stays consumed after its run ended (the run's own slots went with it),
//! so a second resume of a finished pause is refused for as long as this
//! process runs, within a bound. A run started again under the same id is
//! a new run: its old pauses are forgotten when it starts.

use std::collections::{HashMap, HashSet, VecDeque};

/// The pauses consumed, oldest first, at most `bound` of them, each with
/// the run it belongs to.
#[derive(Debug, Default)]
pub(crate) struct Consumed {
    set: HashSet<[u8; 32]>,
    order: VecDeque<([u8; 32], u64)>,
    /// How many of `order` each run has: a run with none is forgotten
    /// without a walk.
    per_run: HashMap<u64, usize>,
}

impl Consumed {
    /// Records `pause` of run `run` (a hash of its id); `false` when it was
    /// consumed already. Past `bound` the oldest are forgotten.
    pub(crate) fn first_time(&mut self, pause: [u8; 32], run: u64, bound: usize) -> bool {
        if !self.set.insert(pause) {
            return false;
        }
        self.order.push_back((pause, run));
        *self.per_run.entry(run).or_default() += 1;
        while self.order.len() > bound {
            if let Some((oldest, of)) = self.order.pop_front() {
                self.set.remove(&oldest);
                self.uncount(of);
            }
        }
        true
    }

    /// Forgets `pause`: the resume that consumed it was refused before
    /// anything ran.
    pub(crate) fn forget(&mut self, pause: &[u8; 32]) {
        if self.set.remove(pause)
            && let Some(at) = self.order.iter().position(|(kept, _)| kept == pause)
            && let Some((_, run)) = self.order.remove(at)
        {
            self.uncount(run);
        }
    }

    /// Forgets every pause of run `run`: it starts again, as a new run.
    pub(crate) fn forget_run(&mut self, run: u64) {
        if !self.per_run.contains_key(&run) {
            return;
        }
        let set = &mut self.set;
        self.order.retain(|(pause, of)| {
            let keep = *of != run;
            if !keep {
                set.remove(pause);
            }
            keep
        });
        self.per_run.remove(&run);
    }

    fn uncount(&mut self, run: u64) {
        if let Some(count) = self.per_run.get_mut(&run) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.per_run.remove(&run);
            }
        }
    }
}
