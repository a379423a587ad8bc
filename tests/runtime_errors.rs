//! Every error kind the executor hands the model, through the public API.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use iris::Tool;
use iris::definition::{Exposure, ToolName};
use iris::executor::CancellationToken;
use iris::executor::ToolExecutorBuilder;
use iris::{
    RunId, ToolContext, ToolErrorKind, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock,
};
use serde_json::{Value, json};

/// Return the square of an integer.
#[iris::tool(read_only)]
fn square(
    /// The integer.
    value: i64,
) -> i64 {
    value * value
}

/// Search the archive.
#[iris::tool(read_only, deferred)]
fn search_archive(
    /// What to find.
    query: String,
) -> String {
    query
}

/// Delete everything.
#[iris::tool(write)]
fn wipe() -> &'static str {
    "wiped"
}

/// Divide by zero, in a synchronous body.
#[iris::tool(read_only)]
fn explode_sync() -> i64 {
    let zero = std::hint::black_box(0);
    1 / zero
}

/// Panic in an async body.
#[iris::tool(read_only)]
async fn explode_async() -> String {
    tokio::task::yield_now().await;
    panic!("the async body gave up")
}

/// Sleep a long time.
#[iris::tool(read_only)]
async fn slow() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "woke".into()
}

/// Report a failure.
#[iris::tool(read_only)]
fn refuse() -> Result<String, std::io::Error> {
    Err(std::io::Error::other(
        "the disk is full; free some space and try again",
    ))
}

/// A parcel to ship.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Parcel {
    /// Weight in kilograms.
    #[schemars(range(max = 30))]
    weight_kg: f64,
    /// Outer size.
    size: Size,
}

/// Outer size in centimetres.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Size {
    width: u32,
    height: u32,
}

/// Quote the shipping of a parcel.
#[iris::tool(read_only)]
fn ship_parcel(
    /// What to ship.
    parcel: Parcel,
) -> String {
    format!(
        "{} kg, {}x{} cm",
        parcel.weight_kg, parcel.size.width, parcel.size.height
    )
}

fn builder() -> ToolExecutorBuilder {
    let mut registry = ToolRegistry::new();
    registry
        .register(Square)
        .unwrap()
        .register(SearchArchive)
        .unwrap()
        .register(Wipe)
        .unwrap()
        .register(ExplodeSync)
        .unwrap()
        .register(ExplodeAsync)
        .unwrap()
        .register(Slow)
        .unwrap()
        .register(Refuse)
        .unwrap()
        .register(ShipParcel)
        .unwrap();
    ToolExecutor::builder(registry).tool_timeout("slow", Duration::from_millis(50))
}

