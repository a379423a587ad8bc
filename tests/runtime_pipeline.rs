//! The stage order of one call, and what refusals and short-circuits skip.

use std::sync::{Arc, Mutex};

use iris::hooks::{AfterAnswer, BeforeAnswer, HookInput, HookRegistration};
use iris::permissions::PermissionRequest;
use iris::permissions::{Permission, PermissionPolicy};
use iris::{
    Next, RunId, State, ToolCall, ToolContext, ToolErrorKind, ToolExecutor, ToolOutcome,
    ToolRegistry, ToolResult, ToolUseBlock,
};
use serde_json::json;

type Log = Arc<Mutex<Vec<String>>>;

fn record(log: &Log, entry: impl Into<String>) {
    log.lock().unwrap().push(entry.into());
}

/// Add two numbers.
#[iris::tool(read_only)]
async fn add(
    /// First.
    a: i64,
    /// Second.
    b: i64,
    #[state] log: State<Log>,
) -> i64 {
    record(&log, "body");
    a + b
}

struct RecordingPolicy(Log);

impl PermissionPolicy for RecordingPolicy {
    fn check(&self, request: &PermissionRequest<'_>) -> Permission {
        record(&self.0, format!("permission {}", request.arguments));
        Permission::Allow
    }
}

struct Recorder {
    log: Log,
    name: &'static str,
    short_circuit: bool,
}

impl iris::middleware::Middleware for Recorder {
    fn handle<'a>(
        &'a self,
        mut call: ToolCall,
        _cx: &'a ToolContext,
        next: Next<'a>,
    ) -> iris::tool::BoxFuture<'a, Result<ToolResult, iris::middleware::MiddlewareError>> {
        Box::pin(async move {
            record(&self.log, format!("{} before", self.name));
            if self.short_circuit {
                return Ok(ToolResult::text("from the cache"));
            }
            // Rewriting the snapshot must not change what the body receives.
            *call.arguments_mut() = json!({"a": 100, "b": 100});
            let result = next.run(call).await?;
            record(&self.log, format!("{} after", self.name));
            Ok(result)
        })
    }
}

fn executor(log: &Log, short_circuit: bool, deny_before: bool) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry.register(Add).unwrap();
    let before_log = Arc::clone(log);
    let after_log = Arc::clone(log);
    ToolExecutor::builder(registry)
        .policy(RecordingPolicy(Arc::clone(log)))
        .hook(HookRegistration::before("before", move |_: &HookInput| {
            record(&before_log, "tool.before");
            if deny_before {
                BeforeAnswer::deny("not today")
            } else {
                BeforeAnswer::Allow
            }
        }))
        .hook(HookRegistration::after(
            "after",
            move |input: &HookInput| {
                let seen = input.result.as_ref().map_or("", |r| r.text.as_str());
                record(&after_log, format!("tool.after saw {seen}"));
                AfterAnswer::feedback(format!("checked {seen}"))
            },
        ))
        .middleware(Recorder {
            log: Arc::clone(log),
            name: "outer",
            short_circuit: false,
        })
        .middleware(Recorder {
            log: Arc::clone(log),
            name: "inner",
            short_circuit,
        })
        .build()
        .unwrap()
}

fn cx(log: &Log) -> ToolContext {
    ToolContext::builder(".", RunId::new("run"))
        .state(Arc::clone(log))
        .build()
}

fn finished(outcome: ToolOutcome) -> ToolResult {
    outcome.result().cloned().expect("the call finished")
}

#[tokio::test]
async fn stages_run_in_the_documented_order() {
    let log: Log = Arc::default();
    let result = finished(
        executor(&log, false, false)
            .execute_one(
                ToolUseBlock::new("c1", "add", json!({"a": 2, "b": 3})),
                &cx(&log),
            )
            .await,
    );
    assert_eq!(result.text_content(), "5\n[Hook feedback]\nchecked 5");
    assert_eq!(
        *log.lock().unwrap(),
        [
            r#"permission {"a":2,"b":3}"#,
            "tool.before",
            "outer before",
            "inner before",
            r#"permission {"a":2,"b":3}"#,
            "body",
            "inner after",
            "outer after",
            "tool.after saw 5",
        ]
    );
}

#[tokio::test]
async fn a_short_circuit_skips_the_body_and_the_after_hooks() {
    let log: Log = Arc::default();
    let result = finished(
        executor(&log, true, false)
            .execute_one(
                ToolUseBlock::new("c1", "add", json!({"a": 2, "b": 3})),
                &cx(&log),
            )
            .await,
    );
    assert_eq!(result.text_content(), "from the cache");
    let log = log.lock().unwrap();
    assert!(
        !log.iter()
            .any(|l| l == "body" || l.starts_with("tool.after")),
        "{log:?}"
    );
}

