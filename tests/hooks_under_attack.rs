//! Hooks that try to take the host down: floods on stdout and stderr,
//! descendants that outlive the hook, hooks that never answer, and hooks
//! and middleware that panic. None of them may exhaust the host, outlive
//! their call or lose an outcome.
#![cfg(target_os = "linux")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use iris::hooks::CommandHook;
use iris::hooks::{AfterAnswer, BeforeAnswer, Hook, HookEvent, HookInput, HookRegistration};
use iris::{
    Next, RunId, State, ToolCall, ToolContext, ToolErrorKind, ToolExecutor, ToolRegistry,
    ToolResult, ToolUseBlock,
};
use serde_json::json;

/// Write something.
#[iris::tool(read_only)]
fn write_note(
    /// The note.
    text: String,
    #[state] writes: State<AtomicUsize>,
) -> String {
    writes.fetch_add(1, Ordering::SeqCst);
    text
}

fn executor(hooks: Vec<HookRegistration>) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry.register(WriteNote).unwrap();
    let mut builder = ToolExecutor::builder(registry);
    for hook in hooks {
        builder = builder.hook(hook);
    }
    builder.build().unwrap()
}

fn cx() -> ToolContext {
    ToolContext::builder(".", RunId::new("run"))
        .state(AtomicUsize::new(0))
        .build()
}

fn writes(cx: &ToolContext) -> usize {
    cx.state::<AtomicUsize>().unwrap().load(Ordering::SeqCst)
}

fn shell(name: &str, event: HookEvent, script: &str) -> HookRegistration {
    let command = CommandHook::new(name, ["sh", "-c", script]).unwrap();
    HookRegistration::new(name, event, Hook::command(command)).timeout(Duration::from_secs(5))
}

fn call(id: &str) -> ToolUseBlock {
    ToolUseBlock::new(id, "write_note", json!({"text": "hi"}))
}

async fn run(executor: &ToolExecutor, cx: &ToolContext, id: &str) -> ToolResult {
    executor
        .execute_one(call(id), cx)
        .await
        .result()
        .cloned()
        .unwrap()
}

