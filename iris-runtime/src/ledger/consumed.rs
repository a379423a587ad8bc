//! Pauses a person's replies were taken for: a pause is consumed once, and
//! stays consumed after its run ended (the run's own slots went with it),
//! so a second resume of a finished pause is refused for as long as this
//! process runs, within a bound.

use std::collections::{HashSet, VecDeque};

/// The pauses consumed, oldest first, at most `bound` of them.
#[derive(Debug, Default)]
pub(crate) struct Consumed {
    set: HashSet<[u8; 32]>,
    order: VecDeque<[u8; 32]>,
}

impl Consumed {
    /// Records `pause`; `false` when it was consumed already. Past `bound`
    /// the oldest are forgotten.
    pub(crate) fn first_time(&mut self, pause: [u8; 32], bound: usize) -> bool {
        if !self.set.insert(pause) {
            return false;
        }
        self.order.push_back(pause);
        while self.order.len() > bound {
            if let Some(oldest) = self.order.pop_front() {
                self.set.remove(&oldest);
            }
        }
        true
    }

    /// Forgets `pause`: the resume that consumed it was refused before
    /// anything ran.
    pub(crate) fn forget(&mut self, pause: &[u8; 32]) {
        if self.set.remove(pause) {
            self.order.retain(|kept| kept != pause);
        }
    }
}
