//! Reading an agent file: bounded input, YAML with a budget, and serde's
//! first error with its line, column and key path.

use std::path::Path;

use serde_saphyr::{Budget, DuplicateKeyPolicy, Options};

use super::error::{AssemblyError, Issues};
use super::file::AgentFile;

/// Largest agent file read.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;
/// Most aliases (`*name`) one file may use: enough for any real file, far
/// too few for a "billion laughs" expansion.
const MAX_ALIASES: usize = 1_000;
/// Deepest nesting of mappings and sequences.
const MAX_DEPTH: usize = 32;
/// Most nodes one file may hold, aliases expanded.
const MAX_NODES: usize = 100_000;

/// `text` as the agent file at `origin`.
pub(crate) fn parse(text: &str, origin: &Path) -> Result<AgentFile, AssemblyError> {
    let mut issues = Issues::new(origin);
    if text.len() > MAX_FILE_BYTES {
        issues.whole(
            "",
            format!(
                "the file is {} bytes; an agent file may have at most {MAX_FILE_BYTES} (1 MiB): move long instructions to `instructions_file`",
                text.len()
            ),
        );
        return Err(finish(issues));
    }
    let mut path = String::new();
    let parsed = serde_saphyr::with_deserializer_from_str_with_options(text, options(), |de| {
        serde_path_to_error::deserialize(de).map_err(|err| {
            path = err.path().to_string();
            err.into_inner()
        })
    });
    match parsed {
        Ok(file) => Ok(file),
        Err(err) => {
            let key = if path == "." { String::new() } else { path };
            let message = message_of(&err);
            match err.location() {
                Some(at) => issues.at(at, key, message),
                None => issues.whole(key, message),
            }
            Err(finish(issues))
        }
    }
}

fn finish(issues: Issues) -> AssemblyError {
    match issues.finish() {
        Err(error) => error,
        // Only called with an issue recorded.
        Ok(()) => AssemblyError { issues: Vec::new() },
    }
}

fn options() -> Options {
    let mut budget = Budget::default();
    budget.max_aliases = MAX_ALIASES;
    budget.max_depth = MAX_DEPTH;
    budget.max_nodes = MAX_NODES;
    budget.max_reader_input_bytes = Some(MAX_FILE_BYTES);
    let mut options = Options::default();
    options.budget = Some(budget);
    options.duplicate_keys = DuplicateKeyPolicy::Error;
    options.with_snippet = false;
    options
}

/// serde's message, first line only (the location is given apart), with
/// unknown keys answered by the closest known one.
fn message_of(err: &serde_saphyr::Error) -> String {
    let text = err.to_string();
    let first = text.lines().next().unwrap_or(&text).trim();
    // serde-saphyr appends " at line L column C"; the issue carries both.
    let first = first
        .rfind(" at line ")
        .map_or(first, |cut| first[..cut].trim_end());
    suggest_for_unknown_field(first).unwrap_or_else(|| first.to_owned())
}

/// serde says "unknown field `x`, expected one of `a`, `b`": name the
/// closest, or say which keys exist.
fn suggest_for_unknown_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (field, rest) = rest.split_once('`')?;
    let known: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
    let hint = super::error::closest(field, &known, "key");
    Some(format!("unknown key `{field}`; {hint}"))
}
