//! A run of an agent assembled from `examples/agents/agent.yaml`, driven by
//! a scripted model (no network): it reads `config.yaml`, then edits the log
//! level to `INFO`. The edit waits for approval; the run's state is saved as
//! JSON, read back, approved, and the run resumed by a new runner. The file
//! and the run's history are printed at the end.
//!
//! Run with `cargo run --example agent --features openai,assembly,testing`. With `--live` the
//! same task goes to a real model through the OpenAI Chat Completions
//! adapter: `OPENAI_API_KEY` must be set; `OPENAI_BASE_URL` points it at
//! another OpenAI-compatible server and `OPENAI_MODEL` picks the model
//! (`gpt-4.1-mini` when unset). Every waiting call is approved.
#![allow(
    clippy::print_stdout,
    reason = "an example shows what it does on stdout"
)]

use std::error::Error;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use iris::agent::Agent;
use iris::agent::{AgentRunner, RunContext, RunOutcome, RunState};
use iris::model::{Message, Model, OPENAI_BASE_URL, OpenAiChat};
use iris::serde_json::json;
use iris::testing::{ScriptedModel, Turn};
use iris::{ApprovalDecision, RunId};

const CONFIG: &str = "service: billing\nlog_level: DEBUG\nworkers: 4\n";

/// Plays the model's part from a script: what a real model would answer to
/// "set the log level to INFO".
fn script() -> ScriptedModel {
    ScriptedModel::new([
        Turn::call_with_id("read-1", "read_file", json!({"path": "config.yaml"})),
        Turn::call_with_id(
            "edit-1",
            "edit_file",
            json!({"path": "config.yaml", "old_string": "log_level: DEBUG", "new_string": "log_level: INFO"}),
        ),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let workspace = tempfile::tempdir()?;
    std::fs::write(workspace.path().join("config.yaml"), CONFIG)?;
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agents/agent.yaml");
    let agent = Arc::new(Agent::from_path(&file)?);
    let cx = RunContext::new(workspace.path(), RunId::new("run-1"));

    let live = std::env::args().any(|arg| arg == "--live");
    let (first, second): (Box<dyn Model>, Box<dyn Model>) = if live {
        let key = std::env::var("OPENAI_API_KEY").map_err(|_| "set OPENAI_API_KEY for --live")?;
        let base = std::env::var("OPENAI_BASE_URL").unwrap_or_else(|_| OPENAI_BASE_URL.to_owned());
        let name = std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "gpt-4.1-mini".to_owned());
        let model = Arc::new(OpenAiChat::new(name, key, &base, Duration::from_secs(120))?);
        (Box::new(Arc::clone(&model)), Box::new(model))
    } else {
        (Box::new(script()), Box::new(script_after_approval()))
    };
    let runner = AgentRunner::new(Arc::clone(&agent), first);
    let outcome = runner
        .run("Set the log level of config.yaml to INFO.", &cx)
        .await?;
    let RunOutcome::Waiting(state) = outcome else {
        return Err(format!("expected the edit to wait for approval, got {outcome:?}").into());
    };
    for request in state.approvals() {
        println!(
            "waiting for approval: {} {} ({})",
            request.tool,
            request.arguments,
            request.reason.as_deref().unwrap_or("")
        );
    }
    let saved = iris::serde_json::to_string_pretty(&state)?;
    println!("saved the run's state ({} bytes of JSON)", saved.len());

    // Later, perhaps elsewhere: the state comes back and a person approves.
    let state: RunState = iris::serde_json::from_str(&saved)?;
    let decisions: Vec<(String, ApprovalDecision)> = state
        .approvals()
        .map(|request| (request.call_id.clone(), ApprovalDecision::approve(request)))
        .collect();
    let runner = AgentRunner::new(Arc::clone(&agent), second);
    let outcome = runner.resume(state, decisions, &cx).await?;

    println!("\nthe run:");
    for message in &outcome.state().messages {
        match message {
            Message::User { text } => println!("  user: {text}"),
            Message::Assistant { text, tool_calls } => {
                for call in tool_calls {
                    println!("  model calls {} {}", call.name, call.input);
                }
                if let Some(text) = text {
                    println!("  model: {text}");
                }
            }
            Message::Tool { tool, result, .. } => {
                let first = result.text_content();
                let first = first.lines().next().unwrap_or_default();
                println!("  {tool} -> {first}");
            }
        }
    }
    if let RunOutcome::Finished { text, .. } = &outcome {
        println!("\nfinished: {text}");
    }
    println!(
        "\nconfig.yaml now:\n{}",
        std::fs::read_to_string(workspace.path().join("config.yaml"))?
    );
    Ok(())
}

/// What the model answers once the edit ran.
fn script_after_approval() -> ScriptedModel {
    ScriptedModel::new([Turn::text("The log level is INFO now.")])
}
