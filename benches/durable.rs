//! What keeping runs costs: a step of four write calls (each claimed and
//! recorded, the state written twice) with no store, the in-memory store
//! and the SQLite store; and runs finished per second with 1, 10 and 100
//! runs at once on each.
//!
//! Run with `cargo bench -p iris-benches --bench durable`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    clippy::unused_async,
    missing_docs,
    reason = "a benchmark harness, not library code"
)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use iris::agent::store::{MemoryStore, RunStore};
use iris::agent::{Agent, AgentRunner, RunContext, RunOutcome};
use iris::model::{Model, ModelError, ModelRequest, ModelResponse};
use iris::serde_json::json;
use iris::sqlite::SqliteStore;
use iris::tool::BoxFuture;
use iris::{Rule, RulePolicy, RunId, ToolExecutor, ToolRegistry, ToolUseBlock};

const CALLS: usize = 4;
/// Steps per run.
const STEPS: u32 = 10;

/// Record a note (async: the body runs on the run's own task).
#[iris::tool(write)]
async fn note(
    /// The note.
    text: String,
) -> String {
    format!("noted: {text}")
}

/// Answers every step at once with four calls.
struct FourCalls;

impl Model for FourCalls {
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let step = request.messages.len();
        Box::pin(async move {
            Ok(ModelResponse {
                tool_calls: (0..CALLS)
                    .map(|i| {
                        ToolUseBlock::new(format!("s{step}-c{i}"), "note", json!({"text": "tea"}))
                    })
                    .collect(),
                ..ModelResponse::default()
            })
        })
    }
}

fn runner(store: Option<Arc<dyn RunStore>>) -> Arc<AgentRunner> {
    let mut registry = ToolRegistry::new();
    registry.register(Note).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()
        .unwrap();
    let agent = Agent::builder(executor)
        .name("notes")
        .max_steps(STEPS)
        .build()
        .unwrap();
    let runner = AgentRunner::new(agent, FourCalls);
    Arc::new(match store {
        Some(store) => runner.with_store(store),
        None => runner,
    })
}

static RUN: AtomicU64 = AtomicU64::new(0);

async fn one_run(runner: &AgentRunner) {
    let run = RUN.fetch_add(1, Ordering::Relaxed);
    let cx = RunContext::new(".", RunId::new(format!("r{run}")));
    let outcome = runner.run("notes", &cx).await.unwrap();
    assert!(matches!(outcome, RunOutcome::MaxSteps(_)), "{outcome:?}");
}

/// Runs finished per second with `concurrent` runs at once, over `total`.
fn runs_per_second(
    rt: &tokio::runtime::Runtime,
    runner: &Arc<AgentRunner>,
    concurrent: usize,
    total: usize,
) -> f64 {
    let started = Instant::now();
    rt.block_on(async {
        let mut left = total;
        while left > 0 {
            let wave = left.min(concurrent);
            let tasks: Vec<_> = (0..wave)
                .map(|_| {
                    let runner = Arc::clone(runner);
                    tokio::spawn(async move { one_run(&runner).await })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
            left -= wave;
        }
    });
    total as f64 / started.elapsed().as_secs_f64()
}

fn stores(dir: &Path) -> Vec<(&'static str, Option<Arc<dyn RunStore>>)> {
    vec![
        ("no store", None),
        ("memory", Some(Arc::new(MemoryStore::new()))),
        (
            "sqlite",
            Some(SqliteStore::open(dir.join("runs.db")).unwrap().into()),
        ),
    ]
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let runners: Vec<(&str, Arc<AgentRunner>)> = stores(dir.path())
        .into_iter()
        .map(|(name, store)| (name, runner(store)))
        .collect();

    let mut group = c.benchmark_group("durable_run_10_steps");
    group.sample_size(20);
    for (name, runner) in &runners {
        group.bench_function(*name, |b| b.iter(|| rt.block_on(one_run(runner))));
    }
    group.finish();

    // Per step, best of 5 rounds of 10 runs each, all in this run.
    let per_step = |runner: &AgentRunner| {
        (0..5)
            .map(|_| {
                let started = Instant::now();
                for _ in 0..10 {
                    rt.block_on(one_run(runner));
                }
                started.elapsed() / (10 * STEPS)
            })
            .min()
            .unwrap_or(Duration::ZERO)
    };
    let steps: Vec<(&str, Duration)> = runners
        .iter()
        .map(|(name, runner)| (*name, per_step(runner)))
        .collect();
    let base = steps[0].1;
    println!("\n== durable summary ({CALLS} write calls per step, each claimed and recorded) ==");
    for (name, step) in &steps {
        println!(
            "per step, {name}: {:.1} us ({:+.3} ms over no store)",
            step.as_secs_f64() * 1e6,
            (step.as_secs_f64() - base.as_secs_f64()) * 1e3
        );
    }
    for concurrent in [1, 10, 100] {
        let line: Vec<String> = runners
            .iter()
            .map(|(name, runner)| {
                let total = (concurrent * 4).max(40);
                format!(
                    "{name} {:.0}",
                    runs_per_second(&rt, runner, concurrent, total)
                )
            })
            .collect();
        println!(
            "runs/s ({STEPS} steps each) with {concurrent} at once: {}",
            line.join(", ")
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
