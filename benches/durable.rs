//! What keeping runs costs: a step of four write calls (each claimed and
//! recorded, the state written twice) with no store, the in-memory store,
//! the SQLite store and on Restate (a real server on loopback, the run a
//! workflow on an endpoint in this process, each run one request through
//! the ingress); and runs finished per second with 1, 10 and 100 runs at
//! once on each.
//!
//! Run with `cargo bench -p iris-benches --bench durable` (the Restate
//! server is installed from npm on first use).
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
use iris::restate::AgentWorkflow;
use iris::restate::restate_sdk::endpoint::Endpoint;
use iris::serde_json::json;
use iris::sqlite::SqliteStore;
use iris::tool::BoxFuture;
use iris::{Rule, RulePolicy, RunId, ToolExecutor, ToolRegistry, ToolUseBlock};

#[path = "../tests/suite/tests/restate/server.rs"]
#[allow(dead_code, unreachable_pub, reason = "shared with the tests")]
mod server;

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
    let runner = plain_runner();
    Arc::new(match store {
        Some(store) => runner.with_store(store),
        None => runner,
    })
}

fn plain_runner() -> AgentRunner {
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
    AgentRunner::new(agent, FourCalls)
}

/// The `notes` workflow on a real Restate server: the server, and the
/// endpoint serving it from this process.
async fn on_restate() -> server::RestateServer {
    let server = server::RestateServer::start().await;
    let port = server::free_port();
    let workflow = AgentWorkflow::new(plain_runner(), ".");
    let endpoint = Endpoint::builder().bind(workflow).build();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    tokio::spawn(iris::restate::serve(
        endpoint,
        listener,
        std::future::pending(),
    ));
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.register(&format!("http://127.0.0.1:{port}")).await;
    server
}

/// One run through the ingress, answered when it ends.
async fn one_restate_run(server: &server::RestateServer) {
    let run = RUN.fetch_add(1, Ordering::Relaxed);
    let (status, report) = server
        .post(
            &format!("/notes/r{run}/run"),
            Some(&json!({"task": "notes"})),
        )
        .await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["ended"], "max_steps", "{report}");
}

static RUN: AtomicU64 = AtomicU64::new(0);

async fn one_run(runner: &AgentRunner) {
    let run = RUN.fetch_add(1, Ordering::Relaxed);
    let cx = RunContext::new(".", RunId::new(format!("r{run}")));
    let outcome = runner.run("notes", &cx).await.unwrap();
    assert!(matches!(outcome, RunOutcome::MaxSteps(_)), "{outcome:?}");
}

/// Runs finished per second with `concurrent` runs of `one` at once, over
/// `total`.
fn runs_per_second<F>(
    rt: &tokio::runtime::Runtime,
    one: impl Fn() -> F,
    concurrent: usize,
    total: usize,
) -> f64
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let started = Instant::now();
    rt.block_on(async {
        let mut left = total;
        while left > 0 {
            let wave = left.min(concurrent);
            let tasks: Vec<_> = (0..wave).map(|_| tokio::spawn(one())).collect();
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

/// The best of 5 rounds of 10 runs each, per step.
fn per_step(mut ten_runs: impl FnMut()) -> Duration {
    (0..5)
        .map(|_| {
            let started = Instant::now();
            ten_runs();
            started.elapsed() / (10 * STEPS)
        })
        .min()
        .unwrap_or(Duration::ZERO)
}

const CONCURRENCY: [usize; 3] = [1, 10, 100];

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

    // In process first, before the Restate server runs beside them.
    let mut group = c.benchmark_group("durable_run_10_steps");
    group.sample_size(20);
    for (name, runner) in &runners {
        group.bench_function(*name, |b| b.iter(|| rt.block_on(one_run(runner))));
    }
    let mut steps: Vec<(&str, Duration)> = runners
        .iter()
        .map(|(name, runner)| {
            let step = per_step(|| {
                for _ in 0..10 {
                    rt.block_on(one_run(runner));
                }
            });
            (*name, step)
        })
        .collect();
    let mut throughput: Vec<Vec<String>> = CONCURRENCY
        .iter()
        .map(|&concurrent| {
            let total = (concurrent * 4).max(40);
            runners
                .iter()
                .map(|(name, runner)| {
                    let one = || {
                        let runner = Arc::clone(runner);
                        async move { one_run(&runner).await }
                    };
                    format!("{name} {:.0}", runs_per_second(&rt, one, concurrent, total))
                })
                .collect()
        })
        .collect();

    let restate = Arc::new(rt.block_on(on_restate()));
    group.sample_size(10);
    group.bench_function("restate", |b| {
        b.iter(|| rt.block_on(one_restate_run(&restate)));
    });
    group.finish();
    steps.push((
        "restate",
        per_step(|| {
            for _ in 0..10 {
                rt.block_on(one_restate_run(&restate));
            }
        }),
    ));
    for (line, concurrent) in throughput.iter_mut().zip(CONCURRENCY) {
        let total = (concurrent * 4).max(40);
        let one = || {
            let server = Arc::clone(&restate);
            async move { one_restate_run(&server).await }
        };
        line.push(format!(
            "restate {:.0}",
            runs_per_second(&rt, one, concurrent, total)
        ));
    }
    drop(restate);

    let base = steps[0].1;
    println!(
        "\n== durable summary ({CALLS} write calls per step, each claimed and recorded; on Restate a step is nine journal entries: the answer, a claim and a result per write) =="
    );
    for (name, step) in &steps {
        println!(
            "per step, {name}: {:.1} us ({:+.3} ms over no store)",
            step.as_secs_f64() * 1e6,
            (step.as_secs_f64() - base.as_secs_f64()) * 1e3
        );
    }
    for (line, concurrent) in throughput.iter().zip(CONCURRENCY) {
        println!(
            "runs/s ({STEPS} steps each) with {concurrent} at once: {}",
            line.join(", ")
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
