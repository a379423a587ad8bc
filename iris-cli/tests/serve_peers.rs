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
    let inspect = |args: &[&str]| inspect_with(&dir, &[], args);
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

/// A chat-completions endpoint on loopback that gives every request the
/// same answer (a message with `content`, or with `tool_calls`).
fn chat_endpoint(message: Value) -> String {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let finish = if message.get("tool_calls").is_some() {
                "tool_calls"
            } else {
                "stop"
            };
            let answer = serde_json::json!({
                "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "scripted",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    format!("http://{address}/v1")
}

/// A parent (`lead.yaml`) of a typed child with a model of its own
/// (`judge.yaml`) and of a writer that asks its parent's (`keeper.yaml`),
/// each model a loopback endpoint with one answer.
fn child_agents() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let judge = chat_endpoint(serde_json::json!({
        "role": "assistant",
        "content": r#"{"ok": true, "reason": "the sums agree"}"#,
    }));
    let writer = chat_endpoint(serde_json::json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "write_file", "arguments": "{\"path\": \"out.txt\", \"content\": \"hi\"}"}}],
    }));
    std::fs::write(
        dir.path().join("lead.yaml"),
        format!(
            "name: lead\ninstructions: Delegate.\npermissions:\n  tools: {{judge: allow, keeper: allow}}\nmodel:\n  provider: openai_chat\n  model: scripted\n  base_url: {writer}\nagents:\n  - name: judge\n    description: Judges whether an invoice adds up.\n    file: judge.yaml\n  - name: keeper\n    description: Keeps the files tidy.\n    file: keeper.yaml\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("judge.yaml"),
        format!(
            "name: judge\ninstructions: Judge.\nmodel:\n  provider: openai_chat\n  model: scripted\n  base_url: {judge}\noutput:\n  name: verdict\n  schema: {{type: object, properties: {{ok: {{type: boolean}}, reason: {{type: string}}}}, required: [ok, reason], additionalProperties: false}}\n"
        ),
    )
    .unwrap();
    // The keeper has no model of its own: it asks its parent's.
    std::fs::write(
        dir.path().join("keeper.yaml"),
        "name: keeper\ninstructions: Keep.\ntools:\n  builtin: [file.write]\npermissions:\n  write: ask\n",
    )
    .unwrap();
    dir
}

/// The inspector's answer to `args`, about `iris serve --agent FILE` in
/// `dir`.
fn inspect_in(dir: &tempfile::TempDir, file: &str, args: &[&str]) -> Value {
    inspect_with(dir, &["--agent", file], args)
}

/// The inspector's answer to `args`, about `iris serve` with `serve`'s
/// arguments in `dir`.
fn inspect_with(dir: &tempfile::TempDir, serve: &[&str], args: &[&str]) -> Value {
    let output = Command::new(peers().join("node_modules/.bin/mcp-inspector"))
        .args(["--cli", env!("CARGO_BIN_EXE_iris"), "serve"])
        .args(serve)
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
}

/// A parent's child agents are served as tools that run them: a typed
/// child is listed with its output's schema and answers with structured
/// content; a child that comes to wait for a person says for what.
#[test]
fn the_inspector_calls_a_parents_child_agents_as_tools() {
    let dir = child_agents();
    let inspect = |args: &[&str]| inspect_in(&dir, "lead.yaml", args);
    let listed = inspect(&["--method", "tools/list"]);
    let tools = listed["tools"].as_array().unwrap();
    let judge = tools.iter().find(|t| t["name"] == "judge").unwrap();
    assert_eq!(
        judge["inputSchema"]["required"],
        serde_json::json!(["task"])
    );
    assert_eq!(
        judge["outputSchema"]["required"],
        serde_json::json!(["ok", "reason"]),
        "{judge}"
    );
    assert!(tools.iter().any(|t| t["name"] == "keeper"), "{listed}");

    let called = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "judge",
        "--tool-arg",
        "task=Does 3.50 + 4.50 make 8.00?",
    ]);
    assert_eq!(
        called["structuredContent"],
        serde_json::json!({"ok": true, "reason": "the sums agree"}),
        "{called}"
    );
    assert_ne!(called["isError"], true, "{called}");

    let waited = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "keeper",
        "--tool-arg",
        "task=Write hi to out.txt",
    ]);
    assert_eq!(waited["isError"], true, "{waited}");
    let text = waited["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("wait for a person's decision on `write_file` (approval)"),
        "{text}"
    );
    assert!(
        !dir.path().join("out.txt").exists(),
        "the write waited, never ran"
    );
}

/// An agent file served as one tool (`--as-tool`): itself, run with its
/// model, typed by its `output:`.
#[test]
fn an_agent_file_is_served_as_one_tool_that_runs_it() {
    let dir = child_agents();
    let listed = inspect_with(
        &dir,
        &["--agent", "judge.yaml", "--as-tool"],
        &["--method", "tools/list"],
    );
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["judge"], "{listed}");
    assert_eq!(
        listed["tools"][0]["outputSchema"]["required"],
        serde_json::json!(["ok", "reason"])
    );
    let called = inspect_with(
        &dir,
        &["--agent", "judge.yaml", "--as-tool"],
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "judge",
            "--tool-arg",
            "task=Judge it.",
        ],
    );
    assert_eq!(
        called["structuredContent"],
        serde_json::json!({"ok": true, "reason": "the sums agree"}),
        "{called}"
    );
}
