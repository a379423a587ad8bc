//! The ledger a tree of runs shares: what was spent, what is reserved by
//! requests in flight, and the limits; reservations are taken before a
//! request is sent and settled on the usage it reports.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use iris_model::Usage;

use super::limits::{Budget, BudgetKind, OverBudget, Spent};
use super::prices::Price;

/// The most a request without its own `max_tokens` may write under a
/// bound on output: the reservation it holds, and the limit it is sent.
pub(crate) const UNSET_OUTPUT: u64 = 4_096;

/// One tree's spend against its budget. Clones share it.
#[derive(Debug, Clone)]
pub(crate) struct Ledger(Arc<Mutex<Books>>);

#[derive(Debug)]
struct Books {
    budget: Budget,
    spent: Spent,
    /// Held by requests in flight: input and output tokens, money, and the
    /// requests themselves.
    held: Held,
    /// Since when the tree has been active in this process, while it is.
    active_since: Option<Instant>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Held {
    input: u64,
    output: u64,
    micro_usd: u64,
    requests: u64,
}

/// A request's hold on the ledger: released when dropped unsettled (the
/// request failed or was cancelled), or settled on its usage.
#[derive(Debug)]
pub(crate) struct Reservation {
    ledger: Ledger,
    held: Held,
    price: Option<Price>,
    /// The most the request may write, within what was left.
    pub(crate) max_output: Option<u64>,
    settled: bool,
}

impl Ledger {
    /// A ledger of `budget`, from `spent` (what a resumed run's state
    /// kept), active from now when `timed` (a run on an engine is not: a
    /// replay's clock is not its first attempt's, and what the loop keeps
    /// must be the same on every attempt).
    pub(crate) fn new(budget: Budget, spent: Spent, timed: bool) -> Self {
        Self(Arc::new(Mutex::new(Books {
            budget,
            spent,
            held: Held::default(),
            active_since: timed.then(Instant::now),
        })))
    }

    fn books(&self) -> std::sync::MutexGuard<'_, Books> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What was spent so far, active time up to now included.
    pub(crate) fn spent(&self) -> Spent {
        self.books().spent_now()
    }

    /// Stops counting active time (the run pauses or ends); [`Ledger::new`]
    /// of the resumed state starts it again.
    pub(crate) fn pause(&self) {
        let mut books = self.books();
        if let Some(since) = books.active_since.take() {
            books.spent.active_ms = books.spent.active_ms.saturating_add(elapsed_ms(since));
        }
    }

    /// Holds what a request of `input` estimated tokens, writing at most
    /// `max_output` (its own limit, if any), may spend at `price`: its
    /// output lowered to what every bound leaves.
    ///
    /// # Errors
    /// The bound that leaves no room for the request.
    pub(crate) fn reserve(
        &self,
        input: u64,
        max_output: Option<u64>,
        price: Option<Price>,
        model: &str,
    ) -> Result<Reservation, OverBudget> {
        let mut books = self.books();
        let room = Room {
            budget: &books.budget,
            spent: books.spent_now(),
            held: books.held,
        };
        room.admits(input)?;
        let mut output = room.output_for(input, max_output)?;
        let mut micro_usd = 0;
        if let Some(money_left) = room.left(BudgetKind::Money, room.held.micro_usd) {
            let Some(price) = price else {
                return Err(over(
                    BudgetKind::Money,
                    format!(
                        "no price is known for model `{model}`: give the runner a price table that names it"
                    ),
                ));
            };
            let reading = price.micro_usd(&Usage::new(input, 0));
            if reading >= money_left {
                return Err(over(
                    BudgetKind::Money,
                    format!(
                        "reading the next request costs about ${:.6} and ${:.6} is left",
                        micro(reading),
                        micro(money_left)
                    ),
                ));
            }
            let affordable = price.output_for(money_left - reading);
            if affordable == 0 {
                return Err(over(
                    BudgetKind::Money,
                    "nothing is left for the answer".to_owned(),
                ));
            }
            output = Some(output.map_or(affordable, |o| o.min(affordable)));
            micro_usd = price.micro_usd(&Usage::new(input, output.unwrap_or(0)));
        }
        let reserved = Held {
            input,
            output: output.unwrap_or(0),
            micro_usd,
            requests: 1,
        };
        books.held.add(reserved);
        drop(books);
        Ok(Reservation {
            ledger: self.clone(),
            held: reserved,
            price,
            max_output: output,
            settled: false,
        })
    }

    /// Raises each figure spent to `kept`'s where that is higher: a child's
    /// kept step may have seen more of the tree's spend than the state the
    /// ledger was made from.
    pub(crate) fn raise_to(&self, kept: &Spent) {
        let mut books = self.books();
        let spent = &mut books.spent;
        spent.input_tokens = spent.input_tokens.max(kept.input_tokens);
        spent.cached_input_tokens = spent.cached_input_tokens.max(kept.cached_input_tokens);
        spent.output_tokens = spent.output_tokens.max(kept.output_tokens);
        spent.micro_usd = spent.micro_usd.max(kept.micro_usd);
        spent.requests = spent.requests.max(kept.requests);
        spent.tool_calls = spent.tool_calls.max(kept.tool_calls);
        spent.active_ms = spent.active_ms.max(kept.active_ms);
    }

