//! Reading an agent file through the shared bounded loader, with every
//! problem of its shape at once.
//!
//! serde stops at the first fault. To find the next, the entry at fault (an
//! unknown key, a value of the wrong type, a key given twice) is blanked
//! out of the text, each character becoming a space so that every later
//! line and column stays where it was, and the text is read again, until it
//! reads whole. The checks of names and references then run on that text,
//! so one pass reports unknown keys, wrong types and unknown names
//! together. A problem that only follows from a blanked entry (a required
//! key that was just removed) is held back; a file that is not YAML stops
//! at that.

use std::path::Path;

use super::error::{AssemblyError, Issues, Problem, line_starts, offset_of};
use super::file::AgentFile;
use iris_runtime::config::yaml;

/// Largest agent file read (1 MiB): the shared YAML loader's bound.
pub const MAX_FILE_BYTES: usize = yaml::MAX_FILE_BYTES;

/// Most problems of shape gathered from one file: past this many, the rest
/// waits for the next check.
const MAX_SHAPE_PROBLEMS: usize = 64;

/// A file read whole, perhaps after blanking the entries at fault.
pub(crate) struct Parsed {
    pub(crate) file: AgentFile,
    /// The text read: the file's, with the blanked entries as spaces.
    pub(crate) text: String,
    /// The faults of shape found on the way, in file order.
    pub(crate) problems: Vec<Problem>,
    /// The key paths of the entries blanked.
    pub(crate) blanked: Vec<String>,
}

impl Parsed {
    /// How the problems of shape join the later ones: a later problem that
    /// only follows from a blanked entry (a name unknown because the entry
    /// defining the tools was blanked) is held back.
    pub(crate) fn held_back(
        blanked: &[String],
    ) -> impl FnOnce(Vec<Problem>, Vec<Problem>) -> Vec<Problem> {
        let tools_blanked = blanked.iter().any(|key| key.starts_with("tools"));
        move |mut all, later| {
            all.extend(later.into_iter().filter(|issue| {
                let refers_to_tools = issue.key.starts_with("tools.deferred")
                    || issue.key.starts_with("permissions.tools")
                    || (issue.key.starts_with("hooks[") && issue.key.contains("].tools"));
                !(tools_blanked && refers_to_tools)
            }));
            all.sort_by_key(|issue| (issue.line.is_none(), issue.line, issue.column));
            all
        }
    }
}

/// `text` as the agent file at `origin`.
pub(crate) fn parse(text: &str, origin: &Path) -> Result<Parsed, AssemblyError> {
    let mut issues = Issues::new(origin);
    let mut text = text.to_owned();
    let mut blanked: Vec<String> = Vec::new();
    let mut appended_at: Option<u64> = None;
    for _ in 0..=MAX_SHAPE_PROBLEMS {
        let err = match yaml::from_str::<AgentFile>(&text, "agent file") {
            Ok(file) => {
                let problems = match issues.finish() {
                    Ok(()) => Vec::new(),
                    Err(error) => error.issues,
                };
                return Ok(Parsed {
                    file,
                    text,
                    problems,
                    blanked,
                });
            }
            Err(err) => err,
        };
        // Text that is not YAML (or breaks the parser's bounds) is one
        // problem: nothing after it can be read. Asked only once the file
        // failed to read, so a good file is parsed once.
        if blanked.is_empty()
            && issues.is_empty()
            && let Err(syntax) = yaml::from_str::<serde::de::IgnoredAny>(&text, "agent file")
            && matches!(Fault::of(&syntax.message), Fault::Other)
        {
            let key = key_path(&syntax.key);
            issues.at_place(syntax.line, syntax.column, key, syntax.message);
            return Err(finish(issues));
        }
        let key = key_path(&err.key);
        let fault = Fault::of(&err.message);
        // A fault in what was put in to read on is no fault of the file.
        let ours = appended_at.is_some_and(|line| err.line.is_some_and(|at| at >= line));
        let missing = match &fault {
            Fault::Missing(field) => Some(joined(&key, field)),
            _ => None,
        };
        let follows = missing.as_ref().is_some_and(|k| blanked.contains(k));
        // A section whose every entry was blanked reads as empty: not a
        // fault of its own, and blanked in turn.
        let emptied = matches!(fault, Fault::Value)
            && !key.is_empty()
            && blanked.iter().any(|b| {
                b.strip_prefix(key.as_str())
                    .is_some_and(|rest| rest.starts_with(['.', '[']))
            });
        if !ours && !follows && !emptied {
            issues.at_place(err.line, err.column, key.clone(), err.message.clone());
        }
        if ours || follows {
            break;
        }
        let place = err.line.map(|line| (line, err.column.unwrap_or(1)));
        let next = match (&fault, place) {
            // A required key left out of the file's top level: put one in
            // at its end, to read the rest.
            (Fault::Missing(field), _) if key.is_empty() && appended_at.is_none() => {
                let appended = format!("{}\n{field}: \"\"\n", text.trim_end_matches(['\n', '\r']));
                // The key's line: the last but the empty one after it.
                let line = line_starts(&appended).count().saturating_sub(1);
                appended_at = Some(u64::try_from(line).unwrap_or(u64::MAX));
                Some(appended)
            }
            (Fault::Key, Some((line, column))) => {
                offset_of(&text, line, column).and_then(|start| blank_entry(&text, start))
            }
            (Fault::Value, Some((line, column))) => offset_of(&text, line, column)
                .and_then(|value| entry_of_value(&text, value, &key))
                .and_then(|start| blank_entry(&text, start)),
            _ => None,
        };
        match next {
            Some(next) if next != text => {
                text = next;
                blanked.push(key);
            }
            _ => break,
        }
    }
    Err(finish(issues))
}

