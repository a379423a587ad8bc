//! The everyday file scenario: read a config file, change its log level to
//! `INFO` with `edit_file`, read it again; then an edit based on a read
//! that went stale (someone changed the file meanwhile) is refused.
//!
//! Run with `cargo run --example file_edit`.
#![allow(
    clippy::print_stdout,
    reason = "an example shows what it does on stdout"
)]

use std::error::Error;
use std::sync::Arc;

use iris::fs::{FileService, register_file_tools};
use iris::serde_json::{Value, json};
use iris::{
    Rule, RulePolicy, RunId, ToolContext, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock,
};

const CONFIG: &str = "\
service: billing
log_level: DEBUG
workers: 4
";

struct Agent {
    executor: ToolExecutor,
    cx: ToolContext,
    calls: usize,
}

impl Agent {
    async fn call(&mut self, tool: &str, input: Value) -> Result<ToolResult, Box<dyn Error>> {
        self.calls += 1;
        let block = ToolUseBlock::new(format!("call_{}", self.calls), tool, input.clone());
        let outcome = self.executor.execute_one(block, &self.cx).await;
        let result = outcome
            .result()
            .cloned()
            .ok_or("the call waits for approval")?;
        println!("> {tool} {input}");
        match result.error_kind() {
            Some(kind) => println!("[{kind}] {}\n", result.text_content()),
            None => println!("{}\n", result.text_content()),
        }
        Ok(result)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let workspace = tempfile::tempdir()?;
    std::fs::write(workspace.path().join("app.yaml"), CONFIG)?;

    let mut registry = ToolRegistry::new();
    register_file_tools(&mut registry)?;
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()?;
    // What each run read is kept in the executor's run ledger.
    let files =
        Arc::new(FileService::open(workspace.path())?.with_ledger(Arc::clone(executor.ledger())));
    let cx = ToolContext::builder(workspace.path(), RunId::new("file-demo"))
        .shared_state(Arc::clone(&files))
        .build();
    // A run begins, and below it ends: `finish_run` frees everything the
    // ledger keeps for it (call ids, waiting calls, what it read).
    executor.start_run(&cx).await;
    let mut agent = Agent {
        executor,
        cx,
        calls: 0,
    };

    agent.call("read_file", json!({"path": "app.yaml"})).await?;
    agent
        .call(
            "edit_file",
            json!({"path": "app.yaml", "old_string": "log_level: DEBUG", "new_string": "log_level: INFO"}),
        )
        .await?;
    agent.call("read_file", json!({"path": "app.yaml"})).await?;

    // Someone else changes the file after the model's last read...
    std::fs::write(
        workspace.path().join("app.yaml"),
        CONFIG
            .replace("DEBUG", "INFO")
            .replace("workers: 4", "workers: 8"),
    )?;
    // ...so an edit based on that read is refused until the model reads again.
    let stale = agent
        .call(
            "edit_file",
            json!({"path": "app.yaml", "old_string": "workers: 4", "new_string": "workers: 6"}),
        )
        .await?;
    if stale.error_kind() != Some(iris::ToolErrorKind::StaleRead) {
        return Err("the stale edit should have been refused".into());
    }
    println!(
        "on disk:\n{}",
        std::fs::read_to_string(workspace.path().join("app.yaml"))?
    );
    agent.executor.finish_run(&agent.cx).await;
    Ok(())
}
