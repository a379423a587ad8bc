//! One call of the same `square` tool three ways, side by side in one run:
//! (a) the floor: parse the arguments, call, serialize the result;
//! (b) Iris: `ToolExecutor::execute_one`, no hooks or middleware;
//! (d) rmcp: `ToolRouter::call` of a `#[tool]` in a `#[tool_router]`.
#![allow(missing_docs, clippy::unwrap_used, clippy::print_stdout)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use iris::{RunId, ToolContext, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{CallToolRequestParams, NumberOrString};
use rmcp::service::{RequestContext, RoleServer, serve_directly};
use rmcp::{ServerHandler, tool, tool_router};
use serde_json::{Value, json};

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

async fn iris_call(executor: &ToolExecutor, input: &Value, cx: &ToolContext) -> iris::ToolOutcome {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let outcome = executor
        .execute_one(ToolUseBlock::new(format!("call_{id}"), "square", input.clone()), cx)
        .await;
    if id % 1024 == 1023 {
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
    let executor = ToolExecutor::builder(registry).build();
    let cx = ToolContext::builder(".", RunId::new("bench")).build();

    let calc = Calc::new();
    // A request context needs a live peer: serve over an in-memory pipe
    // without the initialize handshake.
    let (peer, _running, _client_end) = rt.block_on(async {
        let (server_end, client_end) = tokio::io::duplex(64 * 1024);
        let running = serve_directly::<RoleServer, _, _, _, _>(calc.clone(), server_end, None);
        (running.peer().clone(), running, client_end)
    });
    let rmcp_call = |arguments: &rmcp::model::JsonObject| {
        let params = CallToolRequestParams::new("square").with_arguments(arguments.clone());
        let context = RequestContext::new(NumberOrString::Number(1), peer.clone());
        calc.tool_router.call(ToolCallContext::new(&calc, params, context))
    };

    let mut group = c.benchmark_group("square");
    group.bench_function("a_floor", |b| {
        b.to_async(&rt).iter(|| async {
            let args: SquareArgs = serde_json::from_value(input.clone()).unwrap();
            let out = square(args.value).await;
            ToolResult::json(serde_json::to_value(out).unwrap())
        });
    });
    group.bench_function("b_iris_execute_one", |b| {
        b.to_async(&rt).iter(|| iris_call(&executor, &input, &cx));
    });
    group.bench_function("d_rmcp_tool_router_call", |b| {
        b.to_async(&rt).iter(|| async { rmcp_call(&arguments).await.unwrap() });
    });
    group.finish();

    // Ratios from one stretch of the same run (min of 5 rounds).
    const N: u32 = 200_000;
    let round = |f: &dyn Fn() -> Duration| (0..5).map(|_| f()).min().unwrap();
    let per = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(N);
    let floor = round(&|| {
        rt.block_on(async {
            let start = Instant::now();
            for _ in 0..N {
                let args: SquareArgs = serde_json::from_value(input.clone()).unwrap();
                let out = square(args.value).await;
                std::hint::black_box(ToolResult::json(serde_json::to_value(out).unwrap()));
            }
            start.elapsed()
        })
    });
    let iris = round(&|| {
        rt.block_on(async {
            let start = Instant::now();
            for _ in 0..N {
                std::hint::black_box(iris_call(&executor, &input, &cx).await);
            }
            start.elapsed()
        })
    });
    let rmcp = round(&|| {
        rt.block_on(async {
            let start = Instant::now();
            for _ in 0..N {
                std::hint::black_box(rmcp_call(&arguments).await.unwrap());
            }
            start.elapsed()
        })
    });
    println!(
        "\nper call: (a) floor {:.3} us, (b) iris {:.3} us, (d) rmcp {:.3} us",
        per(floor),
        per(iris),
        per(rmcp)
    );
    println!(
        "ratios: (b)/(a) = {:.2}, (d)/(b) = {:.2} (Iris is that many times faster than rmcp)",
        per(iris) / per(floor),
        per(rmcp) / per(iris)
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
