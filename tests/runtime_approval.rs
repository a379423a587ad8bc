//! Approval pauses: waiting, approve, deny, stale approvals refused at the
//! gate, and no call id running twice.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use iris::RuntimeError;
use iris::definition::ToolName;
use iris::{
    ApprovalDecision, Rule, RulePolicy, RunId, State, ToolContext, ToolErrorKind, ToolExecutor,
    ToolOutcome, ToolRegistry, ToolUseBlock,
};
use serde_json::json;

/// Write a note to disk.
#[iris::tool(write)]
fn save_note(
    /// The note.
    text: String,
    #[state] writes: State<AtomicUsize>,
) -> String {
    writes.fetch_add(1, Ordering::SeqCst);
    format!("saved: {text}")
}

fn setup() -> (ToolExecutor, Arc<RulePolicy>, ToolContext) {
    let mut registry = ToolRegistry::new();
    registry.register(SaveNote).unwrap();
    let policy = Arc::new(RulePolicy::new().write(Rule::Ask));
    let executor = ToolExecutor::builder(registry)
        .shared_policy(policy.clone())
        .build()
        .unwrap();
    (executor, policy, cx("run-1"))
}

fn cx(run: &str) -> ToolContext {
    ToolContext::builder(".", RunId::new(run))
        .state(AtomicUsize::new(0))
        .build()
}

fn writes(cx: &ToolContext) -> usize {
    cx.state::<AtomicUsize>().unwrap().load(Ordering::SeqCst)
}

async fn ask(
    executor: &ToolExecutor,
    cx: &ToolContext,
    id: &str,
) -> iris::permissions::ApprovalRequest {
    let outcome = executor
        .execute_one(
            ToolUseBlock::new(id, "save_note", json!({"text": "hi"})),
            cx,
        )
        .await;
    match outcome {
        ToolOutcome::Waiting(request) => *request,
        finished @ ToolOutcome::Finished { .. } => {
            panic!("expected a pause for approval, got {finished:?}")
        }
    }
}

#[tokio::test]
async fn waiting_then_approved_runs_once() {
    let (executor, _, cx) = setup();
    let request = ask(&executor, &cx, "c1").await;
    assert_eq!(request.tool, "save_note");
    assert_eq!(request.arguments, json!({"text": "hi"}));
    assert_eq!(
        request.arguments_hash,
        iris::permissions::arguments_hash(&json!({"text": "hi"}))
    );
    assert!(
        request
            .reason
            .as_deref()
            .unwrap()
            .contains("needs approval")
    );
    assert_eq!(writes(&cx), 0, "nothing runs while waiting");
    assert_eq!(executor.pending_approvals().len(), 1);

    let outcome = executor
        .resume("c1", ApprovalDecision::approve(&request), &cx)
        .await
        .unwrap();
    assert_eq!(outcome.result().unwrap().text_content(), "saved: hi");
    assert_eq!(writes(&cx), 1);

    let again = executor
        .resume("c1", ApprovalDecision::approve(&request), &cx)
        .await;
    assert!(matches!(again, Err(RuntimeError::NoPendingApproval { .. })));
    assert_eq!(writes(&cx), 1, "a call id never runs twice");
}

#[tokio::test]
async fn a_denial_reaches_the_model() {
    let (executor, _, cx) = setup();
    ask(&executor, &cx, "c1").await;
    let outcome = executor
        .resume("c1", ApprovalDecision::deny("not in production"), &cx)
        .await
        .unwrap();
    let result = outcome.result().unwrap();
    assert_eq!(result.error_kind(), Some(ToolErrorKind::PermissionDenied));
    assert!(result.text_content().contains("not in production"));
    assert_eq!(writes(&cx), 0);
}