fn wait_gone(pid: i32) -> bool {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(3) {
        if crate::support::process_gone(&pid.to_string()) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn pid_in(path: &std::path::Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn floods_are_cut_off_and_deny() {
    for (name, script) in [("stdout", "yes"), ("stderr", "yes >&2")] {
        let executor = executor(vec![shell(name, HookEvent::ToolBefore, script)]);
        let cx = cx();
        let started = Instant::now();
        let result = run(&executor, &cx, "c1").await;
        assert_eq!(
            result.error_kind(),
            Some(ToolErrorKind::DeniedByHook),
            "{name}"
        );
        assert!(
            result.text_content().contains("wrote more than"),
            "{}",
            result.text_content()
        );
        assert!(result.text_content().len() < 2_000);
        assert!(started.elapsed() < Duration::from_secs(3), "{name}");
        assert_eq!(writes(&cx), 0);
    }
}

#[tokio::test]
async fn descendants_die_with_their_hook() {
    let dir = tempfile::tempdir().unwrap();
    let (grouped, escaped) = (dir.path().join("grouped"), dir.path().join("escaped"));
    // One child stays in the hook's group, one leaves it with setsid; the
    // hook answers at once.
    let script = format!(
        "sleep 60 & echo $! > {}; setsid sleep 60 & echo $! > {}; echo '{{}}'",
        grouped.display(),
        escaped.display()
    );
    let executor = executor(vec![shell("spawner", HookEvent::ToolBefore, &script)]);
    let cx = cx();
    let result = run(&executor, &cx, "c1").await;
    assert_eq!(result.text_content(), "hi");
    assert!(wait_gone(pid_in(&grouped)), "the grouped child lives on");
    assert!(wait_gone(pid_in(&escaped)), "the setsid child lives on");
}

#[tokio::test]
async fn a_dropped_call_takes_its_hook_along() {
    let dir = tempfile::tempdir().unwrap();
    let child = dir.path().join("child");
    let script = format!("setsid sleep 60 & echo $! > {}; sleep 60", child.display());
    let executor = executor(vec![shell("slow", HookEvent::ToolBefore, &script)]);
    let cx = cx();
    let dropped = tokio::time::timeout(Duration::from_millis(500), run(&executor, &cx, "c1")).await;
    assert!(
        dropped.is_err(),
        "the call should still be waiting on its hook"
    );
    assert!(
        wait_gone(pid_in(&child)),
        "the hook's child outlived the call"
    );
    assert_eq!(writes(&cx), 0);
}

#[tokio::test]
async fn code_hooks_have_deadlines() {
    async fn stuck(_: &HookInput) -> BeforeAnswer {
        tokio::time::sleep(Duration::from_secs(60)).await;
        BeforeAnswer::Allow
    }
    let stuck = HookRegistration::before("stuck", stuck).timeout(Duration::from_millis(50));
    let executor = executor(vec![stuck]);
    let cx = cx();
    let started = Instant::now();
    let result = run(&executor, &cx, "c1").await;
    assert_eq!(result.error_kind(), Some(ToolErrorKind::DeniedByHook));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(writes(&cx), 0);
}

/// Finding: a hook that never answers held a call for the hooks' own 30 s
/// default although the executor's deadline was far shorter. The call's
/// deadline bounds its hooks too, and the body gets only what the hooks
/// left of it.
#[tokio::test]
async fn the_calls_deadline_bounds_its_hooks_and_the_body_gets_what_is_left() {
    async fn stuck(_: &HookInput) -> BeforeAnswer {
        tokio::time::sleep(Duration::from_secs(60)).await;
        BeforeAnswer::Allow
    }
    async fn slow(_: &HookInput) -> BeforeAnswer {
        tokio::time::sleep(Duration::from_millis(250)).await;
        BeforeAnswer::Allow
    }
    let mut registry = ToolRegistry::new();
    registry.register(WriteNote).unwrap();
    let executor = ToolExecutor::builder(registry)
        .timeout(Some(Duration::from_millis(300)))
        .hook(HookRegistration::before("stuck", stuck))
        .build()
        .unwrap();
    let cx = cx();
    let started = Instant::now();
    let result = run(&executor, &cx, "c1").await;
    assert_eq!(
        result.error_kind(),
        Some(ToolErrorKind::Timeout),
        "{result:?}"
    );
    assert!(
        result
            .text_content()
            .contains("did not start within its deadline of 0.3 s"),
        "{}",
        result.text_content()
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(writes(&cx), 0);

    // A slow hook that answers in time leaves the body the rest: 250 of
    // 300 ms spent deciding, the body's 200 ms no longer fit.
    let mut registry = ToolRegistry::new();
    registry.register(Nap).unwrap();
    let executor = ToolExecutor::builder(registry)
        .timeout(Some(Duration::from_millis(300)))
        .hook(HookRegistration::before("slow", slow))
        .build()
        .unwrap();
    let result = executor
        .execute_one(ToolUseBlock::new("n1", "nap", json!({})), &cx)
        .await
        .result()
        .cloned()
        .unwrap();
    // With a whole deadline of its own, the body would have finished.
    assert_eq!(
        result.error_kind(),
        Some(ToolErrorKind::Timeout),
        "{result:?}"
    );
}

/// Sleep a fifth of a second.
#[iris::tool(read_only)]
async fn nap() -> &'static str {
    tokio::time::sleep(Duration::from_millis(200)).await;
    "rested"
}

/// A hook of `event` that panics while it is awaited.
fn panicking(event: HookEvent) -> HookRegistration {
    async fn explode<A>(_: &HookInput) -> A {
        panic!("hook exploded")
    }
    let hook = match event {
        HookEvent::ToolBefore => Hook::before(explode::<BeforeAnswer>),
        HookEvent::ToolAfter => Hook::after(explode::<AfterAnswer>),
        _ => Hook::run(explode::<()>),
    };
    HookRegistration::new("boom", event, hook)
}

#[tokio::test]
async fn a_panicking_after_hook_keeps_the_result_and_the_id_record() {
    let executor = executor(vec![panicking(HookEvent::ToolAfter)]);
    let cx = cx();
    let result = run(&executor, &cx, "c1").await;
    assert_eq!(result.text_content(), "hi");
    let failures = result.stats().get("hook_failures").unwrap().to_string();
    assert!(failures.contains("hook exploded"), "{failures}");
    assert_eq!(writes(&cx), 1);
    let retry = run(&executor, &cx, "c1").await;
    assert_eq!(retry.error_kind(), Some(ToolErrorKind::DuplicateCall));
    assert_eq!(writes(&cx), 1);
}

#[tokio::test]
async fn a_panicking_before_hook_denies_and_the_batch_keeps_every_outcome() {
    let executor = executor(vec![
        panicking(HookEvent::ToolBefore).for_tools(["write_note"]),
    ]);
    let cx = cx();
    let outcomes = executor
        .execute_batch(
            vec![
                call("c1"),
                ToolUseBlock::new("c2", "no_such_tool", json!({})),
                call("c3"),
            ],
            &cx,
        )
        .await;
    assert_eq!(outcomes.len(), 3);
    for outcome in [&outcomes[0], &outcomes[2]] {
        assert_eq!(
            outcome.result().unwrap().error_kind(),
            Some(ToolErrorKind::DeniedByHook)
        );
    }
    assert_eq!(writes(&cx), 0);
}

#[tokio::test]
async fn a_closure_hook_that_panics_while_answering_at_once_denies() {
    let boom = HookRegistration::before("boom", |_: &HookInput| -> BeforeAnswer {
        panic!("closure exploded")
    });
    let executor = executor(vec![boom]);
    let cx = cx();
    let result = run(&executor, &cx, "c1").await;
    assert_eq!(result.error_kind(), Some(ToolErrorKind::DeniedByHook));
    assert!(
        result.text_content().contains("closure exploded"),
        "{}",
        result.text_content()
    );
    assert_eq!(writes(&cx), 0);
}

/// Panics.
#[iris::middleware]
async fn explode(call: ToolCall, next: Next<'_>) -> ToolResult {
    let _ = next.run(call).await;
    panic!("middleware exploded")
}

#[tokio::test]
async fn a_panicking_middleware_fails_its_call_only() {
    let mut registry = ToolRegistry::new();
    registry.register(WriteNote).unwrap();
    let executor = ToolExecutor::builder(registry)
        .middleware(Explode)
        .build()
        .unwrap();
    let cx = cx();
    let result = run(&executor, &cx, "c1").await;
    assert_eq!(result.error_kind(), Some(ToolErrorKind::Internal));
    assert!(result.text_content().contains("middleware exploded"));
}

/// A middleware's own error type.
#[derive(Debug)]
struct QuotaExceeded;

impl std::fmt::Display for QuotaExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the daily quota is used up")
    }
}

impl std::error::Error for QuotaExceeded {}

/// Refuses every call with an error of its own type.
#[iris::middleware]
async fn quota(call: ToolCall, next: Next<'_>) -> Result<ToolResult, QuotaExceeded> {
    let _ = (call, next);
    Err(QuotaExceeded)
}

/// Any error type: `?` on `next.run` included.
#[iris::middleware]
async fn boxed(
    call: ToolCall,
    next: Next<'_>,
) -> Result<ToolResult, Box<dyn std::error::Error + Send + Sync>> {
    Ok(next.run(call).await?)
}

#[tokio::test]
async fn middleware_may_fail_with_any_error_and_is_named() {
    let mut registry = ToolRegistry::new();
    registry.register(WriteNote).unwrap();
    let executor = ToolExecutor::builder(registry)
        .middleware(Boxed)
        .middleware(Quota)
        .build()
        .unwrap();
    let cx = cx();
    let result = run(&executor, &cx, "c1").await;
    assert_eq!(result.error_kind(), Some(ToolErrorKind::Execution));
    assert!(
        result.text_content().contains("middleware `quota` failed")
            && result.text_content().contains("daily quota"),
        "{}",
        result.text_content()
    );
    assert_eq!(writes(&cx), 0);
}
