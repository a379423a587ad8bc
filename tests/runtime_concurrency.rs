//! Read-only windows run together, everything else alone; proven with
//! barriers and in-flight counters, not wall-clock times.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use iris::{RunId, State, ToolContext, ToolExecutor, ToolOutcome, ToolRegistry, ToolUseBlock};
use serde_json::json;
use tokio::sync::Barrier;

/// Shared by the tools of one test.
struct Shared {
    barrier: Barrier,
    /// How long a rendezvous waits for its sibling.
    patience: Duration,
    in_flight: AtomicUsize,
    blocking_arrived: AtomicUsize,
}

/// Wait until a sibling arrives (only possible when both run at once).
#[iris::tool(read_only, concurrency_safe)]
async fn rendezvous(
    /// A label.
    label: String,
    #[state] shared: State<Shared>,
) -> Result<String, String> {
    shared.in_flight.fetch_add(1, Ordering::SeqCst);
    let met = tokio::time::timeout(shared.patience, shared.barrier.wait()).await;
    shared.in_flight.fetch_sub(1, Ordering::SeqCst);
    met.map(|_| label)
        .map_err(|_| "no sibling ran at the same time".to_owned())
}

/// Write something; nothing else may run meanwhile.
#[iris::tool(write)]
async fn exclusive_write(#[state] shared: State<Shared>) -> Result<&'static str, String> {
    if shared.in_flight.load(Ordering::SeqCst) == 0 {
        Ok("alone")
    } else {
        Err("another call was in flight during a write".to_owned())
    }
}

/// A synchronous read that waits for a sibling on another blocking thread.
#[iris::tool(read_only, concurrency_safe)]
fn blocking_rendezvous(#[state] shared: State<Shared>) -> Result<&'static str, String> {
    shared.blocking_arrived.fetch_add(1, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(10);
    while shared.blocking_arrived.load(Ordering::SeqCst) < 2 {
        if Instant::now() > deadline {
            return Err("the sibling never ran alongside".to_owned());
        }
        std::thread::yield_now();
    }
    Ok("met")
}

/// Panic, to disturb siblings if it could.
#[iris::tool(read_only, concurrency_safe)]
async fn crash() -> String {
    panic!("crash")
}

/// Long enough for a sibling that runs alongside, on any machine.
const PATIENT: Duration = Duration::from_secs(30);
/// For a rendezvous that is meant to find no sibling.
const NEVER_ALONE: Duration = Duration::from_millis(300);

fn setup(max_concurrency: usize, patience: Duration) -> (ToolExecutor, ToolContext) {
    let mut registry = ToolRegistry::new();
    registry
        .register(Rendezvous)
        .unwrap()
        .register(ExclusiveWrite)
        .unwrap()
        .register(BlockingRendezvous)
        .unwrap()
        .register(Crash)
        .unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(iris::RulePolicy::new().write(iris::Rule::Allow))
        .max_concurrency(max_concurrency)
        .build()
        .unwrap();
    let cx = ToolContext::builder(".", RunId::new("run"))
        .state(Shared {
            barrier: Barrier::new(2),
            patience,
            in_flight: AtomicUsize::new(0),
            blocking_arrived: AtomicUsize::new(0),
        })
        .build();
    (executor, cx)
}

fn texts(outcomes: &[ToolOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .map(|o| o.result().unwrap().text_content())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adjacent_reads_run_together_and_writes_run_alone() {
    let (executor, cx) = setup(8, PATIENT);
    let calls = vec![
        ToolUseBlock::new("1", "rendezvous", json!({"label": "a"})),
        ToolUseBlock::new("2", "rendezvous", json!({"label": "b"})),
        ToolUseBlock::new("3", "exclusive_write", json!({})),
        ToolUseBlock::new("4", "rendezvous", json!({"label": "c"})),
        ToolUseBlock::new("5", "rendezvous", json!({"label": "d"})),
    ];
    let outcomes = executor.execute_batch(calls, &cx).await;
    let ids: Vec<&str> = outcomes.iter().map(ToolOutcome::call_id).collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5"]);
    assert_eq!(texts(&outcomes), ["a", "b", "alone", "c", "d"]);
}

/// A server hands each request to a task of its own (`tokio::spawn`, an
/// axum handler): a batch, with a window of reads, must be a future it can
/// send there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_runs_in_a_spawned_task() {
    let (executor, cx) = setup(8, PATIENT);
    let calls = vec![
        ToolUseBlock::new("1", "rendezvous", json!({"label": "a"})),
        ToolUseBlock::new("2", "rendezvous", json!({"label": "b"})),
    ];
    let outcomes = tokio::spawn(async move { executor.execute_batch(calls, &cx).await })
        .await
        .unwrap();
    assert_eq!(texts(&outcomes), ["a", "b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_between_reads_splits_the_window() {
    // With the write in between, each read is alone and can never meet a sibling.
    let (executor, cx) = setup(8, NEVER_ALONE);
    let calls = vec![
        ToolUseBlock::new("1", "rendezvous", json!({"label": "a"})),
        ToolUseBlock::new("2", "exclusive_write", json!({})),
    ];
    let outcomes =
        tokio::time::timeout(Duration::from_secs(30), executor.execute_batch(calls, &cx))
            .await
            .unwrap();
    let first = outcomes[0].result().unwrap();
    assert_eq!(first.text_content(), "no sibling ran at the same time");
    assert_eq!(outcomes[1].result().unwrap().text_content(), "alone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limit_bounds_a_window() {
    // With a limit of 1 the two reads cannot meet.
    let (executor, cx) = setup(1, NEVER_ALONE);
    let calls = vec![
        ToolUseBlock::new("1", "rendezvous", json!({"label": "a"})),
        ToolUseBlock::new("2", "rendezvous", json!({"label": "b"})),
    ];
    let outcomes = executor.execute_batch(calls, &cx).await;
    // The first waited alone and gave up; only then did the second start.
    assert!(outcomes[0].result().unwrap().is_error());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_bodies_run_on_blocking_threads_side_by_side() {
    let (executor, cx) = setup(8, PATIENT);
    let calls = vec![
        ToolUseBlock::new("1", "blocking_rendezvous", json!({})),
        ToolUseBlock::new("2", "blocking_rendezvous", json!({})),
    ];
    let outcomes = executor.execute_batch(calls, &cx).await;
    assert_eq!(texts(&outcomes), ["met", "met"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_siblings_do_not_disturb_the_others() {
    let (executor, cx) = setup(8, PATIENT);
    let calls = vec![
        ToolUseBlock::new("1", "rendezvous", json!({"label": "a"})),
        ToolUseBlock::new("2", "crash", json!({})),
        ToolUseBlock::new("3", "no_such_tool", json!({})),
        ToolUseBlock::new("4", "rendezvous", json!({"label": "b"})),
    ];
    let outcomes = executor.execute_batch(calls, &cx).await;
    let kinds: Vec<_> = outcomes
        .iter()
        .map(|o| o.result().unwrap().error_kind())
        .collect();
    assert_eq!(
        kinds,
        [
            None,
            Some(iris::ToolErrorKind::ToolPanicked),
            Some(iris::ToolErrorKind::UnknownTool),
            None
        ]
    );
    assert_eq!(texts(&outcomes)[3], "b");
    let shared = cx.state::<Shared>().unwrap();
    assert_eq!(shared.in_flight.load(Ordering::SeqCst), 0);
}
