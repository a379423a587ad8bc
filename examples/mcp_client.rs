//! The tools of an MCP server as Iris tools: `@modelcontextprotocol/server-everything`
//! started over stdio, its catalog listed under model-facing names, and a
//! few calls run through the executor (which asks before running a tool of
//! an untrusted server; this example approves by policy).
//!
//! ```sh
//! cargo run --example mcp_client --features mcp
//! ```
//!
//! It needs Node.js: the server is started with `npx`, or taken from
//! `tests/mcp-peers` when `tests/mcp-peers/install.sh` has run.
#![allow(clippy::print_stdout, reason = "an example shows what happens")]

use std::error::Error;
use std::path::Path;
use std::time::Duration;

use iris::mcp::client::{McpClient, McpServerConfig};
use iris::{Rule, RulePolicy, RunId, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};
use serde_json::json;

/// The server: installed beside the tests, or fetched by `npx`.
fn server_everything() -> Result<McpServerConfig, Box<dyn Error>> {
    let installed = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp-peers/node_modules/.bin/mcp-server-everything");
    if installed.exists() {
        return Ok(McpServerConfig::stdio(
            "everything",
            installed.to_string_lossy(),
            ["stdio"],
        ));
    }
    let npx_runs = std::process::Command::new("npx")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !npx_runs {
        return Err(
            "this example starts an MCP server with `npx`, which is not installed: \
                    install Node.js (it brings npx), or run tests/mcp-peers/install.sh"
                .into(),
        );
    }
    Ok(McpServerConfig::stdio(
        "everything",
        "npx",
        [
            "-y",
            "@modelcontextprotocol/server-everything@2026.8.31",
            "stdio",
        ],
    ))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let config = server_everything()?.with_startup_timeout(Duration::from_secs(120));
    let client = McpClient::connect(config).await?;
    println!("MCP server `{}` offers:", client.name());
    for definition in client.definitions() {
        let about: String = definition.description().chars().take(60).collect();
        println!("  {:<44} {about}", definition.name());
    }
    for renamed in &client.report().renamed {
        println!(
            "  (`{}` is called `{}` here)",
            renamed.wire_name, renamed.name
        );
    }

    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry)?;
    // Remote tools are `write` + `network` unless the server is trusted, so
    // the default policy would ask a person first.
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()?;
    let cx = ToolContext::builder(std::env::temp_dir(), RunId::new("mcp-demo")).build();
    let calls = [
        ("everything__echo", json!({"message": "hello from Iris"})),
        ("everything__get-sum", json!({"a": 20, "b": 22})),
        ("everything__get-sum", json!({"a": "twenty", "b": 22})),
    ];
    for (index, (tool, input)) in calls.into_iter().enumerate() {
        println!("\n> {tool} {input}");
        let outcome = executor
            .execute_one(ToolUseBlock::new(format!("call-{index}"), tool, input), &cx)
            .await;
        let result = outcome.result().ok_or("the call waits for approval")?;
        match result.error_kind() {
            Some(kind) => println!("[{kind}] {}", result.text_content()),
            None => println!("{}", result.text_content()),
        }
    }
    println!("\n{:?}", client.stats());
    Ok(())
}
