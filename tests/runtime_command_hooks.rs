//! Command hooks with real scripts (see `tests/hooks/`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use iris::hooks::{CommandHook, HookInput};
use iris::hooks::{HookEvent, HookRegistration};
use iris::{
    RunId, ToolContext, ToolErrorKind, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock,
};
use serde_json::json;

/// Shout the text.
#[iris::tool(read_only)]
fn shout(
    /// The text.
    text: String,
) -> String {
    text.to_uppercase()
}

fn script(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/hooks")
        .join(name)
        .display()
        .to_string()
}

fn hook(name: &str, event: HookEvent, extra: &[&str]) -> HookRegistration {
    let mut argv = vec!["sh".to_owned(), script(name)];
    argv.extend(extra.iter().map(|s| (*s).to_owned()));
    let handler = CommandHook::new(name, argv).unwrap();
    HookRegistration::new(name, event, iris::hooks::Hook::command(handler))
        .timeout(Duration::from_millis(1500))
}

async fn run_with(hooks: Vec<HookRegistration>) -> ToolResult {
    let mut registry = ToolRegistry::new();
    registry.register(Shout).unwrap();
    let mut builder = ToolExecutor::builder(registry);
    for hook in hooks {
        builder = builder.hook(hook);
    }
    let cx = ToolContext::builder(".", RunId::new("run-7")).build();
    builder
        .build()
        .unwrap()
        .execute_one(
            ToolUseBlock::new("call-1", "shout", json!({"text": "hi"})),
            &cx,
        )
        .await
        .result()
        .cloned()
        .unwrap()
}

#[tokio::test]
async fn empty_answers_allow_and_denials_refuse() {
    let allowed = run_with(vec![hook("allow.sh", HookEvent::ToolBefore, &[])]).await;
    assert_eq!(allowed.text_content(), "HI");

    let denied = run_with(vec![
        hook("allow.sh", HookEvent::ToolBefore, &[]),
        hook("deny.sh", HookEvent::ToolBefore, &[]),
    ])
    .await;
    assert_eq!(denied.error_kind(), Some(ToolErrorKind::DeniedByHook));
    assert!(
        denied
            .text_content()
            .contains("writes are frozen until Monday")
    );
}

#[tokio::test]
async fn feedback_follows_the_real_result() {
    let result = run_with(vec![hook("feedback.sh", HookEvent::ToolAfter, &[])]).await;
    assert_eq!(result.text_content(), "HI\n[Hook feedback]\nlint passed");
}

#[tokio::test]
async fn before_hooks_fail_closed_naming_the_hook() {
    for (name, expected) in [
        ("garbage.sh", "malformed JSON"),
        ("fail.sh", "exited with exit status: 3"),
        // Feedback is what `tool.after` hooks give: before a call it is a
        // mistake, never silently dropped.
        ("feedback.sh", "a `tool.before` hook answers a decision"),
    ] {
        let result = run_with(vec![hook(name, HookEvent::ToolBefore, &[])]).await;
        assert_eq!(
            result.error_kind(),
            Some(ToolErrorKind::DeniedByHook),
            "{name}"
        );
        let text = result.text_content();
        assert!(
            text.contains(&format!("hook `{name}`")) && text.contains(expected),
            "{text}"
        );
        // What a hook writes to stderr (a token here) is for the host's
        // logs, never for the model.
        assert!(
            !text.contains("sk-test") && !text.contains("config file"),
            "{text}"
        );
    }
}

#[tokio::test]
async fn after_hook_failures_are_recorded_without_feedback() {
    let result = run_with(vec![hook("fail.sh", HookEvent::ToolAfter, &[])]).await;
    assert_eq!(result.text_content(), "HI");
    let failures = result.stats()["hook_failures"].as_array().unwrap();
    let failure = failures[0].as_str().unwrap();
    assert!(failure.contains("exit status: 3"), "{failures:?}");
    assert!(!failure.contains("sk-test"), "{failures:?}");
}

#[tokio::test]
async fn hooks_receive_the_documented_json() {
    let dir = std::env::temp_dir().join(format!("iris-hook-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("event.json");
    let path = file.display().to_string();
    run_with(vec![hook("record.sh", HookEvent::ToolAfter, &[&path])]).await;
    let input: HookInput = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(input.event, HookEvent::ToolAfter);
    assert_eq!(input.run_id, RunId::new("run-7"));
    assert_eq!(input.call_id.as_deref(), Some("call-1"));
    assert_eq!(input.arguments, Some(json!({"text": "hi"})));
    assert_eq!(input.result.unwrap().text, "HI");
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn a_hook_past_its_deadline_is_killed_with_its_children() {
    let dir = std::env::temp_dir().join(format!("iris-sleeper-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pid_file = dir.join("child.pid");
    let path = pid_file.display().to_string();
    let result = run_with(vec![hook("sleeper.sh", HookEvent::ToolBefore, &[&path])]).await;
    assert_eq!(result.error_kind(), Some(ToolErrorKind::DeniedByHook));
    assert!(
        result.text_content().contains("did not answer within"),
        "{result:?}"
    );

    let child = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !crate::support::process_gone(&child) {
        assert!(
            Instant::now() < deadline,
            "the hook's child {child} outlived the hook"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::remove_dir_all(&dir).ok();
}
