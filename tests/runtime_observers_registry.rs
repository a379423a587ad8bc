//! Observers never block or change results; the registry refuses collisions
//! and views narrow what a request offers.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use iris::RuntimeError;
use iris::definition::{Capability, Exposure};
use iris::observe::{RunEvent, RunEventObserver};
use iris::{RunId, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};
use serde_json::json;

/// Return the square of an integer.
#[iris::tool(read_only, aliases = ["sq"])]
fn square(
    /// The integer.
    value: i64,
) -> i64 {
    value * value
}

/// Another tool that wants the name `sq`.
#[iris::tool(read_only, name = "sq", description = "Square root.")]
fn square_root(
    /// The number.
    value: f64,
) -> f64 {
    value.sqrt()
}

/// Look something up, found through search only.
#[iris::tool(read_only, deferred)]
fn lookup(
    /// The key.
    key: String,
) -> String {
    key
}

/// Blocks on every event until the test lets it go.
struct Stuck(Mutex<Receiver<()>>);

impl RunEventObserver for Stuck {
    fn on_event(&self, _: &RunEvent) {
        let gate = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = gate.recv();
    }
}

struct Panicky;

impl RunEventObserver for Panicky {
    fn on_event(&self, _: &RunEvent) {
        panic!("observer bug");
    }
}

struct Collect(Arc<Mutex<Vec<String>>>);

impl RunEventObserver for Collect {
    fn on_event(&self, event: &RunEvent) {
        let name = serde_json::to_value(event).unwrap()["event"]
            .as_str()
            .unwrap()
            .to_owned();
        self.0.lock().unwrap().push(name);
    }
}

