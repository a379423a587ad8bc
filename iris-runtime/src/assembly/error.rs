//! What was wrong with an agent file: every problem found, each with the
//! file, line and column, the key path and what was expected.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_saphyr::Location;

/// One problem in an agent file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssemblyIssue {
    /// The file.
    pub path: PathBuf,
    /// 1-based line; 0 when the problem is the file as a whole.
    pub line: u64,
    /// 1-based column; 0 when unknown.
    pub column: u64,
    /// The key path, such as `hooks[1].handler.factory`; empty for the
    /// file as a whole.
    pub key: String,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for AssemblyIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if !self.key.is_empty() {
            write!(f, ": `{}`", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// An agent file that could not be assembled, with every problem found.
///
/// Problems that do not depend on each other (an unknown function, bad
/// factory options, a missing variable) are all reported at once; a file
/// that is not valid YAML, or has a key of the wrong shape, stops at that.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct AssemblyError {
    /// The problems, in file order.
    pub issues: Vec<AssemblyIssue>,
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
    found: Vec<AssemblyIssue>,
}

impl Issues {
    pub(crate) fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            found: Vec::new(),
        }
    }

    /// A problem at `at` (a value's location) under `key`.
    pub(crate) fn at(&mut self, at: Location, key: impl Into<String>, message: impl Into<String>) {
        self.found.push(AssemblyIssue {
            path: self.path.clone(),
            line: at.line(),
            column: at.column(),
            key: key.into(),
            message: message.into(),
        });
    }

    /// A problem with no place in the file (the file as a whole, or a key
    /// that was left out).
    pub(crate) fn whole(&mut self, key: impl Into<String>, message: impl Into<String>) {
        self.found.push(AssemblyIssue {
            path: self.path.clone(),
            line: 0,
            column: 0,
            key: key.into(),
            message: message.into(),
        });
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
            .sort_by_key(|issue| (issue.line == 0, issue.line, issue.column));
        Err(AssemblyError { issues: self.found })
    }
}