/// What kind of fault a message of the loader names.
enum Fault {
    /// A key that should not be there, or is given twice: its location is
    /// the key's.
    Key,
    /// A value of the wrong type or out of its set: its location is the
    /// value's.
    Value,
    /// A required key left out (its name).
    Missing(String),
    /// Anything else (not YAML, past the parser's limits): nothing to read
    /// on from.
    Other,
}

impl Fault {
    fn of(message: &str) -> Self {
        if message.starts_with("unknown key `") || message.contains("is given twice") {
            Self::Key
        } else if let Some(rest) = message.strip_prefix("the key `") {
            rest.split_once("` is required")
                .map_or(Self::Other, |(field, _)| Self::Missing(field.to_owned()))
        } else if message.starts_with("expected ")
            || message.contains("is not one of")
            || message.starts_with("invalid")
        {
            Self::Value
        } else {
            Self::Other
        }
    }
}

fn joined(key: &str, field: &str) -> String {
    if key.is_empty() {
        field.to_owned()
    } else {
        format!("{key}.{field}")
    }
}

/// The start of the entry holding the value at byte `value`: the key named
/// by the path's last segment before it, or the value itself when the
/// path ends in a sequence index.
fn entry_of_value(text: &str, value: usize, key: &str) -> Option<usize> {
    let last = key.rsplit('.').next().unwrap_or(key);
    if last.is_empty() {
        return None;
    }
    if last.ends_with(']') {
        // An item of a sequence: blank the item alone.
        return Some(value);
    }
    // The key sits before its value, or (for a value that is missing) is
    // the text just before where the value should be: up to the end of the
    // value's line.
    let line_end = text
        .get(value..)?
        .find(['\n', '\r'])
        .map_or(text.len(), |at| value + at);
    let before = text.get(..line_end)?;
    [
        format!("{last}:"),
        format!("\"{last}\":"),
        format!("'{last}':"),
    ]
    .iter()
    .filter_map(|pattern| before.rfind(pattern.as_str()))
    .max()
}

