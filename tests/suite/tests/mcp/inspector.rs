//! The Iris server driven by the MCP inspector's command line, as people
//! check a server by hand.

use serde_json::Value;

use crate::peers::npm_bin;

fn inspect(args: &[&str]) -> Value {
    let server = env!("CARGO_BIN_EXE_iris-mcp-test-server");
    let output = std::process::Command::new(npm_bin("mcp-inspector"))
        .args(["--cli", server, "stdio", "--page-size", "100"])
        .args(args)
        .output()
        .expect("the inspector runs");
    assert!(
        output.status.success(),
        "the inspector failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the inspector prints JSON")
}

#[test]
fn the_inspector_lists_and_calls() {
    let listed = inspect(&["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "square",
            "chart",
            "fail",
            "delete_note",
            "weather",
            "forecast",
            "long_report",
            "read_file",
            "write_file",
            "edit_file"
        ]
    );
    let called = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "square",
        "--tool-arg",
        "value=6",
    ]);
    assert_eq!(called["content"][0]["text"], "36");
    assert_eq!(called["isError"], false);
}
