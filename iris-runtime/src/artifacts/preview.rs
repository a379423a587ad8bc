//! The last stage of the pipeline: a result whose model content is longer
//! than its limit is saved whole as an artifact and the model reads a
//! preview instead.
//!
//! The preview holds the first half of the limit and the last quarter,
//! each moved to a line boundary when one is near, so it stays well inside
//! the limit even with the marker between them. The marker says how much
//! was cut, names the artifact, and gives the exact `read_file` call that
//! reads the first cut line (and column, when the cut fell inside a line,
//! as it does for one huge line).

use std::borrow::Cow;
use std::fmt::Write as _;

use iris_core::{ContentBlock, ToolResult};
use serde_json::json;

use super::ArtifactStore;

/// The limit of model content, in characters, when neither the tool nor
/// the executor configuration sets one (about 10,000 tokens).
pub const DEFAULT_MAX_RESULT_CHARS: usize = 40_000;

/// How a result's model content is bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreviewPolicy {
    /// Characters of text content past which the result is saved and
    /// previewed.
    pub max_chars: usize,
}

/// Applies `policy` to `result`: returned unchanged when its text fits;
/// otherwise the text is saved to `store` and replaced by a preview, with
/// the artifact reference and `stats.truncated` added. Image blocks stay.
///
/// When the store cannot be written the result is returned whole (nothing
/// may be lost) with `stats.artifact_error` saying why.
#[must_use]
pub fn apply_result_policy(
    result: ToolResult,
    policy: PreviewPolicy,
    store: &ArtifactStore,
) -> ToolResult {
    if fits(&result, policy) {
        return result;
    }
    let total_chars: usize = text_blocks(&result).map(|t| t.chars().count()).sum();
    let body = joined_text(&result);
    let saved = match store.save(body.as_bytes(), Some("text/plain; charset=utf-8"), None) {
        Ok(saved) => saved,
        Err(error) => {
            tracing::error!(%error, "an oversized result could not be saved; passing it on whole");
            return result.with_stat("artifact_error", error.to_string());
        }
    };
    let preview = build_preview(
        &body,
        total_chars,
        policy.max_chars,
        &saved.handle,
        saved.size,
    );
    let preview_chars = preview.chars().count();
    drop(body);
    let mut content = vec![ContentBlock::text(preview)];
    content.extend(
        result
            .content()
            .iter()
            .filter(|block| block.as_text().is_none())
            .cloned(),
    );
    let handle = saved.handle.clone();
    result.with_content(content).with_artifact(saved).with_stat(
        "truncated",
        json!({
            "original_chars": total_chars,
            "preview_chars": preview_chars,
            "artifact": handle,
        }),
    )
}

/// Whether the result's text is within the limit.
pub(crate) fn fits(result: &ToolResult, policy: PreviewPolicy) -> bool {
    let text_bytes: usize = text_blocks(result).map(str::len).sum();
    // A character is at least one byte: most results stop here uncounted.
    text_bytes <= policy.max_chars
        || text_blocks(result)
            .map(|t| t.chars().count())
            .sum::<usize>()
            <= policy.max_chars
}

fn text_blocks(result: &ToolResult) -> impl Iterator<Item = &str> {
    result.content().iter().filter_map(ContentBlock::as_text)
}

/// The text the model would have read: blocks joined by newlines, borrowed
/// when there is only one (the common case, and the one that matters for
/// memory with huge bodies).
fn joined_text(result: &ToolResult) -> Cow<'_, str> {
    let mut blocks = text_blocks(result);
    match (blocks.next(), blocks.next()) {
        (Some(only), None) => Cow::Borrowed(only),
        (None, _) => Cow::Borrowed(""),
        (Some(_), Some(_)) => Cow::Owned(result.text_content()),
    }
}

fn build_preview(
    body: &str,
    total_chars: usize,
    max_chars: usize,
    handle: &str,
    size: u64,
) -> String {
    let head_end = head_cut(body, max_chars / 2);
    let tail_start = tail_cut(body, max_chars / 4).max(head_end);
    let head = &body[..head_end];
    let tail = &body[tail_start..];
    let cut_chars = total_chars - head.chars().count() - tail.chars().count();
    let line = head.bytes().filter(|&b| b == b'\n').count() + 1;
    let column = head
        .rfind('\n')
        .map_or(head, |nl| &head[nl + 1..])
        .chars()
        .count()
        + 1;
    let total_lines = body.bytes().filter(|&b| b == b'\n').count() + 1;
    let call = if column > 1 {
        json!({"path": handle, "offset": line, "column": column})
    } else {
        json!({"path": handle, "offset": line})
    };
    let mut preview = String::with_capacity(head.len() + tail.len() + 400);
    preview.push_str(head);
    if !head.is_empty() && !head.ends_with('\n') {
        preview.push('\n');
    }
    let _ = write!(
        preview,
        "[... {cut_chars} of {total_chars} characters cut here. The whole result is saved as {handle} \
         ({size} bytes, {total_lines} lines). Read the cut part with read_file {call}; each page says where the next one starts ...]"
    );
    if !tail.is_empty() {
        preview.push('\n');
        preview.push_str(tail);
    }
    preview
}

/// Byte index ending the head: `budget` characters, pulled back to just
/// after a newline when one lies in the last fifth.
fn head_cut(body: &str, budget: usize) -> usize {
    let end = body
        .char_indices()
        .nth(budget)
        .map_or(body.len(), |(i, _)| i);
    let window_start = floor_char(body, end - (end / 5));
    match body[window_start..end].rfind('\n') {
        Some(nl) => window_start + nl + 1,
        None => end,
    }
}

/// Byte index starting the tail: the last `budget` characters, pushed to
/// just after a newline when one lies in the first fifth.
fn tail_cut(body: &str, budget: usize) -> usize {
    if budget == 0 {
        return body.len();
    }
    let start = body
        .char_indices()
        .rev()
        .nth(budget - 1)
        .map_or(0, |(i, _)| i);
    let window_end = floor_char(body, start + (body.len() - start) / 5);
    match body[start..window_end].find('\n') {
        Some(nl) => start + nl + 1,
        None => start,
    }
}

fn floor_char(body: &str, mut index: usize) -> usize {
    while !body.is_char_boundary(index) {
        index -= 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_results_pass_through_untouched() {
        let store = ArtifactStore::new("/nonexistent/never-written");
        let result = ToolResult::text("small");
        let out = apply_result_policy(result.clone(), PreviewPolicy { max_chars: 10 }, &store);
        assert_eq!(out, result);
    }

    #[test]
    fn cuts_land_on_char_boundaries_and_lines() {
        let body = "é".repeat(50) + "\n" + &"ü".repeat(50);
        let head = head_cut(&body, 60);
        assert!(body.is_char_boundary(head));
        let tail = tail_cut(&body, 60);
        assert!(body.is_char_boundary(tail));
        let lines = "line\n".repeat(100);
        assert!(lines[..head_cut(&lines, 52)].ends_with('\n'));
    }
}
