//! What a budget bounds, what was spent, and which bound a run met.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Limits on what a run spends, its child agents' spend included: each
/// left `None` is unbounded.
///
/// ```
/// use std::time::Duration;
/// let budget = iris_agent::Budget::new()
///     .tokens(50_000)
///     .usd(0.25)
///     .requests(40)
///     .tool_calls(200)
///     .active_time(Duration::from_secs(120));
/// assert_eq!(budget.max_requests(), Some(40));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Budget {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    tokens: Option<u64>,
    micro_usd: Option<u64>,
    requests: Option<u32>,
    tool_calls: Option<u32>,
    active_time: Option<Duration>,
}

impl Budget {
    /// No limit yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// At most `tokens` read by the model (prompts, cached ones included).
    #[must_use]
    pub fn input_tokens(mut self, tokens: u64) -> Self {
        self.input_tokens = Some(tokens);
        self
    }

    /// At most `tokens` written by the model.
    #[must_use]
    pub fn output_tokens(mut self, tokens: u64) -> Self {
        self.output_tokens = Some(tokens);
        self
    }

    /// At most `tokens` read and written together.
    #[must_use]
    pub fn tokens(mut self, tokens: u64) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// At most `dollars` (US) at the prices of the runner's
    /// [`PriceTable`](super::PriceTable), counted in millionths of a
    /// dollar. A negative or non-finite amount is no money at all.
    #[must_use]
    pub fn usd(mut self, dollars: f64) -> Self {
        self.micro_usd = Some(to_micro(dollars));
        self
    }

    /// At most `requests` model requests.
    #[must_use]
    pub fn requests(mut self, requests: u32) -> Self {
        self.requests = Some(requests);
        self
    }

    /// At most `calls` tool calls (child agents' included).
    #[must_use]
    pub fn tool_calls(mut self, calls: u32) -> Self {
        self.tool_calls = Some(calls);
        self
    }

    /// At most `time` of active work (from a start or a resume to the end
    /// or a pause), summed over the run's pauses.
    #[must_use]
    pub fn active_time(mut self, time: Duration) -> Self {
        self.active_time = Some(time);
        self
    }

    /// This budget, with `base`'s bound wherever this one sets none.
    #[must_use]
    pub fn over(&self, base: &Budget) -> Budget {
        Budget {
            input_tokens: self.input_tokens.or(base.input_tokens),
            output_tokens: self.output_tokens.or(base.output_tokens),
            tokens: self.tokens.or(base.tokens),
            micro_usd: self.micro_usd.or(base.micro_usd),
            requests: self.requests.or(base.requests),
            tool_calls: self.tool_calls.or(base.tool_calls),
            active_time: self.active_time.or(base.active_time),
        }
    }

    /// The request limit.
    #[must_use]
    pub fn max_requests(&self) -> Option<u32> {
        self.requests
    }

    /// The money limit, in US dollars.
    #[must_use]
    pub fn max_usd(&self) -> Option<f64> {
        #[allow(clippy::cast_precision_loss, reason = "a display amount")]
        let dollars = self.micro_usd.map(|micro| micro as f64 / 1_000_000.0);
        dollars
    }

    /// Whether active time is bounded.
    pub(crate) fn bounds_time(&self) -> bool {
        self.active_time.is_some()
    }

    /// Whether any limit is set.
    #[must_use]
    pub fn is_bounded(&self) -> bool {
        *self != Self::default()
    }

    pub(super) fn limit(&self, kind: BudgetKind) -> Option<u64> {
        match kind {
            BudgetKind::InputTokens => self.input_tokens,
            BudgetKind::OutputTokens => self.output_tokens,
            BudgetKind::Tokens => self.tokens,
            BudgetKind::Money => self.micro_usd,
            BudgetKind::Requests => self.requests.map(u64::from),
            BudgetKind::ToolCalls => self.tool_calls.map(u64::from),
            BudgetKind::ActiveTime => self
                .active_time
                .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
        }
    }
}

/// Millionths of a dollar in `dollars` (none for a negative or non-finite
/// amount).
pub(super) fn to_micro(dollars: f64) -> u64 {
    if dollars.is_finite() && dollars > 0.0 {
        // Saturates at u64::MAX for amounts no budget means.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "positive and finite, rounded; `as` saturates"
        )]
        let micro = (dollars * 1_000_000.0).round() as u64;
        micro
    } else {
        0
    }
}

/// One of the bounds of a [`Budget`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BudgetKind {
    /// Tokens read.
    InputTokens,
    /// Tokens written.
    OutputTokens,
    /// Tokens read and written.
    Tokens,
    /// Money, at the price table's prices.
    Money,
    /// Model requests.
    Requests,
    /// Tool calls.
    ToolCalls,
    /// Active time.
    ActiveTime,
}

impl BudgetKind {
    /// The bound's name, as agent files and outcomes write it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::InputTokens => "input_tokens",
            Self::OutputTokens => "output_tokens",
            Self::Tokens => "tokens",
            Self::Money => "usd",
            Self::Requests => "requests",
            Self::ToolCalls => "tool_calls",
            Self::ActiveTime => "active_time",
        }
    }
}

impl std::fmt::Display for BudgetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a run stopped at its budget: the bound, and what was left of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the run's `{budget}` budget is spent: {detail}")]
pub struct OverBudget {
    /// The bound met.
    pub budget: BudgetKind,
    /// What the request or call needed and what was left, in words.
    pub detail: String,
}

/// What a tree of runs has spent, as its root's state keeps it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Spent {
    /// Tokens read, cached ones included.
    pub input_tokens: u64,
    /// Of them, those read from a prompt cache.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
    /// Money, in millionths of a US dollar, at the price table's prices.
    #[serde(default)]
    pub micro_usd: u64,
    /// Model requests settled.
    pub requests: u32,
    /// Tool calls made.
    pub tool_calls: u32,
    /// Active time, in milliseconds.
    #[serde(default)]
    pub active_ms: u64,
}

impl Spent {
    /// Money spent, in US dollars.
    #[must_use]
    pub fn usd(&self) -> f64 {
        #[allow(clippy::cast_precision_loss, reason = "a display amount")]
        let dollars = self.micro_usd as f64 / 1_000_000.0;
        dollars
    }

    /// Whether nothing was spent.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    pub(super) fn of(&self, kind: BudgetKind) -> u64 {
        match kind {
            BudgetKind::InputTokens => self.input_tokens,
            BudgetKind::OutputTokens => self.output_tokens,
            BudgetKind::Tokens => self.input_tokens.saturating_add(self.output_tokens),
            BudgetKind::Money => self.micro_usd,
            BudgetKind::Requests => u64::from(self.requests),
            BudgetKind::ToolCalls => u64::from(self.tool_calls),
            BudgetKind::ActiveTime => self.active_ms,
        }
    }
}

impl std::fmt::Display for Spent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} request(s), {} tokens in ({} cached), {} out, ${:.4}, {} tool call(s), {:.1} s active",
            self.requests,
            self.input_tokens,
            self.cached_input_tokens,
            self.output_tokens,
            self.usd(),
            self.tool_calls,
            std::time::Duration::from_millis(self.active_ms).as_secs_f64()
        )
    }
}
