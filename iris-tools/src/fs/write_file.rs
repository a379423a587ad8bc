//! `write_file`: create a file freely; overwrite one only after reading it.

use iris_core::{State, ToolContext, ToolResult};
use serde_json::json;

use super::observation::{LineRanges, Observation};
use super::text::{LineEnding, line_count};
use super::{FileService, hash_of};

/// Write a whole file in the workspace, creating it and its folders if
/// needed.
///
/// Creating a new file needs nothing else. Overwriting an existing file
/// needs a read of all of it with read_file in this run, and that it did not
/// change since; prefer edit_file for changes to part of a file. An existing
/// file keeps its permissions and, when it uses `\r\n`, its line endings.
/// The write is atomic.
#[iris_macros::tool(crate = "::iris_core", built_in, write)]
#[must_use]
pub fn write_file(
    /// Path relative to the workspace root.
    path: String,
    /// The complete new content of the file.
    content: String,
    #[ctx] cx: &ToolContext,
    #[state] files: State<FileService>,
) -> ToolResult {
    files
        .write(cx, &path, &content)
        .unwrap_or_else(|error| error)
}

impl FileService {
    fn write(&self, cx: &ToolContext, path: &str, content: &str) -> Result<ToolResult, ToolResult> {
        let resolved = self.workspace.locate(path)?;
        let target = self.write_target(&resolved, true)?;
        // Held to the rename: a write in this process never starts from
        // content another one is replacing.
        let _serial = self.locks.lock(&target);
        let existing = self.load(&resolved)?;
        let _flock = existing
            .as_ref()
            .map(|loaded| super::atomic::lock_file(&loaded.file, &resolved.shown))
            .transpose()?;
        let (bytes, permissions, verb) = match &existing {
            None => (content.to_owned(), None, "Created"),
            Some(loaded) => {
                let observation =
                    self.current_observation(cx.run_id(), &resolved, loaded, "overwrite")?;
                // An empty file has no lines to have read.
                if observation.total_lines > 0 {
                    Self::require_seen(&resolved, &observation, 1, observation.total_lines)?;
                }
                let ending = LineEnding::of(&loaded.text);
                (
                    ending.apply(content),
                    Some(loaded.permissions.clone()),
                    "Overwrote",
                )
            }
        };
        target.replace(&resolved, bytes.as_bytes(), permissions, || {
            self.unchanged(&resolved, existing.as_ref())
        })?;
        let total_lines = line_count(&bytes);
        self.observations.set(
            cx.run_id(),
            &resolved.key,
            Observation {
                hash: hash_of(bytes.as_bytes()),
                seen: LineRanges::all(total_lines),
                total_lines,
            },
        );
        Ok(ToolResult::text(format!(
            "{verb} `{path}`: {total_lines} lines, {} bytes.",
            bytes.len()
        ))
        .with_data(json!({
            "path": path,
            "created": existing.is_none(),
            "total_lines": total_lines,
            "bytes": bytes.len(),
        })))
    }
}
