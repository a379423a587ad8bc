//! Configuration that would silently do nothing is an error when the
//! executor is built: hook filters, deadlines and result limits that name
//! no registered tool. Aliases mean their tool.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use iris::RuntimeError;
use iris::hooks::{BeforeAnswer, HookInput, HookRegistration};
use iris::{RunId, ToolContext, ToolErrorKind, ToolExecutor, ToolRegistry, ToolUseBlock};
use serde_json::json;

/// Return the square of an integer.
#[iris::tool(read_only, aliases = ["sq"])]
fn square(
    /// The integer.
    value: i64,
) -> i64 {
    value * value
}

/// Refund an order.
#[iris::tool(read_only)]
fn issue_refund(
    /// The order.
    order: String,
) -> String {
    order
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(Square).unwrap();
    registry.register(IssueRefund).unwrap();
    registry
}

fn deny_all(name: &str) -> HookRegistration {
    HookRegistration::before(name, |_: &HookInput| BeforeAnswer::deny("no"))
}

fn unknown(result: Result<ToolExecutor, RuntimeError>) -> String {
    match result {
        Err(error @ RuntimeError::UnknownToolName { .. }) => error.to_string(),
        Err(other) => panic!("another error: {other}"),
        Ok(_) => panic!("an executor was built"),
    }
}

#[test]
fn a_misspelt_tool_anywhere_fails_the_build_with_the_closest_name() {
    let hook = deny_all("guard").for_tools(["sqaure"]);
    let message = unknown(ToolExecutor::builder(registry()).hook(hook).build());
    assert!(message.contains("hook `guard`"), "{message}");
    assert!(message.contains("did you mean `square`"), "{message}");

    let message = unknown(
        ToolExecutor::builder(registry())
            .tool_timeout("sqaure", Duration::from_secs(1))
            .build(),
    );
    assert!(message.contains("`tool_timeout`"), "{message}");
    let message = unknown(
        ToolExecutor::builder(registry())
            .tool_max_result_chars("refund", 10)
            .build(),
    );
    assert!(message.contains("did you mean `issue_refund`"), "{message}");
}

#[tokio::test]
async fn an_alias_in_a_filter_means_its_tool() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    let hook = HookRegistration::before("guard", move |_: &HookInput| {
        seen.fetch_add(1, Ordering::SeqCst);
        BeforeAnswer::deny("not today")
    })
    .for_tools(["sq"]);
    let executor = ToolExecutor::builder(registry())
        .hook(hook)
        .tool_max_result_chars("sq", 100)
        .build()
        .unwrap();
    let cx = ToolContext::builder(".", RunId::new("run")).build();
    for name in ["square", "sq"] {
        let outcome = executor
            .execute_one(ToolUseBlock::new(name, name, json!({"value": 3})), &cx)
            .await;
        assert_eq!(
            outcome.result().unwrap().error_kind(),
            Some(ToolErrorKind::DeniedByHook)
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[test]
fn one_tool_set_under_two_of_its_names_is_refused() {
    let result = ToolExecutor::builder(registry())
        .tool_timeout("square", Duration::from_secs(1))
        .tool_timeout("sq", Duration::from_secs(2))
        .build();
    assert!(
        matches!(result, Err(RuntimeError::ToolSetTwice { .. })),
        "{result:?}"
    );
}

#[tokio::test]
async fn unknown_names_suggest_by_shared_words_and_hostile_names_cost_nothing() {
    let executor = ToolExecutor::builder(registry()).build().unwrap();
    let cx = ToolContext::builder(".", RunId::new("run")).build();
    let outcome = executor
        .execute_one(ToolUseBlock::new("c1", "refund", json!({})), &cx)
        .await;
    let text = outcome.result().unwrap().text_content();
    assert!(text.contains("`issue_refund`"), "{text}");

    let huge = "x".repeat(1 << 20);
    let outcome = executor
        .execute_one(ToolUseBlock::new("c2", huge, json!({})), &cx)
        .await;
    let result = outcome.result().unwrap();
    assert_eq!(result.error_kind(), Some(ToolErrorKind::UnknownTool));
    assert!(
        result.text_content().len() < 400,
        "the name is not echoed whole"
    );
}

/// A 10 MiB bad value or unknown key is never echoed whole: the message
/// quotes a short prefix, and the result passes through the result limit.
#[tokio::test]
async fn hostile_arguments_are_not_echoed_whole() {
    let executor = ToolExecutor::builder(registry()).build().unwrap();
    let cx = ToolContext::builder(".", RunId::new("run")).build();
    let huge = "v".repeat(10 << 20);
    for (id, input) in [
        ("bad_value", json!({"value": huge})),
        ("bad_key", json!({"value": 2, huge.clone(): 1})),
    ] {
        let outcome = executor
            .execute_one(ToolUseBlock::new(id, "square", input), &cx)
            .await;
        let result = outcome.result().unwrap();
        assert_eq!(result.error_kind(), Some(ToolErrorKind::InvalidArguments));
        assert!(
            result.text_content().len() < 2_000,
            "{id}: {} characters",
            result.text_content().len()
        );
    }
}

#[test]
fn a_hook_registered_for_an_event_its_code_cannot_answer_fails_the_build() {
    let feedback =
        iris::hooks::Hook::after(|_: &HookInput| iris::hooks::AfterAnswer::feedback("hi"));
    let hook = HookRegistration::new("explain", iris::hooks::HookEvent::ToolBefore, feedback);
    match ToolExecutor::builder(registry()).hook(hook).build() {
        Err(error @ RuntimeError::HookEventMismatch { .. }) => {
            let message = error.to_string();
            assert!(message.contains("hook `explain`"), "{message}");
            assert!(message.contains("`tool.before`"), "{message}");
            assert!(message.contains("answers tool.after"), "{message}");
        }
        Err(other) => panic!("another error: {other}"),
        Ok(_) => panic!("an executor was built"),
    }
}
