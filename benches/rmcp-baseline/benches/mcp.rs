//! Calls over MCP, the same `square` tool each way, side by side in one run:
//!
//! - client: rmcp's own client calling rmcp's server over stdio, against the
//!   same call through Iris's executor and MCP client (goal: within 1.10x);
//! - serving: one rmcp client calling `square` served by rmcp's
//!   `#[tool_router]` and served by Iris, over stdio and over streamable
//!   HTTP (goal: within 1.10x);
//! - `tools/list` of a registry of 1,000 tools served by Iris (reported).
//!
//! Ratios come from 21 alternating rounds of 300 calls a side: the
//! fastest round of each side, and the median of the rounds' ratios.
#![allow(missing_docs, clippy::unwrap_used, clippy::print_stdout)]

use std::io::BufRead as _;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use iris::mcp::client::{McpClient, McpExposure, McpServerConfig};
use iris::{Rule, RulePolicy, RunId, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::json;

const RMCP_SQUARE: &str = env!("CARGO_BIN_EXE_rmcp_square");
const IRIS_SQUARE: &str = env!("CARGO_BIN_EXE_iris_square");
/// Calls per timed round.
const CALLS: u32 = 300;
/// Rounds per side.
const ROUNDS: usize = 21;

type Client = RunningService<RoleClient, ()>;

async fn stdio_client(program: &str, args: &[&str]) -> Client {
    let mut command = tokio::process::Command::new(program);
    command.args(args).stderr(Stdio::null());
    ().serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap()
}

/// Starts `program http`, reads the URL it prints, connects to it.
async fn http_client(program: &str) -> (Client, std::process::Child) {
    let mut child = std::process::Command::new(program)
        .arg("http")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let transport = StreamableHttpClientTransport::from_uri(url.trim().to_owned());
    (().serve(transport).await.unwrap(), child)
}

fn arguments() -> JsonObject {
    json!({"value": 4}).as_object().unwrap().clone()
}

async fn rmcp_call(client: &Client) {
    let params = CallToolRequestParams::new("square").with_arguments(arguments());
    let result = client.peer().call_tool(params).await.unwrap();
    assert_ne!(result.is_error, Some(true));
}

struct Iris {
    executor: ToolExecutor,
    cx: ToolContext,
    _client: McpClient,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);
static COMPLETED: AtomicU64 = AtomicU64::new(0);

impl Iris {
    async fn connect(program: &str) -> Self {
        let config = McpServerConfig::stdio("calc", program, Vec::<String>::new())
            .with_exposure(McpExposure::Eager);
        let client = McpClient::connect(config).await.unwrap();
        let mut registry = ToolRegistry::new();
        client.register_into(&mut registry).unwrap();
        let executor = ToolExecutor::builder(registry)
            .policy(RulePolicy::new().write(Rule::Allow))
            .build()
            .unwrap();
        Self {
            executor,
            cx: ToolContext::builder(".", RunId::new("bench")).build(),
            _client: client,
        }
    }

    async fn call(&self) {
        let id = format!("call_{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
        let block = ToolUseBlock::new(id, "calc__square", json!({"value": 4}));
        let outcome = self.executor.execute_one(block, &self.cx).await;
        assert!(!outcome.result().unwrap().is_error());
        // Runs are bounded, as an agent's are.
        if COMPLETED.fetch_add(1, Ordering::Relaxed) % 1024 == 1023 {
            self.executor.finish_run(&self.cx).await;
        }
    }
}

/// Per-call times of each side, in microseconds: the fastest of
/// [`ROUNDS`] rounds (the least disturbed by the machine), and the median
/// of the rounds' ratios. Rounds alternate which side goes first, so
/// neither always runs on a warmer or a busier machine.
struct Paired {
    best_a: f64,
    best_b: f64,
    median_ratio: f64,
}

fn interleaved<A, B, FA, FB>(rt: &tokio::runtime::Runtime, a: FA, b: FB) -> Paired
where
    FA: Fn() -> A,
    FB: Fn() -> B,
    A: std::future::Future<Output = ()>,
    B: std::future::Future<Output = ()>,
{
    let (mut best_a, mut best_b) = (f64::MAX, f64::MAX);
    let mut ratios = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        let (ta, tb) = if round % 2 == 0 {
            let ta = time_calls(rt, &a);
            (ta, time_calls(rt, &b))
        } else {
            let tb = time_calls(rt, &b);
            (time_calls(rt, &a), tb)
        };
        best_a = best_a.min(ta);
        best_b = best_b.min(tb);
        ratios.push(tb / ta);
    }
    ratios.sort_by(f64::total_cmp);
    Paired {
        best_a,
        best_b,
        median_ratio: ratios[ratios.len() / 2],
    }
}

/// Microseconds per call of [`CALLS`] calls of `run` in a row.
fn time_calls<F, Fut>(rt: &tokio::runtime::Runtime, run: &F) -> f64
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    rt.block_on(async {
        let start = Instant::now();
        for _ in 0..CALLS {
            run().await;
        }
        start.elapsed().as_secs_f64() * 1e6 / f64::from(CALLS)
    })
}

