//! What is wrong with a skill, and where: the located problem every
//! configuration reader shares ([`Problem`]), made here with the
//! severity a strict or lenient reading gives it.

use std::path::Path;

pub use iris_runtime::config::{Problem, Severity};

/// A problem of `path` (a `SKILL.md` or a folder) at front matter key `key`
/// (empty: none), as `severity` says.
pub(crate) fn problem(
    path: impl AsRef<Path>,
    key: impl Into<String>,
    message: impl Into<String>,
    severity: Severity,
) -> Problem {
    let problem = Problem::new(path.as_ref(), key, message);
    match severity {
        Severity::Error => problem,
        Severity::Warning => problem.warning(),
    }
}
