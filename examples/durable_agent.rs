//! A run that outlives its process: the first process starts it, the model
//! asks to write, the run waits for a person and the process exits; a
//! second process records the person's approval in the same SQLite file and
//! finishes the run. The write happens exactly once.
//!
//! Run with `cargo run --example durable_agent --features sqlite,testing`
//! (it starts both processes itself), or drive the steps by hand:
//! `... -- start DB WORKSPACE`, then `... -- approve DB WORKSPACE RUN_ID`.
#![allow(
    clippy::print_stdout,
    reason = "an example shows what it does on stdout"
)]

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::Command;

use iris::ApprovalDecision;
use iris::model::{Message, ModelResponse};
use iris::serde_json::json;
use iris::{RunId, ToolExecutor, ToolRegistry, ToolUseBlock};
// Features `sqlite` and `testing` (required by the example).
use iris::agent::{Agent, AgentRunner, RunContext, RunOutcome};
use iris::sqlite::SqliteStore;
use iris::testing::FnModel;

/// Append one line to the team's log file.
#[iris::tool(write)]
fn append_log(
    /// The line to append.
    line: String,
    #[ctx] cx: &iris::ToolContext,
) -> Result<String, std::io::Error> {
    use std::io::Write as _;
    let path = cx.workspace_root().join("log.txt");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    writeln!(file, "{line}")?;
    Ok(format!("appended: {line}"))
}

/// A model that needs no network: it answers from the history alone, so
/// any process asks it and gets the same answer.
fn log_keeper() -> FnModel {
    FnModel::new(|request| {
        Ok(match request.messages.last() {
            Some(Message::Tool { result, .. }) => ModelResponse {
                text: Some(format!("Done: {}", result.text_content())),
                ..ModelResponse::default()
            },
            _ => ModelResponse {
                tool_calls: vec![ToolUseBlock::new(
                    "call_1",
                    "append_log",
                    json!({"line": "deploy approved"}),
                )],
                ..ModelResponse::default()
            },
        })
    })
}

fn runner(db: &Path) -> Result<AgentRunner, Box<dyn Error>> {
    let mut registry = ToolRegistry::new();
    registry.register(AppendLog)?;
    let agent = Agent::builder(ToolExecutor::builder(registry).build()?)
        .name("log-keeper")
        .build()?;
    Ok(AgentRunner::new(agent, log_keeper()).with_store(SqliteStore::open(db)?))
}

/// The first process: starts the run, which waits for approval.
async fn start(db: &Path, workspace: &Path) -> Result<(), Box<dyn Error>> {
    let run_id = RunId::new(format!("run-{}", std::process::id()));
    let cx = RunContext::new(workspace, run_id.clone());
    match runner(db)?
        .run("Log that the deploy was approved.", &cx)
        .await?
    {
        RunOutcome::Waiting(state) => {
            for item in &state.waiting {
                println!(
                    "[process {}] run {run_id} waits: `{}` with {}",
                    std::process::id(),
                    item.call().name,
                    item.call().input
                );
            }
            println!("RUN_ID={run_id}");
            Ok(())
        }
        other => Err(format!("expected the run to wait, got {other:?}").into()),
    }
}

/// The second process: a person approves what the store shows, and the run
/// goes on here.
async fn approve(db: &Path, workspace: &Path, run_id: &str) -> Result<(), Box<dyn Error>> {
    let runner = runner(db)?;
    let run_id = RunId::new(run_id);
    let store = runner.store().ok_or("the runner has a store")?;
    let stored = store.load(&run_id).await?.ok_or("the run is stored")?;
    for request in stored.state.approvals() {
        runner
            .decide(
                &run_id,
                &request.call_id,
                ApprovalDecision::approve(request),
            )
            .await?;
        println!(
            "[process {}] approved `{}`",
            std::process::id(),
            request.tool
        );
    }
    let cx = RunContext::new(workspace, run_id);
    match runner.resume_stored(&cx).await? {
        RunOutcome::Finished { text, .. } => {
            println!("[process {}] finished: {text}", std::process::id());
            Ok(())
        }
        other => Err(format!("expected the run to finish, got {other:?}").into()),
    }
}

/// Runs this program again with `args`, and returns what it printed.
fn step(args: &[&str]) -> Result<String, Box<dyn Error>> {
    let output = Command::new(std::env::current_exe()?).args(args).output()?;
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    print!("{printed}");
    if !output.status.success() {
        return Err(format!(
            "`{}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok(printed)
}

fn demo() -> Result<(), Box<dyn Error>> {
    let dir = std::env::temp_dir().join(format!("iris-durable-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("runs.db");
    let (db_arg, dir_arg) = (db.to_string_lossy(), dir.to_string_lossy());
    let printed = step(&["start", &db_arg, &dir_arg])?;
    let run_id = printed
        .lines()
        .find_map(|line| line.strip_prefix("RUN_ID="))
        .ok_or("the first process names its run")?;
    step(&["approve", &db_arg, &dir_arg, run_id])?;
    let log = std::fs::read_to_string(dir.join("log.txt"))?;
    println!("log.txt holds {} line(s): {log:?}", log.lines().count());
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = |i: usize| -> Result<PathBuf, Box<dyn Error>> {
        Ok(PathBuf::from(args.get(i).ok_or("missing argument")?))
    };
    match args.first().map(String::as_str) {
        None => demo(),
        Some("start") => start(&path(1)?, &path(2)?).await,
        Some("approve") => {
            let run_id = args.get(3).ok_or("missing the run id")?;
            approve(&path(1)?, &path(2)?, run_id).await
        }
        Some(other) => Err(format!("unknown step `{other}`; use `start` or `approve`").into()),
    }
}
