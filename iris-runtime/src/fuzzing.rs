//! Harnesses for fuzzing this crate's parsers (see `iris_core::fuzzing`).
//! Not a public API.
#![allow(
    clippy::panic,
    reason = "a harness reports a broken property by panicking, as the fuzzer expects"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use iris_core::{
    Capability, DynamicTool, RunId, ToolContext, ToolDefinition, ToolErrorKind, ToolName,
    ToolResult, ToolUseBlock,
};

use crate::hooks::answer::wire;
use crate::hooks::{AfterAnswer, BeforeAnswer, HookInput, HookRegistration};
use crate::{ToolExecutor, ToolRegistry};

/// A command hook's answer `data`, for each event. Properties: every
/// answer parses to an answer or a failure, the same one each time; a
/// `tool.before` answer that fails or denies refuses the call, and one that
/// allows lets it run, once; a `tool.after` answer never changes the
/// result, only adds feedback; `model.before` and `model.after` answers
/// parse the same each time, and a steer always changes something.
///
/// # Panics
/// When a property does not hold: a finding.
pub fn hook_answers(data: &[u8]) {
    let shown = |answer: Result<String, String>| answer;
    let before = || {
        shown(
            wire::before(data)
                .map(|a| format!("{a:?}"))
                .map_err(|e| e.summary()),
        )
    };
    let after = || {
        shown(
            wire::after(data)
                .map(|a| format!("{a:?}"))
                .map_err(|e| e.summary()),
        )
    };
    let run = || {
        shown(
            wire::run(data)
                .map(|()| String::new())
                .map_err(|e| e.summary()),
        )
    };
    assert_eq!(
        before(),
        before(),
        "tool.before answers differ for the same bytes"
    );
    let model_before = || {
        shown(
            wire::model_before(data)
                .map(|a| format!("{a:?}"))
                .map_err(|e| e.summary()),
        )
    };
    let model_after = || {
        shown(
            wire::model_after(data)
                .map(|a| format!("{a:?}"))
                .map_err(|e| e.summary()),
        )
    };
    assert_eq!(
        model_before(),
        model_before(),
        "model.before answers differ for the same bytes"
    );
    assert_eq!(
        model_after(),
        model_after(),
        "model.after answers differ for the same bytes"
    );
    // A steer always changes something; `{}` sends the request as it is.
    if let Ok(crate::hooks::ModelBeforeAnswer::Steer(steer)) = wire::model_before(data) {
        assert!(!steer.is_empty(), "an empty steer: {steer:?}");
    }
    assert_eq!(
        after(),
        after(),
        "tool.after answers differ for the same bytes"
    );
    assert_eq!(run(), run(), "run answers differ for the same bytes");

    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(decides(data.to_vec()));
}

/// The answer as a real executor takes it, from hooks on a real call.
async fn decides(data: Vec<u8>) {
    let ran = Arc::new(AtomicUsize::new(0));
    let Ok(name) = ToolName::new("probe") else {
        return;
    };
    let Ok(definition) = ToolDefinition::builder(name, "Count a call.")
        .capability(Capability::ReadOnly)
        .build()
    else {
        return;
    };
    let counter = Arc::clone(&ran);
    let tool = DynamicTool::new(definition, move |_, _| {
        let counter = Arc::clone(&counter);
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            ToolResult::text("probed")
        }
    });
    let mut registry = ToolRegistry::new();
    if registry.register(tool).is_err() {
        return;
    }
    let before_data = data.clone();
    let after_data = data.clone();
    let Ok(executor) = ToolExecutor::builder(registry)
        .hook(HookRegistration::before(
            "fuzzed_before",
            move |_: &HookInput| wire::before(&before_data),
        ))
        .hook(HookRegistration::after(
            "fuzzed_after",
            move |_: &HookInput| wire::after(&after_data),
        ))
        .build()
    else {
        panic!("an executor with two hooks builds");
    };
    let cx = ToolContext::builder(".", RunId::new("fuzz")).build();
    let outcome = executor
        .execute_one(ToolUseBlock::new("c1", "probe", serde_json::json!({})), &cx)
        .await;
    let Some(result) = outcome.result() else {
        panic!("a read-only call never waits for approval");
    };
    let runs = ran.load(Ordering::SeqCst);
    match wire::before(&data) {
        Ok(BeforeAnswer::Allow) => {
            assert_eq!(runs, 1, "an allowed call runs once");
            assert!(result.text_content().starts_with("probed"), "{result:?}");
            let feedback = matches!(wire::after(&data), Ok(AfterAnswer::Feedback(text)) if !text.trim().is_empty());
            assert_eq!(
                result.text_content().contains("[Hook feedback]"),
                feedback,
                "feedback is added exactly when the after hook gives some: {result:?}"
            );
        }
        Ok(BeforeAnswer::Deny { .. }) | Err(_) => {
            assert_eq!(runs, 0, "a refused call never runs");
            assert_eq!(
                result.error_kind(),
                Some(ToolErrorKind::DeniedByHook),
                "{result:?}"
            );
        }
    }
}
