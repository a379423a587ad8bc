//! Reading an agent file through the shared bounded loader, with serde's
//! first error at its line, column and key path.

use std::path::Path;

use super::error::{AssemblyError, Issues};
use super::file::AgentFile;
use iris_runtime::config::yaml;

/// Largest agent file read (1 MiB): the shared YAML loader's bound.
pub const MAX_FILE_BYTES: usize = yaml::MAX_FILE_BYTES;

/// `text` as the agent file at `origin`.
pub(crate) fn parse(text: &str, origin: &Path) -> Result<AgentFile, AssemblyError> {
    let mut issues = Issues::new(origin);
    match yaml::from_str(text, "agent file") {
        Ok(file) => Ok(file),
        Err(err) => {
            let key = key_path(&err.path);
            match err.location {
                Some(at) => issues.at(at, key, err.message),
                None => issues.whole(key, err.message),
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

/// serde's path as the file's keys: a value's location wrapper adds a
/// `value` segment the file does not have, and the root is no key.
fn key_path(path: &str) -> String {
    if path == "." || path == "?" {
        return String::new();
    }
    path.replace("handler.value.", "handler.")
        .replace("options.value.", "options.")
        .trim_end_matches(".value")
        .trim_end_matches(".?")
        .to_owned()
}
