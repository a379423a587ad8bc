//! The run loop's cost per step, against calling `execute_batch` directly
//! with the same four calls, and the memory a 200-step run's history holds.
//!
//! Run with `cargo bench -p iris-benches --bench runner`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    clippy::unused_async,
    missing_docs,
    reason = "a benchmark harness, not library code"
)]

#[path = "support/heap.rs"]
#[allow(dead_code, reason = "each benchmark uses part of it")]
mod heap;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use iris::agent::Agent;
use iris::agent::{AgentRunner, RunContext, RunOutcome};
use iris::assembly::Assembly;
use iris::model::{Model, ModelError, ModelRequest, ModelResponse};
use iris::serde_json::json;
use iris::tool::BoxFuture;
use iris::{RunId, ToolUseBlock};

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

const CALLS: usize = 4;
/// Steps per measured run.
const STEPS: u32 = 50;

/// Look up a price.
#[iris::tool(read_only, concurrency_safe)]
fn price(
    /// The item.
    item: String,
) -> String {
    format!("{item}: 3")
}

/// Look up a price, without blocking: the body runs on the run's own task.
#[iris::tool(read_only, concurrency_safe)]
async fn price_async(
    /// The item.
    item: String,
) -> String {
    format!("{item}: 3")
}

/// Answers every step at once with four calls of one tool.
struct FourCalls(&'static str);

impl Model for FourCalls {
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let step = request.messages.len();
        let tool = self.0;
        Box::pin(async move {
            Ok(ModelResponse {
                tool_calls: calls(tool, step),
                ..ModelResponse::default()
            })
        })
    }
}

fn calls(tool: &str, step: usize) -> Vec<ToolUseBlock> {
    (0..CALLS)
        .map(|i| ToolUseBlock::new(format!("s{step}-c{i}"), tool, json!({"item": "tea"})))
        .collect()
}

fn agent_of(max_steps: u32) -> Arc<Agent> {
    let yaml = format!(
        "name: prices\ntools: {{ functions: [price, price_async] }}\nlimits: {{ max_steps: {max_steps} }}\n"
    );
    Arc::new(
        Assembly::builder()
            .tool(Price)
            .tool(PriceAsync)
            .build()
            .parse(&yaml, Path::new("agent.yaml"))
            .unwrap(),
    )
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let agent = agent_of(STEPS);
    let mut run = 0_u64;
    let mut group = c.benchmark_group("runner_step");
    for tool in ["price", "price_async"] {
        let runner = AgentRunner::new(Arc::clone(&agent), FourCalls(tool));
        group.bench_function(format!("agent_runner_50_steps/{tool}"), |b| {
            b.iter(|| {
                run += 1;
                let cx = RunContext::new(".", RunId::new(format!("r{run}")));
                let outcome = rt.block_on(runner.run("prices", &cx)).unwrap();
                assert!(matches!(outcome, RunOutcome::MaxSteps(_)));
            });
        });
        group.bench_function(format!("execute_batch_50_steps/{tool}"), |b| {
            b.iter(|| {
                run += 1;
                let outcomes = rt.block_on(direct_run(&agent, tool, run));
                assert_eq!(outcomes, STEPS as usize * CALLS);
            });
        });
    }
    group.finish();

    // Same-run ratio, best of 5 rounds of 20 runs each.
    let time = |f: &mut dyn FnMut()| {
        (0..5)
            .map(|_| {
                let started = Instant::now();
                for _ in 0..20 {
                    f();
                }
                started.elapsed().as_secs_f64() / 20.0 / f64::from(STEPS)
            })
            .fold(f64::MAX, f64::min)
    };
    let mut ratios = Vec::new();
    for tool in ["price", "price_async"] {
        let runner = AgentRunner::new(Arc::clone(&agent), FourCalls(tool));
        let through_runner = time(&mut || {
            run += 1;
            let cx = RunContext::new(".", RunId::new(format!("r{run}")));
            rt.block_on(runner.run("prices", &cx)).unwrap();
        });
        let direct = time(&mut || {
            run += 1;
            rt.block_on(direct_run(&agent, tool, run));
        });
        ratios.push((tool, through_runner, direct));
    }
    // What sealing the state a run ends with costs, spread over its steps.
    let unsealed = {
        let runner =
            AgentRunner::new(Arc::clone(&agent), FourCalls("price_async")).trust_unsealed_states();
        time(&mut || {
            run += 1;
            let cx = RunContext::new(".", RunId::new(format!("r{run}")));
            rt.block_on(runner.run("prices", &cx)).unwrap();
        })
    };

    // The history of a 200-step run, held in its state.
    let long = AgentRunner::new(agent_of(200), FourCalls("price"));
    let before = heap::live();
    let cx = RunContext::new(".", RunId::new("long"));
    let outcome = rt.block_on(long.run("prices", &cx)).unwrap();
    let held = heap::live().saturating_sub(before);
    let messages = outcome.state().messages.len();
    drop(outcome);

    println!("\n== runner summary ({CALLS}-call steps, scripted model answering at once) ==");
    for (tool, through_runner, direct) in ratios {
        let body = if tool == "price" {
            "sync bodies, on blocking threads"
        } else {
            "async bodies"
        };
        println!(
            "per step ({body}): runner {:.1} us, execute_batch alone {:.1} us ({:.2}x; goal under 1.2x)",
            through_runner * 1e6,
            direct * 1e6,
            through_runner / direct
        );
    }
    println!(
        "per step (async bodies), the state the run ends with left unsealed: runner {:.1} us",
        unsealed * 1e6
    );
    println!(
        "200-step run: {messages} messages held in {:.1} KiB ({:.0} bytes per message)",
        held as f64 / 1024.0,
        held as f64 / messages as f64
    );
}

/// One run of [`STEPS`] steps of calls to `tool` through `execute_batch`
/// alone; the number of outcomes.
async fn direct_run(agent: &Agent, tool: &str, run: u64) -> usize {
    let cx = agent
        .context_builder(".", RunId::new(format!("r{run}")))
        .unwrap()
        .build();
    let mut outcomes = 0;
    for step in 0..STEPS as usize {
        outcomes += agent
            .executor()
            .execute_batch(calls(tool, step), &cx)
            .await
            .len();
    }
    agent.executor().finish_run(&cx).await;
    outcomes
}

criterion_group!(benches, bench);
criterion_main!(benches);
