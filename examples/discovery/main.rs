//! A 500-tool catalog behind `tool_search`: the first request carries only
//! the eager tools and `tool_search`; a two-intent search discloses two
//! tools; the next request carries their schemas; the token saving against
//! sending every schema is printed.
//!
//! Run with `cargo run --example discovery`.
#![allow(
    clippy::print_stdout,
    clippy::cast_precision_loss,
    reason = "an example shows what it does on stdout"
)]

#[allow(
    dead_code,
    clippy::panic,
    reason = "shared with the benchmarks; the catalog is fixed and valid"
)]
mod catalog;

use std::error::Error;
use std::sync::Arc;

use iris::discovery::{Discovery, ToolSearch, schema_tokens};
use iris::serde_json::json;
use iris::{Rule, RulePolicy, RunId, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};

const CATALOG_SIZE: usize = 500;

/// Tell the current time in UTC.
#[iris::tool(read_only)]
fn current_time() -> &'static str {
    "2026-11-30T12:00:00Z"
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut registry = ToolRegistry::new();
    registry.register(ToolSearch)?.register(CurrentTime)?;
    for tool in catalog::tools(CATALOG_SIZE) {
        registry.register(tool)?;
    }
    let registry = Arc::new(registry);
    let discovery = Arc::new(Discovery::builder(Arc::clone(&registry)).build()?);
    // Writes run without asking here; see the `approval` example for pauses.
    let executor = ToolExecutor::builder(Arc::clone(&registry))
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()?;
    let run = RunId::new("discovery-demo");

    let every_schema: usize = registry
        .tools()
        .map(|t| schema_tokens(t.definition_dyn()))
        .sum();
    let first = discovery.request(&registry.view(), &run);
    println!(
        "catalog: {CATALOG_SIZE} deferred tools (plus tool_search and current_time); request 1 offers {:?} ({} schema tokens)",
        first
            .offered
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        first.schema_tokens
    );

    let cx = ToolContext::builder(".", run.clone())
        .offered(first.offered.iter().cloned())
        .shared_state(Arc::clone(&discovery))
        .build();
    let intents = json!({"intents": ["cancel a flight booking", "export expense reports to CSV"]});
    println!("\n> tool_search {intents}");
    let outcome = executor
        .execute_one(ToolUseBlock::new("call_1", "tool_search", intents), &cx)
        .await;
    let result = outcome.result().ok_or("tool_search does not wait")?;
    println!("{}", result.text_content());

    let second = discovery.request(&registry.view(), &run);
    println!(
        "\nrequest 2 offers {} tools; disclosed:",
        second.offered.len()
    );
    for spec in second
        .specs
        .iter()
        .filter(|s| second.disclosed.contains(s.name()))
    {
        println!("  {} {}", spec.name(), spec.parameters());
    }
    let cx = ToolContext::builder(".", run)
        .offered(second.offered.iter().cloned())
        .shared_state(Arc::clone(&discovery))
        .build();
    let call = ToolUseBlock::new(
        "call_2",
        "cancel_flight_booking",
        json!({"flight_booking_id": "FB-1042", "reason": "trip moved"}),
    );
    let outcome = executor.execute_one(call, &cx).await;
    println!(
        "\n> cancel_flight_booking -> {}",
        outcome
            .result()
            .map(iris::ToolResult::text_content)
            .unwrap_or_default()
    );

    println!(
        "\ntool definitions per request (OpenAI Chat Completions, estimated tokens): every schema {every_schema}, \
         deferred {} before the search and {} after it ({:.1}% saved)",
        first.schema_tokens,
        second.schema_tokens,
        100.0 * (1.0 - second.schema_tokens as f64 / every_schema as f64)
    );
    Ok(())
}