fn report(what: &str, a: &str, b: &str, paired: &Paired) {
    println!(
        "{what}: (a) {a} {:.1} us, (b) {b} {:.1} us: best (b)/(a) = {:.3}, median of round ratios = {:.3}",
        paired.best_a,
        paired.best_b,
        paired.best_b / paired.best_a,
        paired.median_ratio
    );
}

fn bench(c: &mut Criterion) {
    // reqwest is built without a TLS provider of its own.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let rmcp_to_rmcp = rt.block_on(stdio_client(RMCP_SQUARE, &[]));
    let iris_to_rmcp = rt.block_on(Iris::connect(RMCP_SQUARE));
    let rmcp_to_iris = rt.block_on(stdio_client(IRIS_SQUARE, &[]));
    let (rmcp_http, mut rmcp_http_server) = rt.block_on(http_client(RMCP_SQUARE));
    let (iris_http, mut iris_http_server) = rt.block_on(http_client(IRIS_SQUARE));

    let mut group = c.benchmark_group("mcp_square");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(4));
    group.bench_function("client_a_rmcp_stdio", |b| {
        b.to_async(&rt).iter(|| rmcp_call(&rmcp_to_rmcp));
    });
    group.bench_function("client_b_iris_executor_stdio", |b| {
        b.to_async(&rt).iter(|| iris_to_rmcp.call());
    });
    group.bench_function("serve_a_rmcp_router_stdio", |b| {
        b.to_async(&rt).iter(|| rmcp_call(&rmcp_to_rmcp));
    });
    group.bench_function("serve_b_iris_stdio", |b| {
        b.to_async(&rt).iter(|| rmcp_call(&rmcp_to_iris));
    });
    group.bench_function("serve_a_rmcp_router_http", |b| {
        b.to_async(&rt).iter(|| rmcp_call(&rmcp_http));
    });
    group.bench_function("serve_b_iris_http", |b| {
        b.to_async(&rt).iter(|| rmcp_call(&iris_http));
    });
    group.finish();

    let client = interleaved(&rt, || rmcp_call(&rmcp_to_rmcp), || iris_to_rmcp.call());
    let stdio = interleaved(
        &rt,
        || rmcp_call(&rmcp_to_rmcp),
        || rmcp_call(&rmcp_to_iris),
    );
    let http = interleaved(&rt, || rmcp_call(&rmcp_http), || rmcp_call(&iris_http));
    println!("\nper call, {ROUNDS} rounds of {CALLS} calls a side, alternating:");
    report(
        "client over stdio",
        "rmcp client",
        "Iris executor + MCP client",
        &client,
    );
    report("serving over stdio", "rmcp #[tool_router]", "Iris", &stdio);
    report("serving over HTTP", "rmcp #[tool_router]", "Iris", &http);

    // `tools/list` of 1,000 tools (pages of 100), whole.
    let listing = rt.block_on(stdio_client(IRIS_SQUARE, &["--padding", "999"]));
    let mut best = Duration::MAX;
    for _ in 0..10 {
        let start = Instant::now();
        let tools = rt.block_on(listing.peer().list_all_tools()).unwrap();
        best = best.min(start.elapsed());
        assert_eq!(tools.len(), 1000);
    }
    println!(
        "tools/list of 1,000 tools served by Iris (10 pages): {:.2} ms, best of 10",
        best.as_secs_f64() * 1e3
    );

    let _ = rmcp_http_server.kill();
    let _ = iris_http_server.kill();
}

criterion_group!(benches, bench);
criterion_main!(benches);