#[tokio::test]
async fn stale_approvals_are_refused_at_the_gate() {
    // The policy changed between the approval and the run.
    let (executor, policy, cx) = setup();
    let request = ask(&executor, &cx, "c1").await;
    policy.set_tool(ToolName::new("save_note").unwrap(), Rule::Deny);
    let outcome = executor
        .resume("c1", ApprovalDecision::approve(&request), &cx)
        .await
        .unwrap();
    let result = outcome.result().unwrap();
    assert_eq!(result.error_kind(), Some(ToolErrorKind::PermissionDenied));
    assert!(
        result.text_content().contains("last check before running"),
        "{result:?}"
    );

    // Resumed in another run: not found there, and not consumed.
    let (executor, _, cx) = setup();
    let request = ask(&executor, &cx, "c2").await;
    let other = self::cx("run-2");
    let wrong_run = executor
        .resume("c2", ApprovalDecision::approve(&request), &other)
        .await;
    assert!(
        matches!(wrong_run, Err(RuntimeError::NoPendingApproval { .. })),
        "{wrong_run:?}"
    );
    assert_eq!(writes(&other), 0);
    assert_eq!(executor.pending_approvals().len(), 1);
    let outcome = executor
        .resume("c2", ApprovalDecision::approve(&request), &cx)
        .await
        .unwrap();
    assert_eq!(outcome.result().unwrap().text_content(), "saved: hi");

    // Approved for another request than the call's: refused, and the call
    // keeps waiting for the right approval.
    let (executor, _, cx) = setup();
    let request = ask(&executor, &cx, "c3").await;
    let forged = ApprovalDecision::Approve {
        approval_id: iris::permissions::arguments_hash(&json!({"text": "something else"})),
    };
    let refused = executor.resume("c3", forged, &cx).await;
    assert!(
        matches!(refused, Err(RuntimeError::ApprovalMismatch { .. })),
        "{refused:?}"
    );
    assert_eq!(writes(&cx), 0);
    let outcome = executor
        .resume("c3", ApprovalDecision::approve(&request), &cx)
        .await
        .unwrap();
    assert_eq!(outcome.result().unwrap().text_content(), "saved: hi");
}

#[tokio::test]
async fn an_allowing_policy_runs_without_asking_and_only_once_per_id() {
    let (executor, policy, cx) = setup();
    policy.set_tool(ToolName::new("save_note").unwrap(), Rule::Allow);
    let block = ToolUseBlock::new("same", "save_note", json!({"text": "hi"}));
    let first = executor.execute_one(block.clone(), &cx).await;
    assert_eq!(first.result().unwrap().text_content(), "saved: hi");
    let second = executor.execute_one(block, &cx).await;
    assert_eq!(
        second.result().unwrap().error_kind(),
        Some(ToolErrorKind::DuplicateCall)
    );
    assert_eq!(writes(&cx), 1);
}

/// With hooks registered the permission stage is no longer also the gate;
/// it pauses, denies and resumes exactly as when nothing watches the call.
#[tokio::test]
async fn the_permission_stage_is_the_same_with_hooks_registered() {
    let before_calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&before_calls);
    let mut registry = ToolRegistry::new();
    registry.register(SaveNote).unwrap();
    let policy = Arc::new(RulePolicy::new().write(Rule::Ask));
    let executor = ToolExecutor::builder(registry)
        .shared_policy(policy.clone())
        .hook(iris::hooks::HookRegistration::before(
            "count",
            move |_: &iris::hooks::HookInput| {
                seen.fetch_add(1, Ordering::SeqCst);
                iris::hooks::BeforeAnswer::Allow
            },
        ))
        .build()
        .unwrap();
    let cx = cx("run-hooks");
    let call = |id: &str| ToolUseBlock::new(id, "save_note", json!({"text": "hi"}));

    let ToolOutcome::Waiting(request) = executor.execute_one(call("c1"), &cx).await else {
        panic!("expected a pause");
    };
    assert_eq!(
        before_calls.load(Ordering::SeqCst),
        0,
        "hooks run after permission"
    );
    let outcome = executor
        .resume(&request.call_id, ApprovalDecision::approve(&request), &cx)
        .await
        .unwrap();
    assert_eq!(outcome.result().unwrap().text_content(), "saved: hi");
    assert_eq!((writes(&cx), before_calls.load(Ordering::SeqCst)), (1, 1));

    policy.set_tool(ToolName::new("save_note").unwrap(), Rule::Deny);
    let denied = executor.execute_one(call("c2"), &cx).await;
    assert_eq!(
        denied.result().unwrap().error_kind(),
        Some(ToolErrorKind::PermissionDenied)
    );
    assert_eq!((writes(&cx), before_calls.load(Ordering::SeqCst)), (1, 1));
}
