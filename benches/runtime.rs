//! What the executor costs per call, against the floor of doing the same
//! work by hand, measured side by side in one run.
//!
//! Run with `cargo bench -p iris-benches --bench runtime`. The ratios printed at the end are
//! the figures to compare; absolute times drift on shared machines.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::unused_async,
    missing_docs,
    reason = "a benchmark harness, not library code"
)]

#[path = "support/per_call.rs"]
mod per_call;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use iris::hooks::{AfterAnswer, BeforeAnswer, HookInput, HookRegistration};
use iris::middleware::MiddlewareError;
use iris::{
    Next, RunId, ToolCall, ToolContext, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock,
};
use serde::Deserialize;
use serde_json::{Value, json};

use per_call::micros_per_call;

/// Return the square of an integer.
#[iris::tool(read_only, concurrency_safe)]
async fn square(
    /// The integer to square.
    value: i64,
) -> i64 {
    value * value
}

/// Return the square of an integer, synchronously (runs on a blocking thread).
#[iris::tool(read_only, concurrency_safe)]
fn square_sync(
    /// The integer to square.
    value: i64,
) -> i64 {
    value * value
}

/// Wait 20 ms, as a network call would.
#[iris::tool(read_only, concurrency_safe)]
async fn wait_20ms() -> &'static str {
    tokio::time::sleep(Duration::from_millis(20)).await;
    "done"
}

#[derive(Deserialize)]
struct SquareArgs {
    value: i64,
}

#[iris::middleware]
async fn pass_through(call: ToolCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
    next.run(call).await
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(Square)
        .unwrap()
        .register(SquareSync)
        .unwrap()
        .register(Wait20ms)
        .unwrap();
    registry
}

fn with_hooks() -> ToolExecutor {
    ToolExecutor::builder(registry())
        .hook(HookRegistration::before("before", |_: &HookInput| {
            BeforeAnswer::Allow
        }))
        .hook(HookRegistration::after("after", |_: &HookInput| {
            AfterAnswer::Nothing
        }))
        .middleware(PassThrough)
        .build()
        .unwrap()
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);
static COMPLETED: AtomicU64 = AtomicU64::new(0);

/// Call ids are unique, as a provider's are: the executor runs each id once.
fn block(name: &str, input: &Value) -> ToolUseBlock {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    ToolUseBlock::new(format!("call_{id}"), name, input.clone())
}

/// Runs are bounded, as an agent's are: every 1,024 calls the run finishes
/// and the executor forgets its call ids.
async fn call(executor: &ToolExecutor, block: ToolUseBlock, cx: &ToolContext) -> iris::ToolOutcome {
    let outcome = executor.execute_one(block, cx).await;
    if COMPLETED.fetch_add(1, Ordering::Relaxed) % 1024 == 1023 {
        executor.finish_run(cx).await;
    }
    outcome
}

/// The floor: parse the arguments, call, serialize the result.
async fn floor(input: Value) -> ToolResult {
    let args: SquareArgs = serde_json::from_value(input).unwrap();
    let out = square(args.value).await;
    ToolResult::json(serde_json::to_value(out).unwrap())
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let input = json!({"value": 4});
    let cx = ToolContext::builder(".", RunId::new("bench")).build();
    let plain = ToolExecutor::builder(registry()).build().unwrap();
    let hooked = with_hooks();

    let mut group = c.benchmark_group("one_call");
    // Inputs are made before the clock starts, as a provider's response is
    // parsed before anything runs: the figures are the call paths alone.
    group.bench_function("a_floor_from_value_call_serialize", |b| {
        b.to_async(&rt)
            .iter_batched(|| input.clone(), floor, BatchSize::SmallInput);
    });
    group.bench_function("b_execute_one", |b| {
        b.to_async(&rt).iter_batched(
            || block("square", &input),
            |b| call(&plain, b, &cx),
            BatchSize::SmallInput,
        );
    });
    group.bench_function("b_execute_one_sync_body", |b| {
        b.to_async(&rt).iter_batched(
            || block("square_sync", &input),
            |b| call(&plain, b, &cx),
            BatchSize::SmallInput,
        );
    });
    group.bench_function("c_execute_one_hooks_and_middleware", |b| {
        b.to_async(&rt).iter_batched(
            || block("square", &input),
            |b| call(&hooked, b, &cx),
            BatchSize::SmallInput,
        );
    });
    group.finish();

    let mut group = c.benchmark_group("windows");
    group.sample_size(10);
    let empty = json!({});
    group.bench_function("e_batch_of_8_waits", |b| {
        b.to_async(&rt).iter(|| async {
            let calls = (0..8).map(|_| block("wait_20ms", &empty)).collect();
            plain.execute_batch(calls, &cx).await
        });
    });
    group.bench_function("e_single_wait", |b| {
        b.to_async(&rt)
            .iter(|| async { call(&plain, block("wait_20ms", &empty), &cx).await });
    });
    group.bench_function("e_8_waits_one_after_another", |b| {
        b.to_async(&rt).iter(|| async {
            for _ in 0..8 {
                call(&plain, block("wait_20ms", &empty), &cx).await;
            }
        });
    });
    group.finish();

    print_ratios(&rt, &plain, &hooked, &cx);
}

/// The ratios, from calls timed here in one stretch of the same run.
fn print_ratios(
    rt: &tokio::runtime::Runtime,
    plain: &ToolExecutor,
    hooked: &ToolExecutor,
    cx: &ToolContext,
) {
    let input = json!({"value": 4});
    let floor_us = micros_per_call(rt, || input.clone(), floor);
    let plain_async = micros_per_call(rt, || block("square", &input), |b| call(plain, b, cx));
    let sync_body = micros_per_call(rt, || block("square_sync", &input), |b| call(plain, b, cx));
    let hooks = micros_per_call(rt, || block("square", &input), |b| call(hooked, b, cx));
    println!(
        "\nper call: floor {floor_us:.3} us, execute_one {plain_async:.3} us, sync body {sync_body:.3} us, hooks+middleware {hooks:.3} us"
    );
    println!(
        "ratios: (b)/(a) = {:.2}  (b sync)/(a) = {:.2}  (c)/(a) = {:.2}",
        plain_async / floor_us,
        sync_body / floor_us,
        hooks / floor_us
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
