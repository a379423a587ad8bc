//! The one YAML loader of Iris: agent files and `decision.yaml` are read
//! through it, with the same bounds. A file must be a regular file (a FIFO
//! or a device would block or never end) of at most [`MAX_FILE_BYTES`];
//! parsing has a budget of aliases, depth and nodes, duplicate keys are
//! errors, and a failure comes back with its line, column, key path and a
//! message that says what was expected.

use std::io::Read as _;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde_saphyr::{Budget, DuplicateKeyPolicy, Options};

use super::Problem;

/// Largest configuration file read.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;
/// Most aliases (`*name`) one file may use: enough for any real file, far
/// too few for a "billion laughs" expansion.
const MAX_ALIASES: usize = 1_000;
/// Deepest nesting of mappings and sequences.
const MAX_DEPTH: usize = 32;
/// Most nodes one file may hold, aliases expanded.
const MAX_NODES: usize = 100_000;

/// The text of the file at `path`, refusing anything but a regular file of
/// at most [`MAX_FILE_BYTES`] before reading more than that.
///
/// # Errors
/// What was wrong, in words for a person.
pub fn read_bounded(path: &Path, what: &str) -> Result<String, String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Opening a FIFO waits for a writer, maybe forever: it is opened
    // without waiting, then refused below.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY);
    }
    let file = options
        .open(path)
        .map_err(|err| format!("cannot read the {what}: {err}"))?;
    read_bounded_file(file, what)
}

/// The text of `file`, opened already (without waiting, if it may be a
/// FIFO), refusing anything but a regular file of at most
/// [`MAX_FILE_BYTES`] before reading more than that.
///
/// # Errors
/// What was wrong, in words for a person.
pub fn read_bounded_file(file: std::fs::File, what: &str) -> Result<String, String> {
    let metadata = file
        .metadata()
        .map_err(|err| format!("cannot read the {what}: {err}"))?;
    if !metadata.is_file() {
        return Err(format!(
            "the {what} is not a regular file (a folder, FIFO or device); name a file"
        ));
    }
    if let Ok(len) = usize::try_from(metadata.len())
        && len > MAX_FILE_BYTES
    {
        return Err(too_large(len, what));
    }
    #[cfg(unix)]
    crate::nonblocking::clear_nonblocking(&file);
    let mut text = String::new();
    let limit = u64::try_from(MAX_FILE_BYTES).unwrap_or(u64::MAX) + 1;
    file.take(limit)
        .read_to_string(&mut text)
        .map_err(|err| format!("cannot read the {what}: {err}"))?;
    if text.len() > MAX_FILE_BYTES {
        return Err(too_large(text.len(), what));
    }
    Ok(text)
}

/// `text` parsed as a `T`, within the loader's bounds.
///
/// # Errors
/// A [`Problem`] with no file (the caller knows which), at the line and
/// column where the text went wrong, its key serde's path of the value at
/// fault (`hooks[1].handler.options`; `.` for the whole text).
pub fn from_str<T: DeserializeOwned>(text: &str, what: &str) -> Result<T, Problem> {
    if text.len() > MAX_FILE_BYTES {
        return Err(Problem::new("", "", too_large(text.len(), what)));
    }
    let mut path = String::new();
    let parsed = serde_saphyr::with_deserializer_from_str_with_options(text, options(), |de| {
        serde_path_to_error::deserialize(de).map_err(|err| {
            path = err.path().to_string();
            err.into_inner()
        })
    });
    parsed.map_err(|err| {
        let (line, column) = err.location().map_or((0, 0), |at| (at.line(), at.column()));
        Problem::new("", path, message_of(&err, what)).at(line, column)
    })
}

