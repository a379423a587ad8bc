//! The states of child agents on a store, kept at each of their step
//! boundaries under the root's run and lease: a process that takes the run
//! over resumes a child cut off by a crash from its last kept step (its
//! recorded calls answered by the root's journal, a call cut off inside its
//! body reported interrupted) instead of reporting the whole child
//! interrupted, and starts again a child that kept no step, which had run
//! no call.

use std::sync::Arc;

use iris_core::RunId;

use crate::durable::Durable;
use crate::{RunError, RunState, RunStore};

/// Where the children of one tree keep their states: the root's store,
/// under the root's run, written by the root's lease holder.
#[derive(Clone)]
pub(super) struct Checkpoints {
    store: Arc<dyn RunStore>,
    holder: String,
    root: RunId,
}

impl Checkpoints {
    /// The checkpoints of the children of `root`, when its store keeps
    /// children's states.
    pub(super) fn of(durable: &Durable, root: &RunId) -> Option<Self> {
        durable.store.keeps_children().then(|| Self {
            store: Arc::clone(&durable.store),
            holder: durable.holder.clone(),
            root: root.clone(),
        })
    }

    /// Keeps `state`, a child's state at a step boundary; a refused write
    /// (the lease was lost) stops the child.
    pub(super) async fn keep(&self, state: &RunState) -> Result<(), RunError> {
        self.store
            .keep_child(&self.root, state, &self.holder)
            .await
            .map_err(RunError::from)
    }

    /// The state kept for `child`, if any. A store that cannot say is
    /// logged and read as "none kept": the child is then reported
    /// interrupted, as when nothing is kept.
    pub(super) async fn kept(&self, child: &RunId) -> Kept {
        match self.store.kept_child(&self.root, child).await {
            Ok(Some(state)) => Kept::Step(Box::new(state)),
            Ok(None) => Kept::Nothing,
            Err(error) => {
                tracing::warn!(%error, child = %child, "a child's kept state could not be read");
                Kept::Unknown
            }
        }
    }
}

/// What the store kept of a child cut off by a crash.
pub(super) enum Kept {
    /// Its state at its last step boundary.
    Step(Box<RunState>),
    /// Nothing: it recorded no step, so none of its calls ran.
    Nothing,
    /// The store could not say.
    Unknown,
}