    /// Counts `calls` tool calls, all or none.
    ///
    /// # Errors
    /// The tool-call bound, when they do not all fit (none is counted).
    pub(crate) fn take_calls(&self, calls: usize) -> Result<(), OverBudget> {
        let mut books = self.books();
        let calls = u32::try_from(calls).unwrap_or(u32::MAX);
        if let Some(limit) = books.budget.limit(BudgetKind::ToolCalls) {
            let left = limit.saturating_sub(u64::from(books.spent.tool_calls));
            if u64::from(calls) > left {
                return Err(over(
                    BudgetKind::ToolCalls,
                    format!("the model made {calls} call(s) and {left} are left"),
                ));
            }
        }
        books.spent.tool_calls = books.spent.tool_calls.saturating_add(calls);
        Ok(())
    }
}

impl Ledger {
    /// Releases `held` and counts one request that used `usage`, at
    /// `price`.
    fn charge(&self, held: Held, usage: &Usage, price: Option<Price>) {
        let mut books = self.books();
        books.held.remove(held);
        let spent = &mut books.spent;
        spent.input_tokens = spent.input_tokens.saturating_add(usage.input_tokens);
        spent.cached_input_tokens = spent
            .cached_input_tokens
            .saturating_add(usage.cached_input_tokens);
        spent.output_tokens = spent.output_tokens.saturating_add(usage.output_tokens);
        spent.requests = spent.requests.saturating_add(1);
        if let Some(price) = price {
            spent.micro_usd = spent.micro_usd.saturating_add(price.micro_usd(usage));
        }
    }
}

impl Books {
    /// What was spent, active time up to now included.
    fn spent_now(&self) -> Spent {
        let mut spent = self.spent;
        if let Some(since) = self.active_since {
            spent.active_ms = spent.active_ms.saturating_add(elapsed_ms(since));
        }
        spent
    }
}

/// What the bounds leave, beside what requests in flight hold.
struct Room<'a> {
    budget: &'a Budget,
    spent: Spent,
    held: Held,
}

impl Room<'_> {
    /// What is left of `kind`'s bound once `held` is set aside, if bounded.
    fn left(&self, kind: BudgetKind, held: u64) -> Option<u64> {
        self.budget.limit(kind).map(|limit| {
            limit
                .saturating_sub(self.spent.of(kind))
                .saturating_sub(held)
        })
    }

    /// Whether a request reading `input` tokens may be sent at all.
    fn admits(&self, input: u64) -> Result<(), OverBudget> {
        if self.left(BudgetKind::ActiveTime, 0) == Some(0) {
            return Err(over(
                BudgetKind::ActiveTime,
                "no active time is left".to_owned(),
            ));
        }
        if self.left(BudgetKind::Requests, self.held.requests) == Some(0) {
            return Err(over(
                BudgetKind::Requests,
                "every request was made".to_owned(),
            ));
        }
        for (kind, held) in [
            (BudgetKind::InputTokens, self.held.input),
            (BudgetKind::Tokens, self.held.input + self.held.output),
        ] {
            if let Some(left) = self.left(kind, held)
                && left <= input
            {
                return Err(over(
                    kind,
                    format!("the next request reads about {input} tokens and {left} are left"),
                ));
            }
        }
        Ok(())
    }

    /// The most a request reading `input` tokens may write, given its own
    /// `max_output`: under a bound on what is written, every request says
    /// the most it may write (its own limit, else a default), lowered to
    /// what the token bounds leave, so that no answer writes past its
    /// reservation.
    fn output_for(&self, input: u64, max_output: Option<u64>) -> Result<Option<u64>, OverBudget> {
        let bounds_output = [
            BudgetKind::OutputTokens,
            BudgetKind::Tokens,
            BudgetKind::Money,
        ]
        .into_iter()
        .any(|kind| self.budget.limit(kind).is_some());
        let mut output = if bounds_output {
            Some(max_output.unwrap_or(UNSET_OUTPUT))
        } else {
            max_output
        };
        let held = self.held;
        for (kind, room) in [
            (
                BudgetKind::OutputTokens,
                self.left(BudgetKind::OutputTokens, held.output),
            ),
            (
                BudgetKind::Tokens,
                self.left(BudgetKind::Tokens, held.input + held.output)
                    .map(|left| left - input),
            ),
        ] {
            let Some(room) = room else { continue };
            if room == 0 {
                return Err(over(kind, "nothing is left for the answer".to_owned()));
            }
            output = Some(output.map_or(room, |o| o.min(room)));
        }
        Ok(output)
    }
}

impl Held {
    fn add(&mut self, other: Held) {
        self.input += other.input;
        self.output += other.output;
        self.micro_usd += other.micro_usd;
        self.requests += other.requests;
    }

    fn remove(&mut self, other: Held) {
        self.input = self.input.saturating_sub(other.input);
        self.output = self.output.saturating_sub(other.output);
        self.micro_usd = self.micro_usd.saturating_sub(other.micro_usd);
        self.requests = self.requests.saturating_sub(other.requests);
    }
}