fn cx() -> ToolContext {
    ToolContext::builder(".", RunId::new("run")).build()
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(0);

/// Runs one call under a fresh call id.
async fn call(executor: &ToolExecutor, cx: &ToolContext, name: &str, input: Value) -> ToolResult {
    let id = format!("call-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
    call_with_id(executor, cx, &id, name, input).await
}

async fn call_with_id(
    executor: &ToolExecutor,
    cx: &ToolContext,
    id: &str,
    name: &str,
    input: Value,
) -> ToolResult {
    executor
        .execute_one(ToolUseBlock::new(id, name, input), cx)
        .await
        .result()
        .cloned()
        .expect("the call finished")
}

#[tokio::test]
async fn unknown_tools_get_close_names() {
    let result = call(
        &builder().build().unwrap(),
        &cx(),
        "sqare",
        json!({"value": 2}),
    )
    .await;
    assert_eq!(result.error_kind(), Some(ToolErrorKind::UnknownTool));
    assert!(
        result.text_content().contains("did you mean `square`"),
        "{result:?}"
    );
}

#[tokio::test]
async fn registered_but_not_offered_is_not_available() {
    let executor = builder().build().unwrap();
    let deferred = call(&executor, &cx(), "search_archive", json!({"query": "x"})).await;
    assert_eq!(deferred.error_kind(), Some(ToolErrorKind::ToolNotAvailable));
    assert_eq!(
        iris::Tool::definition(&SearchArchive).exposure(),
        Exposure::Deferred
    );

    let only_wipe = ToolContext::builder(".", RunId::new("run"))
        .offered([ToolName::new("wipe").unwrap()])
        .build();
    let square = call(&executor, &only_wipe, "square", json!({"value": 2})).await;
    assert_eq!(square.error_kind(), Some(ToolErrorKind::ToolNotAvailable));

    let offered = ToolContext::builder(".", RunId::new("run"))
        .offered([ToolName::new("search_archive").unwrap()])
        .build();
    let found = call(&executor, &offered, "search_archive", json!({"query": "x"})).await;
    assert_eq!(found.text_content(), "x");
}

#[tokio::test]
async fn invalid_arguments_name_the_path_and_input_repairs_are_recorded() {
    let executor = builder().build().unwrap();
    let bad = call(&executor, &cx(), "square", json!({"value": "four"})).await;
    assert_eq!(bad.error_kind(), Some(ToolErrorKind::InvalidArguments));
    assert!(bad.text_content().contains("`$.value`"), "{bad:?}");
    assert!(
        bad.text_content()
            .contains("expected an integer, found the string \"four\""),
        "{bad:?}"
    );

    let null = call(&executor, &cx(), "wipe_free", Value::Null).await;
    assert_eq!(null.error_kind(), Some(ToolErrorKind::UnknownTool));
    let permissive = builder()
        .policy(iris::RulePolicy::new().write(iris::Rule::Allow))
        .build()
        .unwrap();
    let repaired = call(&permissive, &cx(), "wipe", Value::Null).await;
    assert_eq!(repaired.text_content(), "wiped");
    assert_eq!(
        repaired.stats()["input_repairs"],
        json!(["null_as_empty_object"])
    );

    let stringly = call(&executor, &cx(), "square", json!("{\"value\": 3}")).await;
    assert_eq!(stringly.text_content(), "9");
    assert_eq!(
        stringly.stats()["input_repairs"],
        json!(["object_from_json_string"])
    );
}

#[tokio::test]
async fn the_policy_can_deny() {
    let executor = builder()
        .policy(iris::RulePolicy::new().write(iris::Rule::Deny))
        .build()
        .unwrap();
    let denied = call(&executor, &cx(), "wipe", json!({})).await;
    assert_eq!(denied.error_kind(), Some(ToolErrorKind::PermissionDenied));
    assert!(denied.text_content().contains("`wipe`"), "{denied:?}");
}

#[tokio::test]
async fn panics_become_results_in_sync_and_async_bodies() {
    let executor = builder().build().unwrap();
    let sync = call(&executor, &cx(), "explode_sync", json!({})).await;
    assert_eq!(sync.error_kind(), Some(ToolErrorKind::ToolPanicked));
    assert!(sync.text_content().contains("divide by zero"), "{sync:?}");
    let r#async = call(&executor, &cx(), "explode_async", json!({})).await;
    assert_eq!(r#async.error_kind(), Some(ToolErrorKind::ToolPanicked));
    assert!(
        r#async.text_content().contains("the async body gave up"),
        "{async:?}"
    );
}

#[tokio::test]
async fn deadlines_and_cancellation_stop_the_body() {
    let executor = builder().build().unwrap();
    let timed_out = call(&executor, &cx(), "slow", json!({})).await;
    assert_eq!(timed_out.error_kind(), Some(ToolErrorKind::Timeout));

    let token = CancellationToken::new();
    let cancelled_cx = ToolContext::builder(".", RunId::new("run"))
        .extension(token.clone())
        .build();
    let unlimited = builder()
        .tool_timeout("slow", Duration::from_secs(60))
        .build()
        .unwrap();
    let pending = call(&unlimited, &cancelled_cx, "slow", json!({}));
    token.cancel();
    let cancelled = pending.await;
    assert_eq!(cancelled.error_kind(), Some(ToolErrorKind::Cancelled));
}

#[tokio::test]
async fn body_failures_are_execution_errors_and_ids_run_once() {
    let executor = builder().build().unwrap();
    let failed = call(&executor, &cx(), "refuse", json!({})).await;
    assert_eq!(failed.error_kind(), Some(ToolErrorKind::Execution));
    assert_eq!(
        failed.text_content(),
        "the disk is full; free some space and try again"
    );

    let first = call_with_id(&executor, &cx(), "once", "square", json!({"value": 5})).await;
    assert_eq!(first.text_content(), "25");
    let again = call_with_id(&executor, &cx(), "once", "square", json!({"value": 5})).await;
    assert_eq!(again.error_kind(), Some(ToolErrorKind::DuplicateCall));
    let other_run = ToolContext::builder(".", RunId::new("another run")).build();
    let elsewhere =
        call_with_id(&executor, &other_run, "once", "square", json!({"value": 5})).await;
    assert_eq!(elsewhere.text_content(), "25");
}

/// The strict projection tells the model every object is closed: a key a
/// nested type does not know is refused with its path, never dropped.
#[tokio::test]
async fn unknown_keys_are_refused_at_any_depth() {
    let executor = builder().build().unwrap();
    let cx = cx();
    let result = call(
        &executor,
        &cx,
        "ship_parcel",
        json!({"parcel": {"weight_kg": 2.5, "colour": "red", "size": {"width": 10, "height": 20, "depth": 5}}}),
    )
    .await;
    assert_eq!(result.error_kind(), Some(ToolErrorKind::InvalidArguments));
    let text = result.text_content();
    assert!(
        text.contains("at `$.parcel.colour`: unknown field `colour`, expected `weight_kg`, `size`"),
        "{text}"
    );
    assert!(
        text.contains(
            "at `$.parcel.size.depth`: unknown field `depth`, expected `width`, `height`"
        ),
        "{text}"
    );

    let ok = call(
        &executor,
        &cx,
        "ship_parcel",
        json!({"parcel": {"weight_kg": 2.5, "size": {"width": 10, "height": 20}}}),
    )
    .await;
    assert_eq!(ok.text_content(), "2.5 kg, 10x20 cm");
    let schema = ShipParcel.definition().input_schema().clone();
    assert_eq!(schema["$defs"]["Parcel"]["additionalProperties"], false);
    assert_eq!(schema["$defs"]["Size"]["additionalProperties"], false);
}

/// Two faults in one input: each is listed with its own path and what is
/// wrong there, so the model fixes both in one retry.
#[tokio::test]
async fn every_fault_is_listed_with_its_own_path() {
    let executor = builder().build().unwrap();
    let result = call(
        &executor,
        &cx(),
        "ship_parcel",
        json!({"parcel": {"weight_kg": 99, "size": {"width": 10}}}),
    )
    .await;
    assert_eq!(result.error_kind(), Some(ToolErrorKind::InvalidArguments));
    assert_eq!(
        result.text_content(),
        "invalid arguments for `ship_parcel`, 2 problems:\n\
         - at `$.parcel.weight_kg`: 99 is above the maximum 30\n\
         - at `$.parcel.size`: missing field `height`\n\
         fix them all to match the tool's schema and call it again"
    );
    // The parse itself gives the same list, through the public API.
    let error = ShipParcel
        .parse(&json!({"parcel": {"weight_kg": 99, "size": {"width": 10}}}))
        .err()
        .unwrap();
    let faults: Vec<(&str, &str)> = error
        .faults()
        .iter()
        .map(|f| (f.path(), f.message()))
        .collect();
    assert_eq!(
        faults,
        [
            ("$.parcel.weight_kg", "99 is above the maximum 30"),
            ("$.parcel.size", "missing field `height`"),
        ]
    );
}
