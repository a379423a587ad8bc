//! `edit_file`: exact string replacement under the read-before-edit rule.

use std::fmt::Write as _;

use iris_core::{State, ToolContext, ToolErrorKind, ToolResult};
use serde_json::json;

use super::observation::Observation;
use super::text::{LineEnding, line_count, span_lines};
use super::{FileService, hash_of};

/// Lines of context shown around an edit.
const SNIPPET_CONTEXT: usize = 3;
/// Most match locations listed when `old_string` is ambiguous.
const LISTED_MATCHES: usize = 10;

/// Replace exact text in a file of the workspace.
///
/// The file must have been read with read_file in this run and be unchanged
/// since, and the lines being replaced must be among those read.
/// `old_string` must match exactly once (copy it from the file without the
/// line numbers read_file shows, and include surrounding lines to make it
/// unique) unless `replace_all` is set. The file keeps its line endings and
/// permissions; the write is atomic.
#[iris_macros::tool(crate = "::iris_core", built_in, write)]
#[must_use]
pub fn edit_file(
    /// Path relative to the workspace root.
    path: String,
    /// The exact text to replace.
    old_string: String,
    /// The text to put in its place; must differ from `old_string`.
    new_string: String,
    /// Replace every match instead of requiring exactly one; false when
    /// left out.
    replace_all: Option<bool>,
    #[ctx] cx: &ToolContext,
    #[state] files: State<FileService>,
) -> ToolResult {
    let edit = Edit {
        old: &old_string,
        new: &new_string,
        replace_all: replace_all.unwrap_or(false),
    };
    files.edit(cx, &path, &edit).unwrap_or_else(|error| error)
}

struct Edit<'a> {
    old: &'a str,
    new: &'a str,
    replace_all: bool,
}

impl FileService {
    fn edit(
        &self,
        cx: &ToolContext,
        path: &str,
        edit: &Edit<'_>,
    ) -> Result<ToolResult, ToolResult> {
        let invalid =
            |message: String| Err(ToolResult::error(ToolErrorKind::InvalidArguments, message));
        if edit.old.is_empty() {
            return invalid("`old_string` is empty; give the exact text to replace, or use write_file to create a file".into());
        }
        if edit.old == edit.new {
            return invalid("`old_string` and `new_string` are identical, so the edit would change nothing; give the new text in `new_string`".into());
        }
        let resolved = self.workspace.locate(path)?;
        let target = self.write_target(&resolved, false)?;
        // Held to the rename: a second edit of this file starts from what
        // the first one wrote, so neither change is lost.
        let _serial = self.locks.lock(&target);
        let Some(loaded) = self.load(&resolved)? else {
            return Err(ToolResult::error(
                ToolErrorKind::NotFound,
                format!("`{path}` does not exist; create it with write_file"),
            ));
        };
        let _flock = super::atomic::lock_file(&loaded.file, &resolved.shown)?;
        let observation = self.current_observation(cx.run_id(), &resolved, &loaded, "edit")?;

        let ending = LineEnding::of(&loaded.text);
        let text = ending.normalize(&loaded.text);
        let old = ending.normalize(edit.old);
        let new = ending.normalize(edit.new);
        let matches: Vec<usize> = text.match_indices(old.as_str()).map(|(at, _)| at).collect();
        let spans: Vec<(usize, usize)> = matches
            .iter()
            .map(|&at| span_lines(&text, at, old.len()))
            .collect();
        match (spans.len(), edit.replace_all) {
            (0, _) => {
                return Err(ToolResult::error(
                    ToolErrorKind::EditMismatch,
                    format!(
                        "`old_string` matches nothing in `{path}`; copy the text exactly as the file has it (whitespace and indentation included, without read_file's line numbers), or read the file again"
                    ),
                ));
            }
            (1, _) | (_, true) => {}
            (n, false) => {
                let listed: Vec<String> = spans
                    .iter()
                    .take(LISTED_MATCHES)
                    .map(|(first, _)| first.to_string())
                    .collect();
                return Err(ToolResult::error(
                    ToolErrorKind::EditMismatch,
                    format!(
                        "`old_string` matches {n} times in `{path}` (starting on lines {}{}); include more surrounding lines to make it unique, or set `replace_all` to replace every match",
                        listed.join(", "),
                        if n > LISTED_MATCHES { ", ..." } else { "" }
                    ),
                ));
            }
        }
        for &(first, last) in &spans {
            Self::require_seen(&resolved, &observation, first, last)?;
        }

        let updated = ending.apply(&text.replace(old.as_str(), new.as_str()));
        target.replace(
            &resolved,
            updated.as_bytes(),
            Some(loaded.permissions.clone()),
            || self.unchanged(&resolved, Some(&loaded)),
        )?;

        // Lines after a match move by the change in line breaks; the
        // replaced lines become `new_count` lines the run has now seen.
        let breaks = |s: &str| s.bytes().filter(|&b| b == b'\n').count();
        let new_count = |first: usize, last: usize| {
            (last + 1 - first + breaks(&new)).saturating_sub(breaks(&old))
        };
        let mut seen = observation.seen;
        for &(first, last) in spans.iter().rev() {
            seen.replace(first, last, new_count(first, last));
        }
        let total_lines = line_count(&updated);
        self.observations.set(
            cx.run_id(),
            &resolved.key,
            Observation {
                hash: hash_of(updated.as_bytes()),
                seen,
                total_lines,
            },
        );
        let (first, last) = spans[0];
        let shifted_last = (first + new_count(first, last))
            .saturating_sub(1)
            .max(first);
        Ok(
            ToolResult::text(summary(path, &updated, spans.len(), first, shifted_last)).with_data(
                json!({
                    "path": path,
                    "replacements": spans.len(),
                    "first_line": first,
                    "total_lines": total_lines,
                }),
            ),
        )
    }
}

/// What the model reads after an edit: the count and the first changed
/// lines with a little context, numbered as read_file numbers them.
fn summary(path: &str, updated: &str, replacements: usize, first: usize, last: usize) -> String {
    let mut out = format!(
        "Edited `{path}`: {replacements} replacement{}.\n",
        if replacements == 1 { "" } else { "s" }
    );
    let from = first.saturating_sub(SNIPPET_CONTEXT).max(1);
    let to = last + SNIPPET_CONTEXT;
    for (i, line) in updated
        .lines()
        .enumerate()
        .skip(from - 1)
        .take(to + 1 - from)
    {
        let _ = writeln!(out, "{:>6}\t{line}", i + 1);
    }
    out.truncate(out.trim_end().len());
    out
}