impl Reservation {
    /// Settles the request on the `usage` its provider reported; a
    /// provider that reports none (some local servers, when streaming) is
    /// counted at what the request held.
    pub(crate) fn settle(mut self, usage: &Usage) {
        self.settled = true;
        let usage = if usage.total() == 0 {
            self.held_usage()
        } else {
            *usage
        };
        self.ledger.charge(self.held, &usage, self.price);
    }

    /// What the request held, as usage.
    fn held_usage(&self) -> Usage {
        Usage::new(self.held.input, self.held.output)
    }

    /// What the reservation holds: estimated input and the most output.
    pub(crate) fn held(&self) -> (u64, u64) {
        (self.held.input, self.held.output)
    }
}

impl Drop for Reservation {
    /// A request never settled (it failed, or its run was cancelled while
    /// it was out) may have been sent and billed: it counts at what it
    /// held, so that failures and cut-off children cannot spend past the
    /// bound.
    fn drop(&mut self) {
        if !self.settled {
            self.ledger
                .charge(self.held, &self.held_usage(), self.price);
        }
    }
}

fn over(budget: BudgetKind, detail: String) -> OverBudget {
    OverBudget { budget, detail }
}

fn micro(amount: u64) -> f64 {
    #[allow(clippy::cast_precision_loss, reason = "a display amount")]
    let dollars = amount as f64 / 1_000_000.0;
    dollars
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_lowered_to_what_is_left_then_refused() {
        let ledger = Ledger::new(Budget::new().tokens(1_000), Spent::default(), true);
        let first = ledger.reserve(300, Some(4_096), None, "m").unwrap();
        assert_eq!(first.max_output, Some(700));
        // A sibling in flight holds the rest.
        let err = ledger.reserve(10, None, None, "m").unwrap_err();
        assert_eq!(err.budget, BudgetKind::Tokens);
        first.settle(&Usage::new(280, 120));
        let second = ledger.reserve(500, None, None, "m").unwrap();
        assert_eq!(second.max_output, Some(100));
        // A request that fails or is cut off counts at what it held.
        drop(second);
        assert_eq!(ledger.spent().input_tokens, 780);
        assert_eq!(ledger.spent().output_tokens, 220);
        assert_eq!(ledger.spent().requests, 2);
        // One that reports no usage too.
        let ledger = Ledger::new(Budget::new().tokens(1_000), Spent::default(), true);
        ledger
            .reserve(100, Some(50), None, "m")
            .unwrap()
            .settle(&Usage::default());
        assert_eq!(
            ledger.spent().input_tokens + ledger.spent().output_tokens,
            150
        );
    }

    #[test]
    fn money_needs_a_price_and_bounds_the_answer() {
        let ledger = Ledger::new(Budget::new().usd(0.01), Spent::default(), true);
        assert_eq!(
            ledger.reserve(10, None, None, "m").unwrap_err().budget,
            BudgetKind::Money
        );
        // $1 in, $10 out per million: 1,000 tokens in cost $0.001, and the
        // $0.009 left buys 900 tokens out.
        let price = Price::per_million(1.0, 10.0);
        let held = ledger.reserve(1_000, None, Some(price), "m").unwrap();
        assert_eq!(held.max_output, Some(900));
        held.settle(&Usage::new(1_000, 900));
        assert_eq!(ledger.spent().micro_usd, 10_000);
        assert!(ledger.reserve(1, None, Some(price), "m").is_err());
    }

    #[test]
    fn requests_and_calls_are_counted() {
        let ledger = Ledger::new(
            Budget::new().requests(1).tool_calls(3),
            Spent::default(),
            true,
        );
        let held = ledger.reserve(1, None, None, "m").unwrap();
        assert_eq!(
            ledger.reserve(1, None, None, "m").unwrap_err().budget,
            BudgetKind::Requests
        );
        held.settle(&Usage::new(1, 1));
        assert!(ledger.take_calls(2).is_ok());
        assert_eq!(
            ledger.take_calls(2).unwrap_err().budget,
            BudgetKind::ToolCalls
        );
        assert!(ledger.take_calls(1).is_ok());
        assert!(ledger.take_calls(1).is_err());
        assert_eq!(ledger.spent().tool_calls, 3);
    }

    #[test]
    fn a_budget_over_another_keeps_the_bounds_it_does_not_set() {
        let file = Budget::new().usd(1.0).requests(9);
        let given = Budget::new().requests(3).over(&file);
        assert_eq!(given.max_requests(), Some(3));
        assert_eq!(given.max_usd(), Some(1.0));
    }

    #[test]
    fn a_kept_step_raises_what_the_ledger_knows() {
        let ledger = Ledger::new(Budget::new().requests(10), Spent::default(), false);
        let kept = Spent {
            requests: 4,
            ..Spent::default()
        };
        ledger.raise_to(&kept);
        ledger.raise_to(&Spent::default());
        assert_eq!(ledger.spent().requests, 4);
    }
}
