//! A local estimate of a request's input tokens, made before it is sent:
//! its characters over three (English runs near four per token, code and
//! JSON nearer three), so that a reservation errs on the side of too much.

use iris_core::ToolSpec;
use iris_model::Message;

/// Characters per token the estimate assumes.
const CHARS_PER_TOKEN: usize = 3;

/// Tokens a request of `instructions`, `messages` and `tools` is estimated
/// to read (rounded up; at least one).
pub(crate) fn estimate_input(
    instructions: Option<&str>,
    messages: &[Message],
    tools: &[ToolSpec],
) -> u64 {
    let mut chars = instructions.map_or(0, str::len);
    for message in messages {
        // The framing a provider puts around each message.
        chars += 24;
        chars += match message {
            Message::User { text } => text.len(),
            Message::Assistant { text, tool_calls } => {
                text.as_deref().map_or(0, str::len)
                    + tool_calls
                        .iter()
                        .map(|call| call.name.len() + call.id.len() + call.input.to_string().len())
                        .sum::<usize>()
            }
            Message::Tool {
                call_id,
                tool,
                result,
            } => call_id.len() + tool.len() + result.text_content().len(),
        };
    }
    for tool in tools {
        chars += tool.name().as_str().len()
            + tool.description().len()
            + tool.parameters().to_string().len();
    }
    u64::try_from(chars.div_ceil(CHARS_PER_TOKEN).max(1)).unwrap_or(u64::MAX)
}
