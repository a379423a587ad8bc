//! An agent file's `budget:` section, as the agent's budget and prices.

use std::time::Duration;

use serde_saphyr::Spanned;

use super::error::Issues;
use super::file::BudgetSection;
use crate::{Budget, Price, PriceTable};

/// The budget and price table `section` writes, or `None` (the problems
/// noted) when an amount is not one a budget can hold.
pub(super) fn spending(
    section: Option<&Spanned<BudgetSection>>,
    issues: &mut Issues,
) -> Option<(Budget, PriceTable)> {
    let section = section?;
    let at = section.referenced;
    let section = &section.value;
    let mut fine = true;
    if let Some(usd) = section.usd.filter(|usd| !(usd.is_finite() && *usd >= 0.0)) {
        issues.at(
            at,
            "budget.usd",
            format!("`{usd}` is not an amount of dollars, zero or more"),
        );
        fine = false;
    }
    for (model, price) in &section.prices {
        let amounts = [Some(price.input), price.cached_input, Some(price.output)];
        if amounts
            .into_iter()
            .flatten()
            .any(|p| !(p.is_finite() && p >= 0.0))
        {
            issues.at(
                at,
                format!("budget.prices.{model}"),
                "prices are dollars per million tokens, zero or more",
            );
            fine = false;
        }
    }
    fine.then(|| build(section))
}

fn build(section: &BudgetSection) -> (Budget, PriceTable) {
    let mut budget = Budget::new();
    if let Some(tokens) = section.tokens {
        budget = budget.tokens(tokens);
    }
    if let Some(tokens) = section.input_tokens {
        budget = budget.input_tokens(tokens);
    }
    if let Some(tokens) = section.output_tokens {
        budget = budget.output_tokens(tokens);
    }
    if let Some(usd) = section.usd {
        budget = budget.usd(usd);
    }
    if let Some(requests) = section.requests {
        budget = budget.requests(requests);
    }
    if let Some(calls) = section.tool_calls {
        budget = budget.tool_calls(calls);
    }
    if let Some(seconds) = section.active_seconds {
        budget = budget.active_time(Duration::from_secs(seconds));
    }
    let mut prices = PriceTable::new();
    for (model, price) in &section.prices {
        let price = Price::per_million(price.input, price.output)
            .cached_at(price.cached_input.unwrap_or(price.input));
        prices = if model == "*" {
            prices.otherwise(price)
        } else {
            prices.model(model.clone(), price)
        };
    }
    (budget, prices)
}
