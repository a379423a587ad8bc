//! The run loop's cost per step, against calling `execute_batch` directly
//! with the same four calls, the memory a 200-step run's history holds, and
//! what a typed output costs a run against the same run ending in text.
//!
//! Run with `cargo bench -p iris-benches --bench runner`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    clippy::unused_async,
    clippy::too_many_lines,
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

/// Answers every step at once with the same text.
struct Answers(&'static str);

impl Model for Answers {
    fn complete<'a>(
        &'a self,
        _: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let text = self.0;
        Box::pin(async move {
            Ok(ModelResponse {
                text: Some(text.to_owned()),
                ..ModelResponse::default()
            })
        })
    }
}

/// A typed output of a few nested fields.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code, reason = "parsed, never read")]
struct Invoice {
    customer: String,
    lines: Vec<Line>,
    total_cents: u64,
    due: Option<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code, reason = "parsed, never read")]
struct Line {
    item: String,
    cents: u64,
}

const INVOICE: &str = r#"{"customer":"Ada Lovelace","lines":[{"item":"tea","cents":350},{"item":"scones","cents":450}],"total_cents":800,"due":null}"#;

fn calls(tool: &str, step: usize) -> Vec<ToolUseBlock> {
    (0..CALLS)
        .map(|i| ToolUseBlock::new(format!("s{step}-c{i}"), tool, json!({"item": "tea"})))
        .collect()
}

/// Runs per round when one turn's cost is compared.
const TURN_RUNS: u32 = 2_000;

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

    // A one-step run ending in text, against the same answer read as a
    // typed output (the schema made once, and made per run by `run_for`).
    let one_step = agent_of(1);
    let text_runner = AgentRunner::new(Arc::clone(&one_step), Answers(INVOICE));
    let text_run = time(&mut || {
        run += 1;
        let cx = RunContext::new(".", RunId::new(format!("r{run}")));
        rt.block_on(text_runner.run("invoice", &cx)).unwrap();
    });
    let typed_runner = AgentRunner::new(Arc::clone(&one_step), Answers(INVOICE))
        .with_output(iris::agent::Output::of::<Invoice>());
    let typed_run = time(&mut || {
        run += 1;
        let cx = RunContext::new(".", RunId::new(format!("r{run}")));
        let outcome = rt.block_on(typed_runner.run("invoice", &cx)).unwrap();
        outcome.output::<Invoice>().unwrap();
    });
    let run_for = time(&mut || {
        run += 1;
        let cx = RunContext::new(".", RunId::new(format!("r{run}")));
        let _: Invoice = rt.block_on(text_runner.run_for("invoice", &cx)).unwrap();
    });

    // The same one-step run with an empty `model.before` and `model.after`
    // hook: what watching the model's turn costs.
    let hooked_agent = {
        let mut registry = iris::ToolRegistry::new();
        registry.register(Price).unwrap();
        let executor = iris::ToolExecutor::builder(registry)
            .hook(iris::hooks::HookRegistration::model_before(
                "send",
                |_: &iris::hooks::HookInput| iris::hooks::ModelBeforeAnswer::Send,
            ))
            .hook(iris::hooks::HookRegistration::model_after(
                "accept",
                |_: &iris::hooks::HookInput| iris::hooks::ModelAfterAnswer::Accept,
            ))
            .build()
            .unwrap();
        Arc::new(
            Agent::builder(executor)
                .name("prices")
                .max_steps(1)
                .build()
                .unwrap(),
        )
    };
    let plain_agent = {
        let mut registry = iris::ToolRegistry::new();
        registry.register(Price).unwrap();
        let executor = iris::ToolExecutor::builder(registry).build().unwrap();
        Arc::new(
            Agent::builder(executor)
                .name("prices")
                .max_steps(1)
                .build()
                .unwrap(),
        )
    };
    // A one-step run is a few microseconds: the two are timed in
    // alternating rounds of many runs each, so that the difference is not
    // the machine's drift between them.
    let plain_runner = AgentRunner::new(plain_agent, Answers("tea: 3"));
    let hooked_runner = AgentRunner::new(hooked_agent, Answers("tea: 3"));
    let (mut plain_turn, mut hooked_turn) = (f64::MAX, f64::MAX);
    for _ in 0..7 {
        for (runner, best) in [
            (&plain_runner, &mut plain_turn),
            (&hooked_runner, &mut hooked_turn),
        ] {
            let started = Instant::now();
            for _ in 0..TURN_RUNS {
                run += 1;
                let cx = RunContext::new(".", RunId::new(format!("r{run}")));
                rt.block_on(runner.run("prices", &cx)).unwrap();
            }
            let per_run = started.elapsed().as_secs_f64() / f64::from(TURN_RUNS);
            // In `time`'s unit (per step of a STEPS-step run).
            *best = best.min(per_run / f64::from(STEPS));
        }
    }

    // The same one-step run under a budget (tokens and money at a price):
    // the reservation before the request and its settlement after, timed
    // run by run in alternation, for the added cost's p99.
    let budgeted_runner = AgentRunner::new(Arc::clone(&one_step), Answers("tea: 3"))
        .with_budget(iris::agent::Budget::new().tokens(u64::MAX / 4).usd(1e9))
        .with_prices(
            iris::agent::PriceTable::new().otherwise(iris::agent::Price::per_million(1.0, 4.0)),
        );
    let unbudgeted_runner = AgentRunner::new(Arc::clone(&one_step), Answers("tea: 3"));
    let (mut with_budget, mut without_budget) = (Vec::new(), Vec::new());
    for _ in 0..TURN_RUNS {
        for (runner, times) in [
            (&unbudgeted_runner, &mut without_budget),
            (&budgeted_runner, &mut with_budget),
        ] {
            run += 1;
            let cx = RunContext::new(".", RunId::new(format!("r{run}")));
            let started = Instant::now();
            rt.block_on(runner.run("prices", &cx)).unwrap();
            times.push(started.elapsed().as_secs_f64());
        }
    }
    let percentile = |times: &mut Vec<f64>, p: f64| {
        times.sort_by(f64::total_cmp);
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "an index into the samples"
        )]
        let at = ((times.len() - 1) as f64 * p).round() as usize;
        times[at]
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
    // `time` divides by STEPS: these runs take one step each.
    let per_run = |seconds: f64| seconds * f64::from(STEPS) * 1e6;
    println!(
        "one-step run: text {:.1} us; typed output {:.1} us ({:.2}x, +{:.1} us); run_for (schema made per run) {:.1} us ({:.2}x)",
        per_run(text_run),
        per_run(typed_run),
        typed_run / text_run,
        per_run(typed_run - text_run),
        per_run(run_for),
        run_for / text_run
    );
    println!(
        "one turn with an empty model.before + model.after pair: {:.1} us against {:.1} us without (+{:.2} us per turn; goal at most 2)",
        per_run(hooked_turn),
        per_run(plain_turn),
        per_run(hooked_turn - plain_turn)
    );
    println!(
        "one request under a budget (reserve + settle): p50 {:.1} us against {:.1} us, p99 {:.1} us against {:.1} us (+{:.2} us at p99; goal under 1,000)",
        percentile(&mut with_budget, 0.5) * 1e6,
        percentile(&mut without_budget, 0.5) * 1e6,
        percentile(&mut with_budget, 0.99) * 1e6,
        percentile(&mut without_budget, 0.99) * 1e6,
        (percentile(&mut with_budget, 0.99) - percentile(&mut without_budget, 0.99)) * 1e6
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
