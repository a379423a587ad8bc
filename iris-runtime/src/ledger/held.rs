//! The runs a ledger holds: a map, with the run used last kept beside it.
//! Most calls belong to the run of the call before, so they find their run
//! with one comparison instead of a lookup; runs that take turns pay one
//! move each time the turn passes.

use iris_core::RunId;
use rustc_hash::FxHashMap;

/// Held runs, each with a value (the ledger's entry).
#[derive(Debug)]
pub(super) struct Held<E> {
    current: Option<(RunId, E)>,
    others: FxHashMap<RunId, E>,
}

impl<E> Default for Held<E> {
    fn default() -> Self {
        Self {
            current: None,
            others: FxHashMap::default(),
        }
    }
}

impl<E> Held<E> {
    pub(super) fn len(&self) -> usize {
        self.others.len() + usize::from(self.current.is_some())
    }

    pub(super) fn contains(&self, run: &RunId) -> bool {
        self.is_current(run) || self.others.contains_key(run)
    }

    /// `run`'s value, made the current one.
    #[inline]
    pub(super) fn get_mut(&mut self, run: &RunId) -> Option<&mut E> {
        if !self.is_current(run) {
            let value = self.others.remove(run)?;
            self.make_current(run.clone(), value);
        }
        self.current.as_mut().map(|(_, value)| value)
    }

    /// Adds `run` (not held) as the current one.
    pub(super) fn insert(&mut self, run: RunId, value: E) {
        self.make_current(run, value);
    }

    pub(super) fn remove(&mut self, run: &RunId) -> Option<E> {
        if self.is_current(run) {
            return self.current.take().map(|(_, value)| value);
        }
        self.others.remove(run)
    }

    /// Every held run and its value, in no given order.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (&RunId, &mut E)> {
        self.current
            .iter_mut()
            .map(|(run, value)| (&*run, value))
            .chain(self.others.iter_mut())
    }

    fn is_current(&self, run: &RunId) -> bool {
        matches!(&self.current, Some((current, _)) if current == run)
    }

    fn make_current(&mut self, run: RunId, value: E) {
        if let Some((previous, value)) = self.current.replace((run, value)) {
            self.others.insert(previous, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_taking_turns_keep_their_values() {
        let mut held = Held::default();
        let (a, b, c) = (RunId::new("a"), RunId::new("b"), RunId::new("c"));
        held.insert(a.clone(), 1);
        held.insert(b.clone(), 2);
        for _ in 0..3 {
            *held.get_mut(&a).unwrap_or(&mut 0) += 10;
            *held.get_mut(&b).unwrap_or(&mut 0) += 10;
        }
        assert_eq!(held.len(), 2);
        assert!(held.get_mut(&c).is_none());
        assert_eq!(held.remove(&b), Some(32));
        assert_eq!(held.remove(&a), Some(31));
        assert_eq!(held.len(), 0);
        assert!(!held.contains(&a));
    }
}
