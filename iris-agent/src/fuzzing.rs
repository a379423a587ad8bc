//! Harnesses for fuzzing agent files (see `iris_core::fuzzing`). Not a
//! public API.
#![allow(
    clippy::panic,
    reason = "a harness reports a broken property by panicking, as the fuzzer expects"
)]

use std::path::Path;

use crate::assembly::Assembly;

/// Where fuzzed files claim to live: a folder that does not exist, so a
/// file naming others (`instructions_file`) never reads the disk.
const ORIGIN: &str = "/nonexistent-iris-fuzz/agent.yaml";

/// Loads `data` as an agent file. Properties: the loader answers (an agent
/// or every problem) without panicking, within the loader's memory bounds
/// (alias, merge and depth bombs included; the fuzzer's memory limit
/// checks them); every problem in the file is placed inside it.
///
/// # Panics
/// When a problem is placed outside the file: a finding.
pub fn agent_files(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let origin = Path::new(ORIGIN);
    let Err(error) = Assembly::builder().build().parse(text, origin) else {
        return;
    };
    let lines = yaml_lines(text);
    for issue in &error.issues {
        let Some(line) = issue.line.filter(|_| issue.path == origin) else {
            continue;
        };
        let line = usize::try_from(line).unwrap_or(usize::MAX);
        let Some(content) = lines.get(line - 1) else {
            panic!(
                "a problem is placed at line {line}, past the file's {} lines: {issue}",
                lines.len()
            );
        };
        let column = usize::try_from(issue.column.unwrap_or(1)).unwrap_or(usize::MAX);
        assert!(
            column <= content.chars().count() + 1,
            "a problem is placed at column {column} of a line of {} characters: {issue}",
            content.chars().count()
        );
    }
}

/// The lines of `text` as YAML counts them: a line break is LF, CRLF or a
/// lone CR.
fn yaml_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    lines.push(&text[start..]);
    lines
}
