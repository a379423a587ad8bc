//! Which artifacts a run may open by handle, for hosts that serve several
//! clients from one store (each MCP session is a run of its own): a scoped
//! run opens only the artifacts its own results named. A run that is not
//! scoped opens any artifact of the store, as a host with one user expects.

use std::collections::VecDeque;

use iris_core::{RunId, ToolResult};
use rustc_hash::FxHashSet;

use crate::ledger::RunLedger;

/// Most handles a scoped run remembers; past it the oldest is forgotten
/// (its artifact can no longer be opened by that run).
const MAX_SHOWN: usize = 4_096;

/// A scoped run's slot in the ledger: the handles its results named.
#[derive(Default)]
struct Shown {
    handles: FxHashSet<String>,
    order: VecDeque<String>,
}

impl Shown {
    fn add(&mut self, handle: &str) {
        if self.handles.contains(handle) {
            return;
        }
        if self.order.len() >= MAX_SHOWN
            && let Some(oldest) = self.order.pop_front()
        {
            self.handles.remove(&oldest);
        }
        self.handles.insert(handle.to_owned());
        self.order.push_back(handle.to_owned());
    }
}

/// Scopes `run`: from now on it opens only the artifacts that results
/// recorded with [`record_shown`] named. Ends with the run.
pub fn scope_run(ledger: &RunLedger, run: &RunId) {
    ledger.with_slot(run, |_: &mut Shown| {});
}

/// Records the artifacts `result` names as shown to `run`, when the run is
/// scoped.
pub fn record_shown(ledger: &RunLedger, run: &RunId, result: &ToolResult) {
    if result.artifacts().is_empty() {
        return;
    }
    ledger.update_slot(run, |shown: &mut Shown| {
        for artifact in result.artifacts() {
            shown.add(&artifact.handle);
        }
    });
}

/// Whether `run` may open the artifact behind `handle`: any, when the run
/// is not scoped; else one its results named.
#[must_use]
pub fn may_open(ledger: &RunLedger, run: &RunId, handle: &str) -> bool {
    ledger
        .read_slot(run, |shown: &Shown| shown.handles.contains(handle))
        .unwrap_or(true)
}
