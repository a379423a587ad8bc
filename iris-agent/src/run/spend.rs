//! The run loop's side of budgets: a reservation before each model
//! request (its `max_tokens` lowered to what is left), the settlement on
//! the usage it reports, tool calls counted before they run, and the
//! tree's spend noted in the root's state wherever it is kept.

use iris_model::ModelResponse;

use super::model_turn::TurnRequest;
use super::{AgentRunner, RunContext};
use crate::budget::{Reservation, Spending, estimate_input};
use crate::{OverBudget, RunOutcome, RunState};

impl AgentRunner {
    /// The budget and prices this runner's runs count against: its own,
    /// else its agent's.
    pub(super) fn spending(&self) -> Spending {
        self.spending.or(self.agent.spending())
    }

    /// Holds what the request of `turn` may spend, lowering its
    /// `max_tokens` to what the budget leaves; `None` without a budget.
    ///
    /// # Errors
    /// The bound that leaves no room for it: the request is not sent.
    pub(super) fn reserve(
        &self,
        state: &RunState,
        turn: &mut TurnRequest<'_>,
        cx: &RunContext,
    ) -> Result<Option<Reservation>, OverBudget> {
        let Some(ledger) = &cx.budget else {
            return Ok(None);
        };
        let input = estimate_input(turn.instructions.as_deref(), &state.messages, &turn.tools);
        let model = self
            .model_config()
            .map_or("the runner's model", |config| config.model.as_str());
        // Read in place: the table is not copied per request.
        let price = self
            .spending
            .prices
            .as_ref()
            .or(self.agent.spending().prices.as_ref())
            .and_then(|prices| prices.of(model));
        let own = turn.options.max_tokens.map(u64::from);
        let reservation = ledger.reserve(input, own, price, model)?;
        if let Some(most) = reservation.max_output
            && own != Some(most)
        {
            turn.options.to_mut().max_tokens = Some(u32::try_from(most).unwrap_or(u32::MAX));
        }
        let (input, output) = reservation.held();
        tracing::debug!(target: "iris::telemetry", run = %state.run_id, input, output, "budget reserved");
        Ok(Some(reservation))
    }

    /// `outcome` of a drive, with the tree's spend noted in a root's state
    /// and its active time stopped (a pause or the end).
    pub(super) fn spend_noted(&self, mut outcome: RunOutcome, cx: &RunContext) -> RunOutcome {
        if self.place.is_root()
            && let Some(ledger) = &cx.budget
        {
            ledger.pause();
            outcome.state_mut().spent = ledger.spent();
        }
        outcome
    }
}

/// The run ended at its budget.
pub(super) fn over_budget(over: OverBudget, state: RunState) -> RunOutcome {
    RunOutcome::OverBudget { over, state }
}

/// Counts `calls` tool calls against the budget of `cx`'s tree, all or
/// none.
///
/// # Errors
/// The tool-call bound, when the step's calls do not all fit: none of them
/// runs.
pub(super) fn take_calls(calls: usize, cx: &RunContext) -> Result<(), OverBudget> {
    match &cx.budget {
        Some(ledger) => ledger.take_calls(calls),
        None => Ok(()),
    }
}

/// The tree's spend so far, in `state`: a root's, and a child's too
/// (its kept steps tell a take-over what the tree had spent, and a
/// child with a budget of its own goes on from it on a resume).
pub(super) fn note_spent(state: &mut RunState, cx: &RunContext) {
    if let Some(ledger) = &cx.budget {
        state.spent = ledger.spent();
    }
}

/// Settles `reservation` on what `response` reports, and notes the
/// tree's spend in a root's `state`.
pub(super) fn settle(
    reservation: Option<Reservation>,
    response: &ModelResponse,
    state: &mut RunState,
    cx: &RunContext,
) {
    if let Some(reservation) = reservation {
        reservation.settle(&response.usage);
        note_spent(state, cx);
    }
}
