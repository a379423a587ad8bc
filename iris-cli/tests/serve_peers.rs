//! `iris serve` as a gateway in front of an agent file, checked by real MCP
//! clients: the official Python SDK's (a command tool, a deferred tool found
//! through `tool_search`, and a call the file's policy asks about, refused
//! without elicitation and run once the person approves through it) and the
//! MCP inspector's command line. The peers are pinned in `tests/mcp-peers`
//! and installed on first use (see `tests/support/installed.rs`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

const AGENT: &str = r#"name: gateway
tools:
  builtin: [file.write]
  command:
    - name: count_words
      description: Count the words of a text.
      command: [python3, -c, "import json, sys; print(len(json.load(sys.stdin)['text'].split()))"]
      output: text
      capabilities: [read_only]
      parameters:
        text: { type: string, description: The text }
    - name: shout
      description: Shout a word loudly, in capitals.
      command: [python3, -c, "import json, sys; print(json.load(sys.stdin)['word'].upper())"]
      output: text
      capabilities: [read_only]
      parameters:
        word: { type: string, description: The word }
  deferred: [shout]
permissions:
  read_only: allow
  write: ask
"#;

#[path = "../../tests/support/installed.rs"]
mod installed;

/// The MCP peers' folder, installed on first use.
fn peers() -> PathBuf {
    installed::MCP_PEERS.folder()
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("agent.yaml"), AGENT).unwrap();
    dir
}

#[test]
fn the_python_client_uses_the_gateway_with_approvals_through_elicitation() {
    let dir = workspace();
    let output = Command::new(peers().join(".venv/bin/python"))
        .arg(peers().join("check_cli_serve.py"))
        .args([env!("CARGO_BIN_EXE_iris"), "serve"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the Python client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"count_words") && tools.contains(&"tool_search"),
        "{tools:?}"
    );
    assert!(
        !tools.contains(&"shout"),
        "deferred behind tool_search: {tools:?}"
    );
    assert_eq!(
        report["count"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .trim(),
        "3"
    );
    assert_eq!(report["count"]["isError"], false);
    assert!(
        report["search"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("shout"),
        "{}",
        report["search"]
    );
    assert_eq!(
        report["shout"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .trim(),
        "HEY"
    );

    let refused = &report["write_without_elicitation"];
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("approv"),
        "{refused}"
    );
    let approved = &report["write_with_elicitation"];
    assert_eq!(approved["isError"], false, "{approved}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("note.txt")).unwrap(),
        "kept\n"
    );
}

#[test]
fn the_inspector_lists_and_calls_through_the_gateway() {
    let dir = workspace();
    let inspect = |args: &[&str]| -> Value {
        let output = Command::new(peers().join("node_modules/.bin/mcp-inspector"))
            .args(["--cli", env!("CARGO_BIN_EXE_iris"), "serve"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "the inspector failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let listed = inspect(&["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["write_file", "count_words", "tool_search"]);
    let called = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "count_words",
        "--tool-arg",
        "text=one two",
    ]);
    assert_eq!(called["content"][0]["text"].as_str().unwrap().trim(), "2");
}
