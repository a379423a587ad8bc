//! Prices per model, supplied by the host: Iris ships none, since a table
//! it could not keep current would make a money budget lie.

use std::collections::HashMap;

use iris_model::Usage;

/// What one model costs, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Per million prompt tokens not read from a cache.
    pub input: f64,
    /// Per million prompt tokens read from a cache.
    pub cached_input: f64,
    /// Per million tokens written.
    pub output: f64,
}

impl Price {
    /// `input` and `output` per million tokens; cached prompt tokens at the
    /// input price (see [`Price::cached_at`]).
    #[must_use]
    pub fn per_million(input: f64, output: f64) -> Self {
        Self {
            input,
            cached_input: input,
            output,
        }
    }

    /// Cached prompt tokens at `price` per million.
    #[must_use]
    pub fn cached_at(mut self, price: f64) -> Self {
        self.cached_input = price;
        self
    }

    /// What `usage` costs, in millionths of a dollar (rounded up).
    pub(crate) fn micro_usd(&self, usage: &Usage) -> u64 {
        let cached = usage.cached_input_tokens.min(usage.input_tokens);
        let fresh = usage.input_tokens - cached;
        // Dollars per million tokens are millionths of a dollar per token.
        #[allow(clippy::cast_precision_loss, reason = "token counts far below 2^52")]
        let micro = fresh as f64 * self.input
            + cached as f64 * self.cached_input
            + usage.output_tokens as f64 * self.output;
        if micro.is_finite() && micro > 0.0 {
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "positive and finite, rounded up; `as` saturates"
            )]
            let rounded = micro.ceil() as u64;
            rounded
        } else {
            0
        }
    }

    /// The most tokens `micro_usd` buys written.
    pub(crate) fn output_for(&self, micro_usd: u64) -> u64 {
        if self.output <= 0.0 {
            return u64::MAX;
        }
        #[allow(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a positive, finite quotient, floored; `as` saturates"
        )]
        let tokens = (micro_usd as f64 / self.output).floor() as u64;
        tokens
    }
}

/// Prices by model name, with a price for models it does not name, if any.
///
/// ```
/// use iris_agent::{Price, PriceTable};
/// // The host's own figures, dated where it keeps them.
/// let prices = PriceTable::new()
///     .model("gpt-4.1-mini", Price::per_million(0.40, 1.60).cached_at(0.10))
///     .otherwise(Price::per_million(3.0, 15.0));
/// assert!(prices.of("gpt-4.1-mini").is_some());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    models: HashMap<String, Price>,
    otherwise: Option<Price>,
}

impl PriceTable {
    /// No prices.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// `model` (its name at the provider) at `price`.
    #[must_use]
    pub fn model(mut self, model: impl Into<String>, price: Price) -> Self {
        self.models.insert(model.into(), price);
        self
    }

    /// Any model not named at `price`.
    #[must_use]
    pub fn otherwise(mut self, price: Price) -> Self {
        self.otherwise = Some(price);
        self
    }

    /// The price of `model`.
    #[must_use]
    pub fn of(&self, model: &str) -> Option<Price> {
        self.models.get(model).copied().or(self.otherwise)
    }
}