/// `text` with the entry that starts at byte `start` (a key, or a sequence
/// item) turned into spaces: in a flow collection up to the next `,` (taken
/// too) or its end; in a block, the rest of its line and every following
/// line indented deeper.
fn blank_entry(text: &str, start: usize) -> Option<String> {
    let line_start = text
        .get(..start)?
        .rfind(['\n', '\r'])
        .map_or(0, |at| at + 1);
    let lead = text.get(line_start..start)?;
    let end = if in_flow(text, start) {
        flow_end(text, start)
    } else {
        let indent = lead.chars().count();
        block_end(text, start, indent)
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(text.get(..start)?);
    // Line breaks stay (LF, CR: YAML counts a lone CR as one), so every
    // later line and column stays where it was.
    for c in text.get(start..end)?.chars() {
        out.push(if matches!(c, '\n' | '\r') { c } else { ' ' });
    }
    out.push_str(text.get(end..)?);
    Some(out)
}

/// Whether byte `at` lies inside a flow collection (`{..}` or `[..]`),
/// quotes and comments taken into account.
fn in_flow(text: &str, at: usize) -> bool {
    let mut depth = 0_i32;
    let mut quote: Option<char> = None;
    let mut comment = false;
    for (i, c) in text.char_indices() {
        if i >= at {
            break;
        }
        match (quote, c) {
            _ if comment => comment = !matches!(c, '\n' | '\r'),
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') if opens_scalar(text, i) => quote = Some(c),
            (None, '#') if starts_comment(text, i) => comment = true,
            (None, '{' | '[') => depth += 1,
            (None, '}' | ']') => depth -= 1,
            _ => {}
        }
    }
    depth > 0
}

/// Whether the quote at byte `at` opens a quoted scalar: one that starts a
/// value (after `:`, `-`, `?`, `,`, a bracket, or at a line's start). A
/// quote inside plain text (`people's`) is a character of it.
fn opens_scalar(text: &str, at: usize) -> bool {
    text.get(..at)
        .and_then(|before| before.trim_end_matches([' ', '\t']).chars().next_back())
        .is_none_or(|c| matches!(c, ':' | '-' | '?' | ',' | '[' | '{' | '\n' | '\r'))
}

/// Whether the `#` at byte `at` starts a comment: at a line's start or
/// after a space (`a#b` is plain text).
fn starts_comment(text: &str, at: usize) -> bool {
    text.get(..at)
        .and_then(|before| before.chars().next_back())
        .is_none_or(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
}

/// The end of a flow entry starting at `start`: past its `,`, or at the
/// bracket that closes its collection.
fn flow_end(text: &str, start: usize) -> usize {
    let mut depth = 0_i32;
    let mut quote: Option<char> = None;
    for (i, c) in text.get(start..).unwrap_or("").char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') if opens_scalar(text, start + i) => quote = Some(c),
            (None, '{' | '[') => depth += 1,
            (None, '}' | ']') if depth == 0 => return start + i,
            (None, '}' | ']') => depth -= 1,
            (None, ',') if depth == 0 => return start + i + 1,
            _ => {}
        }
    }
    text.len()
}

/// The end of a block entry starting at `start` whose key sits at column
/// `indent`: the end of its line, and of each following line that is blank
/// or indented deeper (or a sequence at the key's own indentation, which
/// YAML allows as a key's value).
fn block_end(text: &str, start: usize, indent: usize) -> usize {
    let mut end = text
        .get(start..)
        .and_then(|rest| rest.find(['\n', '\r']))
        .map_or(text.len(), |at| start + at);
    let value_on_key_line = text
        .get(start..end)
        .and_then(|line| line.split_once(':'))
        .is_some_and(|(_, value)| !value.trim().is_empty() && !value.trim().starts_with('#'));
    while end < text.len() {
        let next_start = end + 1;
        let next_end = text
            .get(next_start..)
            .and_then(|rest| rest.find(['\n', '\r']))
            .map_or(text.len(), |at| next_start + at);
        let line = text.get(next_start..next_end).unwrap_or("");
        let spaces = line.chars().take_while(|c| *c == ' ').count();
        let rest = line.trim_start_matches(' ');
        let deeper = rest.is_empty() || spaces > indent;
        let own_sequence = !value_on_key_line && spaces == indent && rest.starts_with('-');
        if !(deeper || own_sequence) {
            break;
        }
        end = next_end;
    }
    end
}

fn finish(issues: Issues) -> AssemblyError {
    match issues.finish() {
        Err(error) => error,
        // Only called with an issue recorded.
        Ok(()) => AssemblyError { issues: Vec::new() },
    }
}

/// The agent file's keys whose value is wrapped with its location
/// (`Spanned`): serde's path has a `value` segment after them that the file
/// does not have.
const LOCATED_KEYS: &[&str] = &[
    "handler",
    "options",
    "parameters",
    "input_schema",
    "command",
    "skills",
    "auth",
    "mcp",
];