#[tokio::test]
async fn a_before_hook_denial_skips_middleware_and_body() {
    let log: Log = Arc::default();
    let result = finished(
        executor(&log, false, true)
            .execute_one(
                ToolUseBlock::new("c1", "add", json!({"a": 2, "b": 3})),
                &cx(&log),
            )
            .await,
    );
    assert_eq!(result.error_kind(), Some(ToolErrorKind::DeniedByHook));
    assert!(
        result.text_content().contains("hook `before`: not today"),
        "{result:?}"
    );
    assert_eq!(
        *log.lock().unwrap(),
        [r#"permission {"a":2,"b":3}"#, "tool.before"]
    );
}

/// Fail.
#[iris::tool]
fn fail_always() -> Result<(), String> {
    Err("always".into())
}

#[tokio::test]
async fn every_deny_reason_is_kept_and_after_hooks_see_failures_too() {
    let mut registry = ToolRegistry::new();
    registry.register(FailAlways).unwrap();
    let seen: Log = Arc::default();
    let seen_by_hook = Arc::clone(&seen);
    let deny = |name: &str, reason: &'static str| {
        HookRegistration::before(name, move |_: &HookInput| BeforeAnswer::deny(reason))
    };
    let denying = ToolExecutor::builder(registry.clone())
        .policy(iris::RulePolicy::new().other(iris::Rule::Allow))
        .hook(deny("one", "first"))
        .hook(deny("two", "second"))
        .build()
        .unwrap();
    let cx = ToolContext::builder(".", RunId::new("r")).build();
    let denied = finished(
        denying
            .execute_one(ToolUseBlock::new("1", "fail_always", json!({})), &cx)
            .await,
    );
    let text = denied.text_content();
    assert!(
        text.contains("hook `one`: first") && text.contains("hook `two`: second"),
        "{text}"
    );

    let watching = ToolExecutor::builder(registry)
        .policy(iris::RulePolicy::new().other(iris::Rule::Allow))
        .hook(
            HookRegistration::after("watch", move |input: &HookInput| {
                let view = input.result.as_ref().unwrap();
                record(
                    &seen_by_hook,
                    format!("{} {:?}", view.text, view.error_kind),
                );
                AfterAnswer::Nothing
            })
            .for_tools(["fail_always"]),
        )
        .build()
        .unwrap();
    let failed = finished(
        watching
            .execute_one(ToolUseBlock::new("2", "fail_always", json!({})), &cx)
            .await,
    );
    assert_eq!(failed.text_content(), "always");
    assert_eq!(*seen.lock().unwrap(), ["always Some(Execution)"]);
}

/// Multiply two numbers.
#[iris::tool(read_only)]
async fn multiply(
    /// First.
    a: i64,
    /// Second.
    b: i64,
    #[state] log: State<Log>,
) -> i64 {
    record(&log, "body");
    a * b
}

fn add_watched(log: &Log) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry.register(Add).unwrap().register(Multiply).unwrap();
    let (before_log, after_log) = (Arc::clone(log), Arc::clone(log));
    ToolExecutor::builder(registry)
        .policy(RecordingPolicy(Arc::clone(log)))
        .hook(
            HookRegistration::before("before", move |input: &HookInput| {
                record(
                    &before_log,
                    format!("tool.before {}", input.tool.as_ref().unwrap()),
                );
                BeforeAnswer::Allow
            })
            .for_tools(["add"]),
        )
        .hook(
            HookRegistration::after("after", move |input: &HookInput| {
                record(
                    &after_log,
                    format!("tool.after {}", input.tool.as_ref().unwrap()),
                );
                AfterAnswer::feedback("seen")
            })
            .for_tools(["add"]),
        )
        .build()
        .unwrap()
}

/// What a call of a tool no hook watches leaves in the log: one permission
/// check, right before the body.
const UNWATCHED: [&str; 2] = [r#"permission {"a":2,"b":3}"#, "body"];
/// What a call of the watched tool leaves: the general order.
const WATCHED: [&str; 5] = [
    r#"permission {"a":2,"b":3}"#,
    "tool.before add",
    r#"permission {"a":2,"b":3}"#,
    "body",
    "tool.after add",
];

#[tokio::test]
async fn hooks_filtered_to_one_tool_leave_the_others_alone() {
    let log: Log = Arc::default();
    let executor = add_watched(&log);
    let cx = cx(&log);

    let product = finished(
        executor
            .execute_one(
                ToolUseBlock::new("m", "multiply", json!({"a": 2, "b": 3})),
                &cx,
            )
            .await,
    );
    assert_eq!(product.text_content(), "6");
    assert_eq!(std::mem::take(&mut *log.lock().unwrap()), UNWATCHED);

    let sum = finished(
        executor
            .execute_one(ToolUseBlock::new("a", "add", json!({"a": 2, "b": 3})), &cx)
            .await,
    );
    assert_eq!(sum.text_content(), "5\n[Hook feedback]\nseen");
    assert_eq!(*log.lock().unwrap(), WATCHED);
}

#[tokio::test]
async fn batches_take_the_same_routes() {
    let log: Log = Arc::default();
    let executor = add_watched(&log);
    let cx = cx(&log);
    // Neither tool is concurrency-safe, so the calls run one after another
    // and the log keeps their order.
    let outcomes = executor
        .execute_batch(
            vec![
                ToolUseBlock::new("m", "multiply", json!({"a": 2, "b": 3})),
                ToolUseBlock::new("a", "add", json!({"a": 2, "b": 3})),
                ToolUseBlock::new("m", "multiply", json!({"a": 2, "b": 3})),
            ],
            &cx,
        )
        .await;
    let texts: Vec<String> = outcomes
        .into_iter()
        .map(|o| finished(o).text_content())
        .collect();
    assert_eq!(texts[0], "6");
    assert_eq!(texts[1], "5\n[Hook feedback]\nseen");
    assert!(
        texts[2].contains("already used in this run"),
        "a repeated call id is refused for an unwatched tool too: {}",
        texts[2]
    );
    let expected: Vec<&str> = UNWATCHED
        .iter()
        .chain(WATCHED.iter())
        .chain([r#"permission {"a":2,"b":3}"#].iter())
        .copied()
        .collect();
    assert_eq!(*log.lock().unwrap(), expected);
}