#[tokio::test]
async fn stuck_and_panicking_observers_change_nothing() {
    let mut registry = ToolRegistry::new();
    registry.register(Square).unwrap();
    let (release, gate) = channel();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let executor = ToolExecutor::builder(registry)
        .observer(Stuck(Mutex::new(gate)))
        .observer(Panicky)
        .observer(Collect(Arc::clone(&seen)))
        .build()
        .unwrap();
    let cx = ToolContext::builder(".", RunId::new("run")).build();
    executor.start_run(&cx).await;
    // If delivery waited for the stuck observer, these calls would never finish.
    for i in 0..20 {
        let outcome = executor
            .execute_one(
                ToolUseBlock::new(format!("c{i}"), "square", json!({"value": i})),
                &cx,
            )
            .await;
        assert_eq!(
            outcome.result().unwrap().text_content(),
            (i * i).to_string()
        );
    }
    executor.finish_run(&cx).await;
    drop(release);

    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let stats = executor.observer_stats();
        if stats[1].panicked == 42 && seen.lock().unwrap().len() == 42 {
            assert_eq!(stats[1].delivered, 0);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "observers did not catch up: {stats:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.first().map(String::as_str), Some("run_started"));
    assert_eq!(seen[1..3], ["tool_started", "tool_finished"]);
    assert_eq!(seen.last().map(String::as_str), Some("run_finished"));
}

#[test]
fn collisions_name_both_tools() {
    let mut registry = ToolRegistry::new();
    registry.register(Square).unwrap();
    let err = registry.register(SquareRoot).err().unwrap();
    assert!(matches!(&err, RuntimeError::NameCollision { name, .. } if name == "sq"));
    let message = err.to_string();
    assert!(
        message.contains("`square`") && message.contains("`sq`"),
        "{message}"
    );
    // Both Rust items are named, so two tools called alike can be told apart.
    assert!(
        message.contains("runtime_observers_registry::Square`")
            && message.contains("runtime_observers_registry::SquareRoot`"),
        "{message}"
    );
    assert_eq!(
        registry.len(),
        1,
        "the refused tool was not half-registered"
    );
    assert_eq!(
        registry.resolve("sq").unwrap().definition_dyn().name(),
        "square"
    );
}

#[test]
fn views_filter_what_a_request_offers() {
    let mut registry = ToolRegistry::new();
    registry.register(Square).unwrap().register(Lookup).unwrap();
    let registry = Arc::new(registry);
    let eager = registry.view().exposure(Exposure::Eager);
    assert_eq!(eager.offered(), ["square"]);
    assert_eq!(eager.specs()[0].name(), "square");
    let deferred = registry.view().exposure(Exposure::Deferred);
    assert_eq!(deferred.offered(), ["lookup"]);
    let read_only = registry
        .view()
        .capability(Capability::ReadOnly)
        .names(["lookup"]);
    assert_eq!(read_only.offered(), ["lookup"]);
    let none = registry
        .view()
        .filter(|d| d.description().contains("nothing like this"));
    assert!(none.offered().is_empty());
}

/// Keeps every event as JSON.
struct Record(Arc<Mutex<Vec<serde_json::Value>>>);

impl RunEventObserver for Record {
    fn on_event(&self, event: &RunEvent) {
        let mut event = serde_json::to_value(event).unwrap();
        // Durations differ from run to run.
        event.as_object_mut().unwrap().remove("elapsed");
        self.0.lock().unwrap().push(event);
    }
}

/// The events of `calls` on an executor with or without a hook watching
/// `square`: hooks change the path a call takes, never the call's events;
/// observers also hear each hook that fired.
async fn events_of(
    calls: &[(&str, serde_json::Value)],
    expected: u64,
    hooked: bool,
) -> Vec<serde_json::Value> {
    let mut registry = ToolRegistry::new();
    registry.register(Square).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut builder = ToolExecutor::builder(registry).observer(Record(Arc::clone(&seen)));
    if hooked {
        builder = builder.hook(iris::hooks::HookRegistration::before(
            "watch",
            |_: &iris::hooks::HookInput| iris::hooks::BeforeAnswer::Allow,
        ));
    }
    let executor = builder.build().unwrap();
    let cx = ToolContext::builder(".", RunId::new("run")).build();
    for (id, input) in calls {
        executor
            .execute_one(ToolUseBlock::new(*id, "square", input.clone()), &cx)
            .await;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while executor.observer_stats()[0].delivered < expected {
        assert!(Instant::now() < deadline, "events were not delivered");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    seen.lock().unwrap().clone()
}

#[tokio::test]
async fn observers_see_the_same_events_with_or_without_stages() {
    // A good call (started, finished), a call that does not parse and a
    // repeated id (finished only).
    let calls = [
        ("c1", json!({"value": 3})),
        ("c2", json!({"value": "three"})),
        ("c1", json!({"value": 3})),
    ];
    let unstaged = events_of(&calls, 4, false).await;
    // The hook fires for each call that reaches it (the good one and the
    // repeated id, which is refused after it): two more events.
    let staged = events_of(&calls, 6, true).await;
    assert_eq!(unstaged.len(), 4, "{unstaged:#?}");
    let (hooks, calls_seen): (Vec<_>, Vec<_>) = staged
        .into_iter()
        .partition(|event| event["event"] == "hook_fired");
    assert_eq!(unstaged, calls_seen);
    assert_eq!(hooks.len(), 2, "{hooks:#?}");
    for hook in &hooks {
        assert_eq!(hook["hook"], "watch");
        assert_eq!(hook["call_id"], "c1");
        assert_eq!(hook["outcome"]["outcome"], "allowed");
    }
    // The name resolved, so observers learn which tool got bad input.
    assert_eq!(unstaged[2]["tool"], "square", "{:#}", unstaged[2]);
}

#[test]
fn built_in_file_tools_say_so() {
    let mut registry = ToolRegistry::new();
    iris::fs::register_file_tools(&mut registry).unwrap();
    for name in ["read_file", "write_file", "edit_file"] {
        let tool = registry.resolve(name).unwrap();
        assert_eq!(
            tool.definition_dyn().origin(),
            &iris::definition::ToolOrigin::BuiltIn,
            "{name}"
        );
        assert!(tool.rust_item().ends_with(&format!(
            "::{}",
            name.split('_')
                .map(|w| w[..1].to_uppercase() + &w[1..])
                .collect::<String>()
        )));
    }
}
