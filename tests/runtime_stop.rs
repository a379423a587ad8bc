//! Deadlines tell the truth about synchronous bodies: they are asked to
//! stop through the context and given a grace period to end, a body that
//! has not started by its deadline never starts, one that ends in its grace
//! period is reported as it ended, and one that goes on is reported as
//! possibly completing, and can be waited for.

use crate::files;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use iris::{
    RunId, State, ToolContext, ToolErrorKind, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock,
};
use serde_json::json;

#[derive(Default)]
struct Seen {
    stopped: AtomicBool,
    started: AtomicUsize,
}

/// Work until asked to stop.
#[iris::tool(read_only)]
fn spin(#[ctx] cx: &ToolContext, #[state] seen: State<Seen>) -> String {
    seen.started.fetch_add(1, Ordering::SeqCst);
    while !cx.should_stop() {
        std::thread::sleep(Duration::from_millis(1));
    }
    seen.stopped.store(true, Ordering::SeqCst);
    "stopped".into()
}

/// Work for a while without looking at the flag.
#[iris::tool(read_only)]
fn sleepy(#[state] seen: State<Seen>) -> String {
    seen.started.fetch_add(1, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(300));
    "slept".into()
}

fn executor(timeout: Duration) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry.register(Spin).unwrap();
    registry.register(Sleepy).unwrap();
    ToolExecutor::builder(registry)
        .timeout(Some(timeout))
        .build()
        .unwrap()
}

fn cx(seen: &Arc<Seen>) -> ToolContext {
    ToolContext::builder(".", RunId::new("run-1"))
        .shared_state(Arc::clone(seen))
        .build()
}

fn result(outcome: &iris::ToolOutcome) -> &ToolResult {
    outcome.result().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_past_its_deadline_is_asked_to_stop_and_told_truthfully() {
    let seen = Arc::new(Seen::default());
    let outcome = executor(Duration::from_millis(50))
        .execute_one(ToolUseBlock::new("c1", "spin", json!({})), &cx(&seen))
        .await;
    let result = result(&outcome);
    assert_eq!(result.error_kind(), Some(ToolErrorKind::Timeout));
    assert!(
        result
            .text_content()
            .contains("it has ended, so nothing of it runs on, and returned: stopped"),
        "{}",
        result.text_content()
    );
    assert!(
        seen.stopped.load(Ordering::SeqCst),
        "reported once it ended"
    );
}

/// Finding: a synchronous body past its deadline was reported as one that
/// may still complete, and its effect landed later, with no way to wait for
/// it. A body that does not end in its grace period is reported so, and
/// `wait_for_stopped` returns once its effect has landed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_runs_on_can_be_waited_for() {
    let mut registry = ToolRegistry::new();
    registry.register(SlowAppend).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(iris::RulePolicy::new().write(iris::Rule::Allow))
        .tool_timeout("slow_append", Duration::from_millis(50))
        .stop_grace(Duration::from_millis(50))
        .build()
        .unwrap();
    let cx = ToolContext::builder(".", RunId::new("run-1"))
        .state(std::sync::Mutex::new(Vec::<String>::new()))
        .build();
    let outcome = executor
        .execute_one(
            ToolUseBlock::new("c1", "slow_append", json!({"tag": "late"})),
            &cx,
        )
        .await;
    let reported = result(&outcome).text_content();
    assert!(reported.contains("may still complete"), "{reported}");
    let log = cx.state::<std::sync::Mutex<Vec<String>>>().unwrap();
    assert!(log.lock().unwrap().is_empty(), "not landed yet");
    executor.wait_for_stopped(&cx).await;
    assert_eq!(
        *log.lock().unwrap(),
        ["late"],
        "landed before the wait ended"
    );
}

/// With one blocking thread busy, a call waits for a thread; when its
/// deadline passes before it gets one, it never starts.
#[test]
fn a_body_that_has_not_started_by_its_deadline_never_starts() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let seen = Arc::new(Seen::default());
    runtime.block_on(async {
        let slow = ToolExecutor::builder({
            let mut registry = ToolRegistry::new();
            registry.register(Sleepy).unwrap();
            registry
        })
        .timeout(None)
        .build()
        .unwrap();
        let quick = executor(Duration::from_millis(30));
        let cx = cx(&seen);
        let busy = slow.execute_one(ToolUseBlock::new("busy", "sleepy", json!({})), &cx);
        let waiting = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            quick
                .execute_one(ToolUseBlock::new("late", "sleepy", json!({})), &cx)
                .await
        };
        let (busy, late) = tokio::join!(busy, waiting);
        assert_eq!(result(&busy).text_content(), "slept");
        assert_eq!(result(&late).error_kind(), Some(ToolErrorKind::Timeout));
        // Long after: the late call still never ran.
        tokio::time::sleep(Duration::from_millis(400)).await;
    });
    assert_eq!(seen.started.load(Ordering::SeqCst), 1);
}

/// Append a tag to the log after a while, without looking at the stop flag.
#[iris::tool(write)]
fn slow_append(
    /// The tag.
    tag: String,
    #[state] log: State<std::sync::Mutex<Vec<String>>>,
) -> String {
    std::thread::sleep(Duration::from_millis(300));
    log.lock().unwrap().push(tag.clone());
    tag
}

/// The red team's case: a timed-out "first" write landed after "second".
/// Now the run's next call waits until the first body really ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_body_is_never_overtaken_by_the_next_call() {
    let mut registry = ToolRegistry::new();
    registry.register(SlowAppend).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(iris::RulePolicy::new().write(iris::Rule::Allow))
        .tool_timeout("slow_append", Duration::from_millis(50))
        .build()
        .unwrap();
    let cx = ToolContext::builder(".", RunId::new("run-1"))
        .state(std::sync::Mutex::new(Vec::<String>::new()))
        .build();
    let first = executor
        .execute_one(
            ToolUseBlock::new("c1", "slow_append", json!({"tag": "first"})),
            &cx,
        )
        .await;
    assert_eq!(result(&first).error_kind(), Some(ToolErrorKind::Timeout));
    let second = executor
        .execute_one(
            ToolUseBlock::new("c2", "slow_append", json!({"tag": "second"})),
            &cx,
        )
        .await;
    // The second call itself times out too; what matters is the order.
    let _ = second;
    tokio::time::sleep(Duration::from_millis(700)).await;
    let log = cx.state::<std::sync::Mutex<Vec<String>>>().unwrap();
    assert_eq!(*log.lock().unwrap(), ["first", "second"]);
}

/// `read_file` of a huge file is refused before any reading, and a binary
/// tail after a text head makes the file binary.
#[tokio::test]
async fn read_file_bounds_its_work() {
    let ws = files::Workspace::new();
    let huge = std::fs::File::create(ws.path("huge.bin")).unwrap();
    huge.set_len(1 << 40).unwrap();
    let started = Instant::now();
    let result = ws.call("read_file", json!({"path": "huge.bin"})).await;
    assert_eq!(result.error_kind(), Some(ToolErrorKind::UnsupportedContent));
    assert!(started.elapsed() < Duration::from_secs(1));

    let mut head = "a line of text\n".repeat(2_100);
    head.push_str(&"\0".repeat(100_000));
    ws.write("mixed.txt", &head);
    let result = ws.call("read_file", json!({"path": "mixed.txt"})).await;
    assert_eq!(
        result.error_kind(),
        Some(ToolErrorKind::UnsupportedContent),
        "{}",
        result.text_content()
    );
}
