//! Where a runner runs in a tree of agents, and what a child's runner is
//! held to by the agents above it.

use iris_core::RunId;
use iris_model::Usage;
use iris_runtime::journal::Journaled;
use iris_runtime::{InheritedGuards, PolicyCeiling};

use super::checkpoints::Checkpoints;
use crate::Agent;

/// Where a runner runs in a tree of agents, and what a child's runner is
/// held to.
#[derive(Clone, Default)]
pub(super) struct Place {
    /// The run at the root of the tree; `None` for a root runner.
    pub(super) root: Option<RunId>,
    /// 0 for a root.
    pub(super) depth: u32,
    /// The policies of the agents above.
    pub(super) ceiling: Option<PolicyCeiling>,
    /// The guards the agents above hold over the whole tree.
    pub(super) guards: Option<InheritedGuards>,
    /// A child's step limit, over its agent's.
    pub(super) max_steps: Option<u32>,
    /// A child's token budget.
    pub(super) max_tokens: Option<u64>,
    /// Where a child's calls are claimed and recorded on a root with a
    /// store: the root's journal, under the root's run.
    pub(super) journal: Option<Journaled>,
    /// Where a child on a root with a store keeps its state at each step
    /// boundary.
    pub(super) checkpoints: Option<Checkpoints>,
}

impl Place {
    /// Whether the runner runs the root of its tree.
    pub(super) fn is_root(&self) -> bool {
        self.root.is_none()
    }

    /// The run at the root of the tree `run` belongs to.
    pub(super) fn root_of(&self, run: &RunId) -> RunId {
        self.root.clone().unwrap_or_else(|| run.clone())
    }

    /// The step limit of runs of `agent` here.
    pub(super) fn max_steps(&self, agent: &Agent) -> u32 {
        self.max_steps
            .or(agent.max_steps())
            .unwrap_or(Agent::DEFAULT_MAX_STEPS)
    }

    /// Whether a run that used `usage` has spent its token budget.
    pub(super) fn out_of_tokens(&self, usage: &Usage) -> bool {
        self.max_tokens.is_some_and(|max| usage.total() >= max)
    }

    /// The tokens a run here may still use after `usage`, if it has a
    /// budget.
    pub(super) fn tokens_left(&self, usage: &Usage) -> Option<u64> {
        self.max_tokens.map(|max| max.saturating_sub(usage.total()))
    }
}
