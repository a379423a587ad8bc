//! How much of the context a disclosed schema costs.
//!
//! The estimate is the length of the tool's OpenAI Chat Completions
//! projection (the JSON the request carries for it) divided by four,
//! rounded up: about how many tokens common tokenizers make of JSON with
//! English descriptions. It is an estimate, kept deliberately simple and
//! the same for every provider, so budgets behave predictably.

use iris_core::ToolDefinition;

/// Characters per token in the estimate.
pub const CHARS_PER_TOKEN: usize = 4;

/// Tokens disclosed schemas may take in one run's requests, unless the
/// host sets another budget.
pub const DEFAULT_BUDGET_TOKENS: usize = 8_000;

/// The estimated tokens of `definition`'s schema in a request.
#[must_use]
pub fn schema_tokens(definition: &ToolDefinition) -> usize {
    definition.spec_chars().div_ceil(CHARS_PER_TOKEN)
}
