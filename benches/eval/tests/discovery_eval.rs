//! The tool-search evaluation command runs on the sample shipped in
//! `tests/data/metatool`. `cargo test` builds the package's examples next
//! to its test binaries; this test runs it.
#![allow(clippy::unwrap_used, reason = "a test fails loudly")]

use std::path::PathBuf;
use std::process::Command;

/// Its figures go to the benchmark notes, so only the report's shape is
/// checked here.
#[test]
fn discovery_eval_reports_both_rankers() {
    let deps = std::env::current_exe().unwrap();
    let examples: PathBuf = deps.parent().unwrap().parent().unwrap().join("examples");
    let output = Command::new(examples.join("discovery_eval"))
        .args(["--limit", "60"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let out = String::from_utf8(output.stdout).unwrap();
    for line in [
        "| tuning | plain BM25 |",
        "| tuning | iris local |",
        "| validation | plain BM25 |",
        "| validation | iris local |",
        "none-rate",
        "two-tool both in top 5",
        "available after one search",
        "no-fit requests loading nothing",
    ] {
        assert!(out.contains(line), "missing `{line}` in\n{out}");
    }
}