fn too_large(len: usize, what: &str) -> String {
    format!("the {what} is {len} bytes; it may have at most {MAX_FILE_BYTES} (1 MiB)")
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
fn message_of(err: &serde_saphyr::Error, file: &str) -> String {
    let text = err.to_string();
    let first = text.lines().next().unwrap_or(&text).trim();
    // The parser appends " at line L column C"; the error carries both.
    let first = first
        .rfind(" at line ")
        .map_or(first, |cut| first[..cut].trim_end());
    reworded_as(first, "key", file).unwrap_or_else(|| first.to_owned())
}

/// Whether `a` and `b` are close enough that one may be a misspelling of
/// the other (the bar "did you mean" uses).
#[must_use]
pub fn similar(a: &str, b: &str) -> bool {
    strsim::jaro_winkler(a, b) > 0.8
}

/// The closest of `known` to `name`, as "did you mean" text, or a list of
/// what is known.
#[must_use]
pub fn closest(name: &str, known: &[&str], what: &str) -> String {
    const SHOWN: usize = 8;
    let mut scored: Vec<(f64, &str)> = known
        .iter()
        .filter(|k| similar(name, k))
        .map(|k| (strsim::jaro_winkler(name, k), *k))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    if let Some((_, best)) = scored.first() {
        return format!("did you mean `{best}`?");
    }
    if known.is_empty() {
        return format!("no {what} is known");
    }
    let mut listed: Vec<&str> = known.to_vec();
    listed.sort_unstable();
    listed.dedup();
    let shown: Vec<String> = listed
        .iter()
        .take(SHOWN)
        .map(|k| format!("`{k}`"))
        .collect();
    let more = listed.len().saturating_sub(SHOWN);
    if more > 0 {
        format!("known {what}s: {} and {more} more", shown.join(", "))
    } else {
        format!("known {what}s: {}", shown.join(", "))
    }
}

/// serde's words reworded, naming what was written a `key` or an
/// `option`, and the kind of file it is in.
#[must_use]
pub fn reworded_as(message: &str, what: &str, file: &str) -> Option<String> {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (field, rest) = rest.split_once('`')?;
        let known = expected_names(rest);
        let hint = closest(field, &known, what);
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
    if let Some(rest) = message.strip_prefix("invalid type: ")
        && let Some((found, kind)) = rest.rsplit_once(", expected ")
        && let Some(expected) = expected_kind(kind.trim())
    {
        return Some(format!("expected {expected}, found {found}"));
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
            "the file nests deeper than {MAX_DEPTH} levels, more than {} needs",
            with_article(file)
        ));
    }
    if message.contains("budget breached") {
        return Some(format!(
            "the file expands past the parser's limits ({}); {} needs no such aliases or size",
            message.trim_start_matches("budget breached: "),
            with_article(file)
        ));
    }
    None
}

/// "an agent file", "a Decision file".
fn with_article(noun: &str) -> String {
    let article = if noun.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {noun}")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code, reason = "only parsed")]
    struct Small {
        name: String,
    }

    #[test]
    fn an_error_is_a_std_error_that_says_where() {
        let err = from_str::<Small>("name: [1, 2\n", "agent file").unwrap_err();
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err);
        let shown = boxed.to_string();
        assert!(
            shown.starts_with("2:1: ") || shown.starts_with("1:"),
            "{shown}"
        );
        let err = from_str::<Small>("nam: a\n", "agent file").unwrap_err();
        assert!(err.to_string().contains("name"), "{err}");
    }

    #[test]
    fn devices_and_folders_are_refused_before_any_read() {
        let err = read_bounded(Path::new("/dev/zero"), "agent file").unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        let err = read_bounded(Path::new("/"), "Decision file").unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
    }

    #[test]
    fn bombs_and_duplicates_are_errors_with_a_place() {
        let mut aliases = String::from("a: &a [x, x]\nb: &b [*a, *a]\n");
        for i in 0..2_000 {
            aliases.push('k');
            aliases.push_str(&i.to_string());
            aliases.push_str(": *b\n");
        }
        let err = from_str::<serde_json::Value>(&aliases, "Decision file").unwrap_err();
        assert!(err.message.contains("limits"), "{}", err.message);
        let deep = format!("name: {}1{}\n", "[".repeat(100), "]".repeat(100));
        let err = from_str::<serde_json::Value>(&deep, "Decision file").unwrap_err();
        assert!(err.message.contains("deeper than 32"), "{}", err.message);
        let twice = "name: a\nname: b\n";
        let err = from_str::<Small>(twice, "agent file").unwrap_err();
        assert!(err.message.contains("given twice"), "{}", err.message);
        assert!(err.line.is_some());
        let big = format!("name: {}\n", "x".repeat(MAX_FILE_BYTES));
        let err = from_str::<Small>(&big, "agent file").unwrap_err();
        assert!(err.message.contains("at most"), "{}", err.message);
    }
}
