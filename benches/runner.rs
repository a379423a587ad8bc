//! The run loop's cost per step, against calling `execute_batch` directly
//! with the same four calls, and the memory a 200-step run's history holds.
//!
//! Run with `cargo bench -p iris-benches --bench runner`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
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

/// Answers every step at once with four calls of `price`.
struct FourCalls;

impl Model for FourCalls {
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let step = request.messages.len();
        Box::pin(async move {
            Ok(ModelResponse {
                tool_calls: calls(step),
                ..ModelResponse::default()
            })
        })
    }
}

fn calls(step: usize) -> Vec<ToolUseBlock> {
    (0..CALLS)
        .map(|i| ToolUseBlock::new(format!("s{step}-c{i}"), "price", json!({"item": "tea"})))
        .collect()
}

fn agent_of(max_steps: u32) -> Arc<Agent> {
    let yaml = format!(
        "name: prices\ntools: {{ functions: [price] }}\nlimits: {{ max_steps: {max_steps} }}\n"
    );
    Arc::new(
        Assembly::builder()
            .tool(Price)
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
    let runner = AgentRunner::new(Arc::clone(&agent), FourCalls);
    let mut run = 0_u64;
    let mut group = c.benchmark_group("runner_step");
    group.bench_function("agent_runner_50_steps", |b| {
        b.iter(|| {
            run += 1;
            let cx = RunContext::new(".", RunId::new(format!("r{run}")));
            let outcome = rt.block_on(runner.run("prices", &cx)).unwrap();
            assert!(matches!(outcome, RunOutcome::MaxSteps(_)));
        });
    });
    group.bench_function("execute_batch_50_steps", |b| {
        b.iter(|| {
            run += 1;
            let cx = agent
                .context_builder(".", RunId::new(format!("r{run}")))
                .unwrap()
                .build();
            rt.block_on(async {
                for step in 0..STEPS as usize {
                    let outcomes = agent.executor().execute_batch(calls(step), &cx).await;
                    assert_eq!(outcomes.len(), CALLS);
                }
                agent.executor().finish_run(&cx).await;
            });
        });
    });
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
    let through_runner = time(&mut || {
        run += 1;
        let cx = RunContext::new(".", RunId::new(format!("r{run}")));
        rt.block_on(runner.run("prices", &cx)).unwrap();
    });
    let direct = time(&mut || {
        run += 1;
        let cx = agent
            .context_builder(".", RunId::new(format!("r{run}")))
            .unwrap()
            .build();
        rt.block_on(async {
            for step in 0..STEPS as usize {
                agent.executor().execute_batch(calls(step), &cx).await;
            }
            agent.executor().finish_run(&cx).await;
        });
    });

    // The history of a 200-step run, held in its state.
    let long = AgentRunner::new(agent_of(200), FourCalls);
    let before = heap::live();
    let cx = RunContext::new(".", RunId::new("long"));
    let outcome = rt.block_on(long.run("prices", &cx)).unwrap();
    let held = heap::live().saturating_sub(before);
    let messages = outcome.state().messages.len();
    drop(outcome);

    println!("\n== runner summary ({CALLS}-call steps, scripted model answering at once) ==");
    println!(
        "per step: runner {:.1} us, execute_batch alone {:.1} us ({:.2}x; goal under 1.2x)",
        through_runner * 1e6,
        direct * 1e6,
        through_runner / direct
    );
    println!(
        "200-step run: {messages} messages held in {:.1} KiB ({:.0} bytes per message)",
        held as f64 / 1024.0,
        held as f64 / messages as f64
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
