//! Tokens a model reported, the same four figures from every provider:
//! what each API calls its prompt, cached prompt, answer and reasoning
//! tokens is read where that API's answer is parsed, into [`Usage`].

use serde::{Deserialize, Serialize};

/// Tokens a model reported. The two detail figures are parts of the two
/// totals, not added to them: `input_tokens` counts every prompt token the
/// provider read, cached or not, and `output_tokens` every token it wrote,
/// reasoning included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read, cached ones included.
    pub input_tokens: u64,
    /// Tokens written, reasoning included.
    pub output_tokens: u64,
    /// Of `input_tokens`, those read from the provider's prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// Of `output_tokens`, those the model spent reasoning before it answered.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

// serde's `skip_serializing_if` passes a reference.
#[allow(clippy::trivially_copy_pass_by_ref, reason = "serde's signature")]
fn is_zero(tokens: &u64) -> bool {
    *tokens == 0
}

impl Usage {
    /// `input` tokens read and `output` written, with no detail.
    #[must_use]
    pub fn new(input: u64, output: u64) -> Self {
        Self {
            input_tokens: input,
            output_tokens: output,
            ..Self::default()
        }
    }

    /// Every token read and written.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cached_input_tokens = self
            .cached_input_tokens
            .saturating_add(other.cached_input_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(other.reasoning_tokens);
    }
}
