//! A timing middleware: it runs the rest of the stack and returns a copy of
//! the result with `stats.wrapped_seconds`.
//!
//! Run with `cargo run --example middleware`.
#![allow(
    clippy::print_stdout,
    reason = "an example shows what it does on stdout"
)]

use std::error::Error;
use std::time::{Duration, Instant};

use iris::middleware::MiddlewareError;
use iris::serde_json::json;
use iris::{
    Next, RunId, ToolCall, ToolContext, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock,
};

/// Fetch the weather for a city (pretends to take a while).
#[iris::tool(read_only, network)]
async fn weather(
    /// The city.
    city: String,
) -> String {
    tokio::time::sleep(Duration::from_millis(120)).await;
    format!("{city}: 21 °C, clear")
}

/// Measures the rest of the stack and the body.
#[iris::middleware]
async fn timing(call: ToolCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
    let started = Instant::now();
    let result = next.run(call).await?;
    Ok(result.with_stat("wrapped_seconds", started.elapsed().as_secs_f64()))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut registry = ToolRegistry::new();
    registry.register(Weather)?;
    let executor = ToolExecutor::builder(registry).middleware(Timing).build()?;
    let cx = ToolContext::builder(".", RunId::new("middleware-demo")).build();
    // A run begins, and below it ends: `finish_run` frees what the
    // executor keeps for it (call ids, calls waiting for approval).
    executor.start_run(&cx).await;
    let outcome = executor
        .execute_one(
            ToolUseBlock::new("call_1", "weather", json!({"city": "Lisbon"})),
            &cx,
        )
        .await;
    let result = outcome.result().ok_or("the call is waiting for approval")?;
    println!("model reads: {}", result.text_content());
    println!("stats: {}", iris::serde_json::to_string(result.stats())?);
    executor.finish_run(&cx).await;
    Ok(())
}
