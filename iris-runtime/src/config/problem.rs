//! A problem in a file a person wrote, and where it is: the one shape every
//! configuration problem takes (agent files, skills, the Decision
//! configuration, YAML documents), printed the same way wherever it is
//! shown.

use std::fmt;
use std::path::PathBuf;

/// How much a problem matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Severity {
    /// What it is about is refused (a file that does not load, a skill
    /// kept out).
    #[default]
    Error,
    /// It was forgiven and is reported.
    Warning,
}

/// One problem in a file, with its place: `path:line:column: `key`:
/// message`, as much of it as is known.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Problem {
    /// The file (or folder); empty when the text came from no file.
    pub path: PathBuf,
    /// The 1-based line, when the problem has a place in the file.
    pub line: Option<u64>,
    /// The 1-based column, when known.
    pub column: Option<u64>,
    /// The key path at fault, such as `hooks[1].handler.factory`; empty for
    /// the file as a whole.
    pub key: String,
    /// What is wrong and what to do.
    pub message: String,
    /// Whether it refused what it is about.
    pub severity: Severity,
}

impl Problem {
    /// An error in the file at `path`, at key `key` (empty: the file as a
    /// whole), with no place in the file yet.
    pub fn new(
        path: impl Into<PathBuf>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            path: path.into(),
            line: None,
            column: None,
            key: key.into(),
            message: message.into(),
            severity: Severity::Error,
        }
    }

    /// This problem at 1-based `line` and `column` (0 for either: not known).
    #[must_use]
    pub fn at(mut self, line: u64, column: u64) -> Self {
        self.line = (line > 0).then_some(line);
        self.column = (line > 0 && column > 0).then_some(column);
        self
    }

    /// This problem as a warning: reported, and forgiven.
    #[must_use]
    pub fn warning(mut self) -> Self {
        self.severity = Severity::Warning;
        self
    }

    /// Whether it refused what it is about.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut placed = false;
        if !self.path.as_os_str().is_empty() {
            write!(f, "{}", self.path.display())?;
            placed = true;
        }
        if let Some(line) = self.line {
            if placed {
                f.write_str(":")?;
            }
            write!(f, "{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
            placed = true;
        }
        if placed {
            f.write_str(": ")?;
        }
        if self.severity == Severity::Warning {
            f.write_str("warning: ")?;
        }
        if !self.key.is_empty() && self.key != "." {
            write!(f, "`{}`: ", self.key)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for Problem {}

#[cfg(test)]
mod tests {
    use super::Problem;

    #[test]
    fn a_problem_says_as_much_of_its_place_as_is_known() {
        let whole = Problem::new("agent.yaml", "", "cannot be read");
        assert_eq!(whole.to_string(), "agent.yaml: cannot be read");
        let placed = Problem::new("agent.yaml", "hooks[1]", "unknown hook").at(3, 5);
        assert_eq!(
            placed.to_string(),
            "agent.yaml:3:5: `hooks[1]`: unknown hook"
        );
        let text = Problem::new("", "name", "too long").at(2, 0);
        assert_eq!(text.to_string(), "2: `name`: too long");
        let warned = Problem::new("skills/a/SKILL.md", "name", "differs").warning();
        assert_eq!(
            warned.to_string(),
            "skills/a/SKILL.md: warning: `name`: differs"
        );
        assert!(!warned.is_error());
    }
}
