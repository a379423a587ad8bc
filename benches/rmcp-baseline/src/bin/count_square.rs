//! The same `square` call three ways, for an instruction counter: run under
//! `valgrind --tool=callgrind --toggle-collect='*measured_calls*'`, so that
//! only the calls are counted, not the set-up or the making of inputs (a
//! provider's response is parsed before anything runs). `count.sh` runs it.
//!
//! Usage: `count_square floor|iris|rmcp CALLS`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::future::Future;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use iris::{RunId, ToolContext, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock};
use iris_rmcp_baseline::{Calc, SquareArgs};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolRequestParams, NumberOrString};
use rmcp::service::{RequestContext, RoleServer, serve_directly};
use serde_json::{Value, json};

/// Return the square of an integer.
#[iris::tool(read_only, concurrency_safe)]
async fn square(
    /// The integer to square.
    value: i64,
) -> i64 {
    value * value
}

/// The floor: parse the arguments, call, serialize the result.
async fn floor(input: Value) -> ToolResult {
    let args: SquareArgs = serde_json::from_value(input).unwrap();
    let out = square(args.value).await;
    ToolResult::json(serde_json::to_value(out).unwrap())
}

/// Counts the allocations made inside [`measured_calls`] (reallocations
/// count as one each), so that the script can print allocations per call
/// beside the instruction count.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to the system allocator unchanged; the
// counter only reads a flag and bumps an atomic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Calls are made in runs of this many, as the benchmarks do: an agent's
/// run is bounded, and Iris forgets a run's call ids when it finishes.
const RUN: usize = 1024;

/// Everything the counter counts happens inside this function: the calls,
/// each taking its input and handing back its output. The vectors that
/// hold them are made and freed outside, so that their (large) blocks do
/// not make the allocator tidy up inside it.
#[inline(never)]
fn measured_calls<I, O, Fut>(
    rt: &tokio::runtime::Runtime,
    inputs: &mut Vec<I>,
    outputs: &mut Vec<O>,
    run: impl Fn(I) -> Fut,
) where
    Fut: Future<Output = O>,
{
    COUNTING.store(true, Ordering::Relaxed);
    rt.block_on(async {
        for input in inputs.drain(..) {
            outputs.push(run(input).await);
        }
    });
    COUNTING.store(false, Ordering::Relaxed);
}

/// Runs `run` over `inputs` inside [`measured_calls`]; the outputs are
/// dropped outside it.
fn count<I, O, Fut>(rt: &tokio::runtime::Runtime, mut inputs: Vec<I>, run: impl Fn(I) -> Fut)
where
    Fut: Future<Output = O>,
{
    let mut outputs = Vec::with_capacity(inputs.len());
    measured_calls(rt, &mut inputs, &mut outputs, run);
    black_box(outputs);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(mode), Some(calls)) = (args.next(), args.next()) else {
        eprintln!("usage: count_square floor|iris|rmcp CALLS");
        std::process::exit(2);
    };
    let calls: usize = calls.parse().expect("CALLS is a number");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let input = json!({"value": 4});
    match mode.as_str() {
        "floor" => {
            for _ in 0..calls.div_ceil(RUN) {
                let inputs = vec![input.clone(); RUN];
                count(&rt, inputs, floor);
            }
        }
        "iris" => {
            let mut registry = ToolRegistry::new();
            registry.register(Square).unwrap();
            let executor = ToolExecutor::builder(registry).build().unwrap();
            let cx = ToolContext::builder(".", RunId::new("count")).build();
            let mut next = 0usize;
            for _ in 0..calls.div_ceil(RUN) {
                let inputs: Vec<ToolUseBlock> = (0..RUN)
                    .map(|_| {
                        next += 1;
                        ToolUseBlock::new(format!("call_{next}"), "square", input.clone())
                    })
                    .collect();
                count(&rt, inputs, |block| executor.execute_one(block, &cx));
                // The run ends: counted too, as the benchmark's path does.
                count(&rt, vec![()], |()| executor.finish_run(&cx));
            }
        }
        "rmcp" => {
            let calc = Calc::new();
            let arguments = input.as_object().unwrap().clone();
            // A request context needs a live peer: serve over an in-memory
            // pipe without the initialize handshake.
            let (peer, _running, _client_end) = rt.block_on(async {
                let (server_end, client_end) = tokio::io::duplex(64 * 1024);
                let running =
                    serve_directly::<RoleServer, _, _, _, _>(calc.clone(), server_end, None);
                (running.peer().clone(), running, client_end)
            });
            for _ in 0..calls.div_ceil(RUN) {
                let inputs: Vec<_> = (0..RUN)
                    .map(|_| {
                        (
                            CallToolRequestParams::new("square").with_arguments(arguments.clone()),
                            RequestContext::new(NumberOrString::Number(1), peer.clone()),
                        )
                    })
                    .collect();
                count(&rt, inputs, |(params, context)| {
                    let calc = &calc;
                    async move {
                        calc.router()
                            .call(ToolCallContext::new(calc, params, context))
                            .await
                            .unwrap()
                    }
                });
            }
        }
        other => {
            eprintln!("unknown mode {other}: floor, iris or rmcp");
            std::process::exit(2);
        }
    }
    let made = calls.div_ceil(RUN) * RUN;
    #[allow(clippy::cast_precision_loss, reason = "a ratio to print")]
    let per_call = ALLOCATIONS.load(Ordering::Relaxed) as f64 / made as f64;
    eprintln!("calls {made} allocations_per_call {per_call:.2}");
}
