//! Agent files that name MCP servers: started and listed before the agent
//! is built, their tools named in permissions like any other, and every
//! problem reported at its key.

use iris::agent::Agent;
use iris::{ToolOutcome, ToolUseBlock};
use serde_json::json;

fn agent_file(dir: &std::path::Path, mcp: &str) -> std::path::PathBuf {
    let file = dir.join("agent.yaml");
    std::fs::write(
        &file,
        format!(
            "name: with-mcp\ntools:\n  mcp:\n{mcp}\npermissions:\n  tools: {{ calc__square: allow }}\n"
        ),
    )
    .unwrap();
    file
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_file_brings_an_mcp_servers_tools() {
    let dir = tempfile::tempdir().unwrap();
    let server = env!("CARGO_BIN_EXE_iris-mcp-test-server");
    let file = agent_file(
        dir.path(),
        &format!(
            "    - name: calc\n      transport: {{ type: stdio, command: \"{server}\", args: [stdio] }}\n      exposure: eager\n      include: [square, delete_note]\n      timeout: 10s\n"
        ),
    );
    let sync = Agent::from_path(&file).expect_err("servers need the async load");
    assert!(sync.to_string().contains("Agent::connect"), "{sync}");

    let agent = Agent::connect(&file).await.expect("assembles");
    let names: Vec<String> = agent
        .registry()
        .tools()
        .map(|t| t.definition_dyn().name().to_string())
        .collect();
    assert_eq!(names, ["calc__square", "calc__delete_note"]);
    let cx = agent
        .context_builder(dir.path(), iris::RunId::new("r"))
        .unwrap()
        .build();
    // Allowed by name in the file's permissions, though untrusted.
    let outcome = agent
        .executor()
        .execute_one(
            ToolUseBlock::new("a", "calc__square", json!({"value": 5})),
            &cx,
        )
        .await;
    assert_eq!(outcome.result().unwrap().text_content(), "25");
    let waits = agent
        .executor()
        .execute_one(
            ToolUseBlock::new("b", "calc__delete_note", json!({"title": "x"})),
            &cx,
        )
        .await;
    assert!(matches!(waits, ToolOutcome::Waiting(_)), "{waits:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_server_entries_are_reported_at_their_keys() {
    let dir = tempfile::tempdir().unwrap();
    let file = agent_file(
        dir.path(),
        "    - name: a\n      transport: { type: stdio, command: x }\n      trust: true\n",
    );
    let error = Agent::connect(&file).await.expect_err("an unknown key");
    let text = error.to_string();
    assert!(
        text.contains("tools.mcp[0]") && text.contains("trust"),
        "{text}"
    );

    let file = agent_file(
        dir.path(),
        "    - name: gone\n      transport: { type: stdio, command: /nonexistent/mcp-server }\n",
    );
    let error = Agent::connect(&file).await.expect_err("no such program");
    let text = error.to_string();
    assert!(text.contains("tools.mcp[0]"), "{text}");
    assert!(
        text.contains("`/nonexistent/mcp-server` could not be started"),
        "{text}"
    );
}
