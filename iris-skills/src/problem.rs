//! What is wrong with a skill, and where.

use std::fmt;
use std::path::PathBuf;

/// How much a problem matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The skill is not loaded (strictly read, or past what lenient
    /// reading forgives).
    Error,
    /// The skill is loaded as read; the problem is reported.
    Warning,
}

/// One problem of a skill (or of finding skills), with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillProblem {
    /// The file (a `SKILL.md`) or folder.
    pub path: PathBuf,
    /// 1-based line, 0 when the problem has no place in the file.
    pub line: usize,
    /// 1-based column, 0 when the problem has no place in the file.
    pub column: usize,
    /// The front matter key at fault, empty when none.
    pub key: String,
    /// What is wrong and what to do.
    pub message: String,
    /// Whether the skill was kept out.
    pub severity: Severity,
}

impl SkillProblem {
    pub(crate) fn new(
        path: impl Into<PathBuf>,
        key: impl Into<String>,
        message: impl Into<String>,
        severity: Severity,
    ) -> Self {
        Self {
            path: path.into(),
            line: 0,
            column: 0,
            key: key.into(),
            message: message.into(),
            severity,
        }
    }

    pub(crate) fn at(mut self, line: usize, column: usize) -> Self {
        self.line = line;
        self.column = column;
        self
    }

    /// Whether it kept the skill out.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for SkillProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        f.write_str(": ")?;
        if self.severity == Severity::Warning {
            f.write_str("warning: ")?;
        }
        if !self.key.is_empty() {
            write!(f, "`{}`: ", self.key)?;
        }
        f.write_str(&self.message)
    }
}
