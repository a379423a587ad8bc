//! Hard budgets for a tree of agents: tokens (in, out, both), money from a
//! price table the host supplies, model requests, tool calls and active
//! time, counted in one [`Spent`] ledger the whole tree shares (the root,
//! its children, siblings running side by side).
//!
//! Before each model request the runner reserves the request's estimated
//! input and the most it may write (its `max_tokens`, lowered to what is
//! left), and a request that cannot be reserved is not sent: the run ends
//! [`RunOutcome::OverBudget`](crate::RunOutcome::OverBudget), naming the
//! budget. The reservation is settled on the usage the provider reports.
//! Spend so far is part of the run state, so a resume in another process
//! goes on from it; active time is counted across pauses, never restarted.

mod estimate;
mod ledger;
mod limits;
mod prices;

pub(crate) use estimate::estimate_input;
pub(crate) use ledger::{Ledger, Reservation};
pub use limits::{Budget, BudgetKind, OverBudget, Spent};
pub use prices::{Price, PriceTable};

/// A budget and the prices its money bound is counted at, as an agent or
/// a runner holds them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Spending {
    pub(crate) budget: Option<Budget>,
    pub(crate) prices: Option<PriceTable>,
}

impl Spending {
    /// This one, with `other`'s budget and prices where it has none.
    pub(crate) fn or(&self, other: &Spending) -> Spending {
        Spending {
            budget: self.budget.clone().or_else(|| other.budget.clone()),
            prices: self.prices.clone().or_else(|| other.prices.clone()),
        }
    }
}
