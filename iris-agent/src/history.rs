//! The context policy: when the tool results a request would carry pass a
//! budget, older results of read-only tools go to the model as short
//! previews with a handle, and `read_history` pages the original back. The
//! run's stored history keeps everything; only the request is shortened.
//!
//! This is not the preview of one oversized result (which the executor
//! saves as an artifact when the call returns): a result that fitted when it
//! came can still crowd out later steps once many have piled up.

use std::borrow::Cow;
use std::sync::Arc;

use iris_core::{RunId, State, ToolContext, ToolErrorKind, ToolResult};
use rustc_hash::FxHashMap;

use iris_model::Message;
use iris_runtime::ledger::RunLedger;

/// Characters of an old result shown in its preview.
const PREVIEW_CHARS: usize = 200;
/// Characters `read_history` returns per page unless asked for fewer.
const PAGE_CHARS: usize = 8_000;

/// The name of the tool that reads old results back.
pub(crate) const READ_HISTORY: &str = "read_history";

/// The full text of one run's tool results, by call id: the runner's slot
/// in the run ledger, so it ends with the run and is bounded with it.
#[derive(Debug, Default)]
struct History(FxHashMap<String, Arc<str>>);

/// Keeps the full text of every result in `messages` for `read_history`.
pub(crate) fn record_all(ledger: &RunLedger, run: &RunId, messages: &[Message]) {
    let mut results = messages.iter().filter_map(|message| match message {
        Message::Tool {
            call_id, result, ..
        } => Some((call_id, result)),
        _ => None,
    });
    let Some(first) = results.next() else {
        return;
    };
    ledger.with_slot(run, |history: &mut History| {
        for (call_id, result) in std::iter::once(first).chain(results) {
            history
                .0
                .insert(call_id.clone(), result.text_content().into());
        }
    });
}

/// Read back an earlier tool result that the conversation shows shortened.
/// Give the call id from its preview; long results come in pages: pass the
/// `offset` the previous page ended at.
#[iris_macros::tool(crate = "::iris_core", built_in, read_only, concurrency_safe)]
#[must_use]
pub fn read_history(
    /// The call id the preview names.
    call_id: String,
    /// Characters to skip; 0 when left out.
    offset: Option<usize>,
    /// Most characters to return; 8000 when left out.
    limit: Option<usize>,
    #[ctx] cx: &ToolContext,
    #[state] ledger: State<RunLedger>,
) -> ToolResult {
    let text = ledger
        .read_slot(cx.run_id(), |history: &History| {
            history.0.get(&call_id).cloned()
        })
        .flatten();
    let Some(text) = text else {
        return ToolResult::error(
            ToolErrorKind::NotFound,
            format!(
                "no earlier result has call id `{call_id}` in this run; copy the id from the preview"
            ),
        );
    };
    let offset = offset.unwrap_or(0);
    let limit = limit.unwrap_or(PAGE_CHARS).clamp(1, PAGE_CHARS);
    let total = text.chars().count();
    let page: String = text.chars().skip(offset).take(limit).collect();
    let end = (offset + limit).min(total);
    let more = if end < total {
        format!("\n[characters {offset} to {end} of {total}; continue with offset {end}]")
    } else {
        String::new()
    };
    ToolResult::text(format!("{page}{more}"))
}

/// `messages` as the request carries them: unchanged while their tool
/// results fit `budget` characters; otherwise the oldest results of tools
/// `read_only` accepts are replaced by previews, until they fit or nothing
/// older than the last step is left to shorten.
pub(crate) fn within_budget(
    messages: &[Message],
    budget: usize,
    read_only: impl Fn(&str) -> bool,
) -> Cow<'_, [Message]> {
    let size = |m: &Message| match m {
        Message::Tool { result, .. } => result.text_content().chars().count(),
        _ => 0,
    };
    let mut total: usize = messages.iter().map(size).sum();
    if total <= budget {
        return Cow::Borrowed(messages);
    }
    // The latest step's results are what the model acts on next.
    let last_step = messages
        .iter()
        .rposition(|m| matches!(m, Message::Assistant { .. }))
        .unwrap_or(0);
    let mut shortened = messages.to_vec();
    for message in &mut shortened[..last_step] {
        if total <= budget {
            break;
        }
        let Message::Tool {
            call_id,
            tool,
            result,
        } = message
        else {
            continue;
        };
        let text = result.text_content();
        let length = text.chars().count();
        if length <= PREVIEW_CHARS || result.is_error() || !read_only(tool) {
            continue;
        }
        let head = iris_core::text::prefix(&text, PREVIEW_CHARS);
        let preview = format!(
            "{head}…\n[an earlier result of `{tool}`, {length} characters, shortened to save context; read_history {{\"call_id\": \"{call_id}\"}} gives it back]"
        );
        total = total - length + preview.chars().count();
        *result = ToolResult::text(preview);
    }
    Cow::Owned(shortened)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(call_id: &str, name: &str, text: &str) -> Message {
        Message::Tool {
            call_id: call_id.to_owned(),
            tool: name.to_owned(),
            result: ToolResult::text(text),
        }
    }

    fn step() -> Message {
        Message::Assistant {
            text: None,
            tool_calls: Vec::new(),
        }
    }

    #[test]
    fn old_observations_shorten_first_and_the_last_step_stays() {
        let long = "x".repeat(5_000);
        let messages = vec![
            step(),
            tool("a", "read_file", &long),
            tool("b", "write_file", &long),
            step(),
            tool("c", "read_file", &long),
        ];
        let read_only = |name: &str| name == "read_file";
        assert!(matches!(
            within_budget(&messages, 20_000, read_only),
            Cow::Borrowed(_)
        ));
        let sent = within_budget(&messages, 11_000, read_only);
        let texts: Vec<usize> = sent
            .iter()
            .filter_map(|m| match m {
                Message::Tool { result, .. } => Some(result.text_content().len()),
                _ => None,
            })
            .collect();
        assert!(texts[0] < 1_000, "the old read is a preview");
        assert_eq!(texts[1], 5_000, "a write's result is not an observation");
        assert_eq!(texts[2], 5_000, "the last step's result stays whole");
        let Message::Tool { result, .. } = &sent[1] else {
            panic!("a tool message");
        };
        assert!(
            result
                .text_content()
                .contains(r#"read_history {"call_id": "a"}"#)
        );
    }
}
