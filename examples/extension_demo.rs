//! The quickstart's scene assembled from YAML: `square` named in the agent
//! file, the `explain-result` hook made by the `create_feedback` factory from
//! the file's options, and a timing middleware named there too.
//!
//! Run with `cargo run --example extension_demo --features assembly`.
#![allow(
    clippy::print_stdout,
    reason = "an example shows what it does on stdout"
)]

use std::error::Error;
use std::path::Path;

use iris::agent::Agent;
use iris::hooks::{AfterAnswer, Hook, HookInput};
use iris::middleware::MiddlewareError;
use iris::serde_json::json;
use iris::{Next, RunId, ToolCall, ToolResult, ToolUseBlock};

/// Return the square of an integer.
#[iris::tool(read_only, concurrency_safe)]
fn square(
    /// The integer to square.
    value: i64,
) -> i64 {
    value * value
}

/// Adds a sentence after a tool's result, for the model to read.
#[iris::hook_factory]
fn create_feedback(
    /// The sentence to add.
    text: String,
) -> Hook {
    Hook::after(move |_input: &HookInput| AfterAnswer::feedback(&text))
}

/// Adds how long the rest of the stack took to the result's stats.
#[iris::middleware]
async fn timing(call: ToolCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
    let started = std::time::Instant::now();
    let result = next.run(call).await?;
    Ok(result.with_stat("wrapped_seconds", started.elapsed().as_secs_f64()))
}

/// Times every call.
#[iris::middleware_factory]
fn create_timing() -> Timing {
    Timing
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agents/extension_demo.yaml");
    let agent = Agent::from_path(&file)?;
    println!("assembled `{}` from {}", agent.name(), file.display());

    let cx = agent.context_builder(".", RunId::new("demo"))?.build();
    let executor = agent.executor();
    executor.start_run(&cx).await;
    let call = ToolUseBlock::new("square-1", "square", json!({"value": 4}));
    let outcome = executor.execute_one(call, &cx).await;
    let result = outcome.result().ok_or("the call is waiting for approval")?;
    println!("model reads:\n{}", result.text_content());
    let seconds = result
        .stats()
        .get("wrapped_seconds")
        .and_then(iris::serde_json::Value::as_f64)
        .ok_or("the timing middleware did not run")?;
    println!("stats.wrapped_seconds: {seconds:.6}");
    executor.finish_run(&cx).await;
    Ok(())
}
