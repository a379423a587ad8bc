//! What was wrong with an agent file: every problem found, each with the
//! file, line and column, the key path and what was expected.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_saphyr::Location;

pub use iris_runtime::config::Problem;

/// Line and column of the value at `json_path` inside the YAML value that
/// starts at `start`: each object key of the path is looked for after the
/// last one found (`key:`, quoted or not); an array index stops the walk at
/// its array. With `at_key`, the last key's own position.
fn locate_option(
    source: &str,
    start: Location,
    json_path: &str,
    at_key: bool,
) -> Option<(u64, u64)> {
    let mut offset = offset_of(source, start.line(), start.column())?;
    let mut key_at = offset;
    let keys = json_path
        .trim_start_matches('$')
        .split('.')
        .filter(|k| !k.is_empty())
        .map(|k| k.split('[').next().unwrap_or(k));
    for key in keys {
        let rest = source.get(offset..)?;
        let found = [
            format!("{key}:"),
            format!("\"{key}\":"),
            format!("'{key}':"),
        ]
        .iter()
        .filter_map(|pattern| {
            rest.match_indices(pattern.as_str())
                .find(|(at, _)| {
                    rest[..*at]
                        .chars()
                        .next_back()
                        .is_none_or(|c| c.is_whitespace() || c == '{' || c == ',')
                })
                .map(|(at, _)| (at, at + pattern.len()))
        })
        .min()?;
        key_at = offset + found.0;
        offset += found.1;
        offset += source.get(offset..)?.len()
            - source.get(offset..)?.trim_start_matches([' ', '\t']).len();
    }
    Some(position_of(source, if at_key { key_at } else { offset }))
}

/// The byte offsets where lines start, as YAML counts lines: a line break
/// is LF, CRLF or a lone CR.
pub(crate) fn line_starts(source: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = source.as_bytes();
    std::iter::once(0).chain(bytes.iter().enumerate().filter_map(move |(i, b)| match b {
        b'\n' => Some(i + 1),
        b'\r' if bytes.get(i + 1) != Some(&b'\n') => Some(i + 1),
        _ => None,
    }))
}

/// The byte offset of 1-based `line` and `column` (in characters).
pub(crate) fn offset_of(source: &str, line: u64, column: u64) -> Option<usize> {
    let line_start = line_starts(source).nth(usize::try_from(line).ok()?.checked_sub(1)?)?;
    let line_text = source.get(line_start..)?;
    let in_line = line_text
        .char_indices()
        .take_while(|(_, c)| !matches!(c, '\n' | '\r'))
        .nth(usize::try_from(column).ok()?.saturating_sub(1))
        .map_or_else(
            || line_text.find(['\n', '\r']).unwrap_or(line_text.len()),
            |(at, _)| at,
        );
    Some(line_start + in_line)
}

/// 1-based line and column (in characters) of byte `offset`.
fn position_of(source: &str, offset: usize) -> (u64, u64) {
    let offset = offset.min(source.len());
    let (line, start) = line_starts(source)
        .take_while(|start| *start <= offset)
        .enumerate()
        .last()
        .unwrap_or((0, 0));
    let column = source
        .get(start..offset)
        .map_or(0, |text| text.chars().count())
        + 1;
    (
        u64::try_from(line + 1).unwrap_or(u64::MAX),
        u64::try_from(column).unwrap_or(u64::MAX),
    )
}

/// An agent file that could not be assembled, with every problem found.
///
/// Problems that do not depend on each other (an unknown key, a value of the
/// wrong type, an unknown function, bad factory options, a missing
/// variable) are all reported at once; one that only follows from another
/// (a required key whose entry was at fault) is held back, and a file that
/// is not valid YAML stops at that.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
pub struct AssemblyError {
    /// The problems, in file order.
    pub issues: Vec<Problem>,
}

impl fmt::Display for AssemblyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.issues.as_slice() {
            [one] => write!(f, "{one}"),
            issues => {
                write!(f, "{} problems in the agent file:", issues.len())?;
                for issue in issues {
                    write!(f, "\n  {issue}")?;
                }
                Ok(())
            }
        }
    }
}

/// Problems gathered while a file is checked.
#[derive(Debug)]
pub(crate) struct Issues {
    path: PathBuf,
    found: Vec<Problem>,
    /// The file's text, to find values that have no location of their own
    /// (factory options, kept as plain JSON).
    source: String,
}

impl Issues {
    pub(crate) fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            found: Vec::new(),
            source: String::new(),
        }
    }

    /// As [`Issues::new`], able to place problems inside option values.
    pub(crate) fn with_source(path: &Path, source: &str) -> Self {
        Self {
            source: source.to_owned(),
            ..Self::new(path)
        }
    }

    /// A problem with the option at `json_path` (`$.limits.max`) of the
    /// options value that starts at `options`: placed at that option's
    /// value when the text shows where it is, else at `options`.
    /// An option that should not be there is placed at its key instead.
    pub(crate) fn at_option(
        &mut self,
        options: Location,
        json_path: &str,
        key: impl Into<String>,
        message: impl Into<String>,
    ) {
        let message = message.into();
        let unknown = message.contains("unknown option");
        let (line, column) = locate_option(&self.source, options, json_path, unknown)
            .unwrap_or((options.line(), options.column()));
        self.found
            .push(Problem::new(self.path.clone(), key, message).at(line, column));
    }

    /// A problem at `at` (a value's location) under `key`.
    pub(crate) fn at(&mut self, at: Location, key: impl Into<String>, message: impl Into<String>) {
        self.found
            .push(Problem::new(self.path.clone(), key, message).at(at.line(), at.column()));
    }

    /// A problem at `line` and `column` when known, else with no place.
    pub(crate) fn at_place(
        &mut self,
        line: Option<u64>,
        column: Option<u64>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) {
        let problem = Problem::new(self.path.clone(), key, message);
        self.found.push(match line {
            Some(line) => problem.at(line, column.unwrap_or(0)),
            None => problem,
        });
    }

    /// A problem with no place in the file (the file as a whole, or a key
    /// that was left out).
    pub(crate) fn whole(&mut self, key: impl Into<String>, message: impl Into<String>) {
        self.found
            .push(Problem::new(self.path.clone(), key, message));
    }

    /// Takes in the problems found in another file (a child agent's):
    /// each names its own file.
    pub(crate) fn adopt(&mut self, found: Vec<Problem>) {
        self.found.extend(found);
    }

    /// Holds back the problems `follows` says depend on another one found
    /// already.
    pub(crate) fn hold_back(&mut self, follows: impl Fn(&Problem) -> bool) {
        self.found.retain(|issue| !follows(issue));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// `Ok` when nothing was found.
    pub(crate) fn finish(mut self) -> Result<(), AssemblyError> {
        if self.found.is_empty() {
            return Ok(());
        }
        self.found
            .sort_by_key(|issue| (issue.line.is_none(), issue.line, issue.column));
        Err(AssemblyError { issues: self.found })
    }
}

iris_runtime::__wings::debug_as_display!(AssemblyError);
