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
            let key = key_path(&path);
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

/// serde's message, first line only (the location is given apart),
/// reworded where the parser's words would not tell a person what to do.
fn message_of(err: &serde_saphyr::Error) -> String {
    let text = err.to_string();
    let first = text.lines().next().unwrap_or(&text).trim();
    // The parser appends " at line L column C"; the issue carries both.
    let first = first
        .rfind(" at line ")
        .map_or(first, |cut| first[..cut].trim_end());
    reworded(first).unwrap_or_else(|| first.to_owned())
}

/// serde's path as the file's keys: a value's location wrapper adds a
/// `value` segment the file does not have, and the root is no key.
fn key_path(path: &str) -> String {
    if path == "." || path == "?" {
        return String::new();
    }
    path.replace("handler.value.", "handler.")
        .trim_end_matches(".value")
        .trim_end_matches(".?")
        .to_owned()
}

pub(crate) fn reworded(message: &str) -> Option<String> {
    reworded_as(message, "key")
}

/// serde's words reworded, naming what was written a `key` or an `option`.
pub(crate) fn reworded_as(message: &str, what: &str) -> Option<String> {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (field, rest) = rest.split_once('`')?;
        let known = expected_names(rest);
        let hint = super::error::closest(field, &known, what);
        return Some(format!("unknown {what} `{field}`; {hint}"));
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let (value, rest) = rest.split_once('`')?;
        let known: Vec<String> = expected_names(rest)
            .iter()
            .map(|n| format!("`{n}`"))
            .collect();
        return Some(format!("`{value}` is not one of {}", known.join(", ")));
    }
    if let Some(kind) = message.strip_prefix("invalid ")
        && let Some(expected) = expected_kind(kind.trim())
    {
        return Some(format!("expected {expected}"));
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        let (field, _) = rest.split_once('`')?;
        return Some(format!("the key `{field}` is required"));
    }
    if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
        let key = rest.split(',').next().unwrap_or(rest).trim();
        return Some(format!("`{key}` is given twice; keep one"));
    }
    if message.contains("Depth {") {
        return Some(format!(
            "the file nests deeper than {MAX_DEPTH} levels, more than an agent file needs"
        ));
    }
    if message.contains("budget breached") {
        return Some(format!(
            "the file expands past the parser's limits ({}); an agent file needs no such aliases or size",
            message.trim_start_matches("budget breached: ")
        ));
    }
    None
}

/// What a scalar type takes, in words.
fn expected_kind(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number of 0 or more",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "bool" | "boolean" => "`true` or `false`",
        _ => return None,
    })
}

/// The names after "expected" in serde's messages: "expected one of `a`,
/// `b`" or "expected a, b or c".
fn expected_names(rest: &str) -> Vec<&str> {
    let Some((_, list)) = rest.split_once("expected ") else {
        return Vec::new();
    };
    let list = list.strip_prefix("one of ").unwrap_or(list);
    list.split(", ")
        .flat_map(|part| part.split(" or "))
        .map(|name| name.trim().trim_matches('`'))
        .filter(|name| !name.is_empty())
        .collect()
}
