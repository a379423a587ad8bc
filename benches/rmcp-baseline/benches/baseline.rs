//! One call of the same `square` tool three ways, side by side in one run:
//! (a) the floor: parse the arguments, call, serialize the result;
//! (b) Iris: `ToolExecutor::execute_one`, no hooks or middleware;
//! (d) rmcp: `ToolRouter::call` of a `#[tool]` in a `#[tool_router]`.
//!
//! `count.sh` beside this package counts the instructions and allocations
//! of the same three calls with callgrind.
#![allow(missing_docs, clippy::unwrap_used, clippy::print_stdout)]

#[path = "../../support/per_call.rs"]
mod per_call;

use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use iris::{RunId, ToolContext, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{CallToolRequestParams, NumberOrString};
use rmcp::service::{RequestContext, RoleServer, serve_directly};
use rmcp::{ServerHandler, tool, tool_router};
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

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SquareArgs {
    /// The integer to square.
    value: i64,
}

#[derive(Clone)]
struct Calc {
    tool_router: ToolRouter<Calc>,
}

#[tool_router]
impl Calc {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Return the square of an integer.")]
    async fn square(&self, Parameters(SquareArgs { value }): Parameters<SquareArgs>) -> Json<i64> {
        Json(value * value)
    }
}

impl ServerHandler for Calc {}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);
static COMPLETED: AtomicU64 = AtomicU64::new(0);

/// Call ids are unique, as a provider's are: the executor runs each id once.
fn next_id() -> String {
    format!("call_{}", NEXT_ID.fetch_add(1, Ordering::Relaxed))
}

/// Runs are bounded, as an agent's are: every 1,024 calls the run finishes
/// and the executor forgets its call ids.
async fn iris_call(
    executor: &ToolExecutor,
    block: ToolUseBlock,
    cx: &ToolContext,
) -> iris::ToolOutcome {
    let outcome = executor.execute_one(block, cx).await;
    if COMPLETED.fetch_add(1, Ordering::Relaxed) % 1024 == 1023 {
        executor.finish_run(cx).await;
    }
    outcome
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let input = json!({"value": 4});
    let arguments = input.as_object().unwrap().clone();

    let mut registry = ToolRegistry::new();
    registry.register(Square).unwrap();
    let executor = ToolExecutor::builder(registry).build().unwrap();
    let cx = ToolContext::builder(".", RunId::new("bench")).build();

    let calc = Calc::new();
    // A request context needs a live peer: serve over an in-memory pipe
    // without the initialize handshake.
    let (peer, _running, _client_end) = rt.block_on(async {
        let (server_end, client_end) = tokio::io::duplex(64 * 1024);
        let running = serve_directly::<RoleServer, _, _, _, _>(calc.clone(), server_end, None);
        (running.peer().clone(), running, client_end)
    });
    // Each call's input is made before the clock starts, as a provider's
    // response is parsed before anything runs: the figures are the call
    // paths alone.
    let rmcp_input = || {
        let params = CallToolRequestParams::new("square").with_arguments(arguments.clone());
        (
            params,
            RequestContext::new(NumberOrString::Number(1), peer.clone()),
        )
    };
    let iris_input = || ToolUseBlock::new(next_id(), "square", input.clone());

    let mut group = c.benchmark_group("square");
    group.bench_function("a_floor", |b| {
        b.to_async(&rt).iter_batched(
            || input.clone(),
            |v| async move { floor(v).await },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("b_iris_execute_one", |b| {
        b.to_async(&rt).iter_batched(
            iris_input,
            |block| iris_call(&executor, block, &cx),
            BatchSize::SmallInput,
        );
    });
    group.bench_function("d_rmcp_tool_router_call", |b| {
        b.to_async(&rt).iter_batched(
            rmcp_input,
            |(params, context)| async {
                calc.tool_router
                    .call(ToolCallContext::new(&calc, params, context))
                    .await
                    .unwrap()
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();

    // Ratios from one stretch of the same run.
    let (executor, cx, calc) = (&executor, &cx, &calc);
    let floor_us = micros_per_call(&rt, || input.clone(), floor);
    let iris_us = micros_per_call(&rt, iris_input, |block| iris_call(executor, block, cx));
    let rmcp_us = micros_per_call(&rt, rmcp_input, |(params, context)| async move {
        calc.tool_router
            .call(ToolCallContext::new(calc, params, context))
            .await
            .unwrap()
    });
    println!(
        "\nper call: (a) floor {floor_us:.3} us, (b) iris {iris_us:.3} us, (d) rmcp {rmcp_us:.3} us"
    );
    println!(
        "ratios: (b)/(a) = {:.2}, (d)/(b) = {:.2} (Iris is that many times faster than rmcp)",
        iris_us / floor_us,
        rmcp_us / iris_us
    );
}

/// The floor: parse the arguments, call, serialize the result.
async fn floor(input: Value) -> ToolResult {
    let args: SquareArgs = serde_json::from_value(input).unwrap();
    let out = square(args.value).await;
    ToolResult::json(serde_json::to_value(out).unwrap())
}

criterion_group!(benches, bench);
criterion_main!(benches);