/// serde's path as the file's keys: the `value` segment a location wrapper
/// adds is left out (only after a wrapped key, so a parameter or variable
/// the file names `value` keeps its name), and the root is no key.
fn key_path(path: &str) -> String {
    if path == "." || path == "?" {
        return String::new();
    }
    let mut keys: Vec<String> = Vec::new();
    // Whether the last segment was a wrapped key, so this one may be the
    // wrapper's own.
    let mut after_located = false;
    for segment in path.split('.') {
        match segment.strip_prefix("value") {
            // `command.value[1]` is the file's `command[1]`.
            Some(index) if after_located && (index.is_empty() || index.starts_with('[')) => {
                if let Some(last) = keys.last_mut() {
                    last.push_str(index);
                }
                after_located = false;
            }
            _ => {
                let key = segment.split('[').next().unwrap_or(segment);
                after_located = LOCATED_KEYS.contains(&key);
                keys.push(segment.to_owned());
            }
        }
    }
    keys.join(".")
        .trim_end_matches(".value")
        .trim_end_matches(".?")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<String> {
        match parse(text, Path::new("a.yaml")) {
            Ok(parsed) => parsed.problems.iter().map(ToString::to_string).collect(),
            Err(error) => error.issues.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn every_fault_of_shape_is_found_in_one_pass() {
        let found = problems(
            "name: a\ninsructions: hi\nlimits:\n  max_steps: many\n  timeot: 3\npermissions: { write: maybe, read_only: allow }\n",
        );
        assert_eq!(found.len(), 4, "{found:#?}");
        assert!(
            found[0].starts_with("a.yaml:2:1: `insructions`: unknown key"),
            "{found:#?}"
        );
        assert!(
            found[1].starts_with("a.yaml:4:14: `limits.max_steps`: expected"),
            "{found:#?}"
        );
        assert!(
            found[2].starts_with("a.yaml:5:3: `limits.timeot`: unknown key"),
            "{found:#?}"
        );
        assert!(found[3].contains("`maybe` is not one of"), "{found:#?}");
    }

    #[test]
    fn a_path_names_the_files_keys_only() {
        assert_eq!(
            key_path("tools.command[0].parameters.value.text.type"),
            "tools.command[0].parameters.text.type"
        );
        assert_eq!(
            key_path("tools.command[0].command.value[1]"),
            "tools.command[0].command[1]"
        );
        // A parameter the file itself names `value` keeps its name.
        assert_eq!(
            key_path("tools.command[0].parameters.value.value.type"),
            "tools.command[0].parameters.value.type"
        );
        assert_eq!(
            key_path("hooks[0].handler.value.kind"),
            "hooks[0].handler.kind"
        );
        assert_eq!(key_path("."), "");
    }

    #[test]
    fn blanking_keeps_every_line_and_column() {
        let text = "name: a\nbogus:\n  deep: [1, 2]\n  deeper:\n    - x\nlimits: { nope: 1, max_steps: 3 }\n";
        let parsed = parse(text, Path::new("a.yaml")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.problems.len(), 2, "{:#?}", parsed.problems);
        assert_eq!(parsed.text.len(), text.len());
        assert_eq!(parsed.text.lines().count(), text.lines().count());
        assert_eq!(parsed.file.limits.max_steps, Some(3));
    }

    #[test]
    fn a_missing_name_does_not_hide_the_rest() {
        let found = problems("limits: { max_steps: x }\n");
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(
            found
                .iter()
                .any(|p| p.contains("the key `name` is required")),
            "{found:#?}"
        );
    }

    /// An apostrophe in plain text is a character, not a quote (finding:
    /// `people's` made a later fault inside `{ ... }` report a false
    /// "unclosed bracket", and the next section under the wrong parent).
    #[test]
    fn an_apostrophe_in_plain_text_leaves_later_faults_where_they_are() {
        let found = problems(
            "name: a\ninstructions: Check people's expenses.\nlimits: { max_steps: many }\npermissions: { wrte: ask }\n",
        );
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(
            found[0].starts_with("a.yaml:3:22: `limits.max_steps`"),
            "{found:#?}"
        );
        assert!(
            found[1].starts_with("a.yaml:4:16: `permissions.wrte`"),
            "{found:#?}"
        );
        assert!(!found.iter().any(|p| p.contains("unclosed")), "{found:#?}");
    }

    #[test]
    fn text_that_is_not_yaml_stops_at_that() {
        let found = problems("name: [unclosed\n");
        assert_eq!(found.len(), 1, "{found:#?}");
    }
}
