//! An approval runs exactly the call that was shown: call ids reused while a
//! call waits, the same provider id in two runs, resumes in the wrong run or
//! after the tool was withdrawn, finished runs, and the bound and expiry of
//! waiting calls.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use iris::RuntimeError;
use iris::definition::ToolName;
use iris::permissions::ApprovalRequest;
use iris::{
    ApprovalDecision, Rule, RulePolicy, RunId, State, ToolContext, ToolErrorKind, ToolExecutor,
    ToolOutcome, ToolRegistry, ToolUseBlock,
};
use serde_json::json;

/// What ran, in order.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Log {
    fn push(&self, entry: String) {
        self.0.lock().unwrap().push(entry);
    }

    fn snapshot(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    fn entries(cx: &ToolContext) -> Vec<String> {
        cx.state::<Log>().unwrap().snapshot()
    }
}

/// Archive a folder.
#[iris::tool(write)]
fn archive_folder(
    /// The folder.
    path: String,
    #[state] log: State<Log>,
) -> String {
    log.push(format!("ARCHIVED {path}"));
    format!("ARCHIVED {path}")
}

/// Delete a folder.
#[iris::tool(write)]
fn delete_folder(
    /// The folder.
    path: String,
    #[state] log: State<Log>,
) -> String {
    log.push(format!("DELETED {path}"));
    format!("DELETED {path}")
}

fn executor(
    configure: impl FnOnce(iris::executor::ToolExecutorBuilder) -> iris::executor::ToolExecutorBuilder,
) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry.register(ArchiveFolder).unwrap();
    registry.register(DeleteFolder).unwrap();
    configure(ToolExecutor::builder(registry).policy(RulePolicy::new().write(Rule::Ask)))
        .build()
        .unwrap()
}

fn cx(run: &str) -> ToolContext {
    ToolContext::builder(".", RunId::new(run))
        .state(Log::default())
        .build()
}

fn call(id: &str, tool: &str) -> ToolUseBlock {
    ToolUseBlock::new(id, tool, json!({"path": "/prod"}))
}

fn waiting(outcome: &ToolOutcome) -> ApprovalRequest {
    match outcome {
        ToolOutcome::Waiting(request) => (**request).clone(),
        finished @ ToolOutcome::Finished { .. } => panic!("expected a pause, got {finished:?}"),
    }
}

fn error_kind(outcome: &ToolOutcome) -> Option<ToolErrorKind> {
    outcome.result().and_then(iris::ToolResult::error_kind)
}

/// The red team's case: two calls of one batch share `dup_1`; the person
/// approves the archive. Before the fix the delete replaced it and ran.
#[tokio::test]
async fn a_reused_id_in_one_batch_never_replaces_the_waiting_call() {
    let executor = executor(|b| b);
    let cx = cx("run-1");
    let outcomes = executor
        .execute_batch(
            vec![
                call("dup_1", "archive_folder"),
                call("dup_1", "delete_folder"),
            ],
            &cx,
        )
        .await;
    let request = waiting(&outcomes[0]);
    assert_eq!(request.tool, "archive_folder");
    assert_eq!(error_kind(&outcomes[1]), Some(ToolErrorKind::DuplicateCall));
    assert_eq!(executor.pending_approvals(), vec![request.clone()]);

    let outcome = executor
        .resume("dup_1", ApprovalDecision::approve(&request), &cx)
        .await
        .unwrap();
    assert_eq!(outcome.result().unwrap().text_content(), "ARCHIVED /prod");
    assert_eq!(Log::entries(&cx), ["ARCHIVED /prod"]);
}

#[tokio::test]
async fn a_reused_id_in_a_later_call_is_refused_whatever_the_policy() {
    let policy = Arc::new(RulePolicy::new().write(Rule::Ask));
    let executor = executor(|b| b.shared_policy(policy.clone()));
    let cx = cx("run-1");
    let request = waiting(
        &executor
            .execute_one(call("dup_1", "archive_folder"), &cx)
            .await,
    );

    let second = executor
        .execute_one(call("dup_1", "delete_folder"), &cx)
        .await;
    assert_eq!(error_kind(&second), Some(ToolErrorKind::DuplicateCall));
    // Even a call the policy allows outright cannot take the waiting id.
    policy.set_tool(ToolName::new("delete_folder").unwrap(), Rule::Allow);
    let third = executor
        .execute_one(call("dup_1", "delete_folder"), &cx)
        .await;
    assert_eq!(error_kind(&third), Some(ToolErrorKind::DuplicateCall));
    assert!(Log::entries(&cx).is_empty());

    let outcome = executor
        .resume("dup_1", ApprovalDecision::approve(&request), &cx)
        .await
        .unwrap();
    assert_eq!(outcome.result().unwrap().text_content(), "ARCHIVED /prod");
    assert_eq!(Log::entries(&cx), ["ARCHIVED /prod"]);
}

/// Two users' runs, both with the provider's `call_0`: each waits on its
/// own, and each person's decision reaches only their own call.
#[tokio::test]
async fn the_same_provider_id_in_two_runs_waits_twice() {
    let executor = executor(|b| b);
    let (alice, bob) = (cx("alice"), cx("bob"));
    let alice_request = waiting(
        &executor
            .execute_one(call("call_0", "archive_folder"), &alice)
            .await,
    );
    let bob_request = waiting(
        &executor
            .execute_one(call("call_0", "delete_folder"), &bob)
            .await,
    );
    assert_eq!(executor.pending_approvals().len(), 2);
    assert_ne!(alice_request.approval_id, bob_request.approval_id);

    // Alice's approval presented in Bob's run approves nothing.
    let crossed = executor
        .resume("call_0", ApprovalDecision::approve(&alice_request), &bob)
        .await;
    assert!(
        matches!(crossed, Err(RuntimeError::ApprovalMismatch { .. })),
        "{crossed:?}"
    );

    let denied = executor
        .resume("call_0", ApprovalDecision::deny("not today"), &bob)
        .await
        .unwrap();
    assert_eq!(error_kind(&denied), Some(ToolErrorKind::PermissionDenied));
    let approved = executor
        .resume("call_0", ApprovalDecision::approve(&alice_request), &alice)
        .await
        .unwrap();
    assert_eq!(approved.result().unwrap().text_content(), "ARCHIVED /prod");
    assert_eq!(Log::entries(&alice), ["ARCHIVED /prod"]);
    assert!(Log::entries(&bob).is_empty());
}

#[tokio::test]
async fn a_resume_where_the_tool_is_no_longer_offered_does_not_run_it() {
    let executor = executor(|b| b);
    let cx = cx("run-1");
    let request = waiting(&executor.execute_one(call("c1", "delete_folder"), &cx).await);
    let narrowed = ToolContext::builder(".", RunId::new("run-1"))
        .state(Log::default())
        .offered([ToolName::new("archive_folder").unwrap()])
        .build();
    let outcome = executor
        .resume("c1", ApprovalDecision::approve(&request), &narrowed)
        .await
        .unwrap();
    assert_eq!(error_kind(&outcome), Some(ToolErrorKind::ToolNotAvailable));
    assert!(Log::entries(&narrowed).is_empty());
}

#[tokio::test]
async fn finishing_a_run_drops_its_waiting_calls() {
    let executor = executor(|b| b);
    let (run, other) = (cx("run-1"), cx("run-2"));
    let request = waiting(
        &executor
            .execute_one(call("c1", "delete_folder"), &run)
            .await,
    );
    waiting(
        &executor
            .execute_one(call("c1", "delete_folder"), &other)
            .await,
    );
    executor.finish_run(&run).await;
    assert_eq!(executor.pending_approvals().len(), 1, "run-2 still waits");
    let late = executor
        .resume("c1", ApprovalDecision::approve(&request), &run)
        .await;
    assert!(matches!(late, Err(RuntimeError::NoPendingApproval { .. })));
    assert!(Log::entries(&run).is_empty());
}

#[tokio::test]
async fn waiting_calls_expire() {
    let executor = executor(|b| b.approval_ttl(Duration::from_millis(20)));
    let cx = cx("run-1");
    let request = waiting(&executor.execute_one(call("c1", "delete_folder"), &cx).await);
    tokio::time::sleep(Duration::from_millis(40)).await;
    assert!(executor.pending_approvals().is_empty());
    let late = executor
        .resume("c1", ApprovalDecision::approve(&request), &cx)
        .await;
    assert!(matches!(late, Err(RuntimeError::NoPendingApproval { .. })));
    assert!(Log::entries(&cx).is_empty());
}

/// 100,000 calls that wait and are never resumed, in runs that never
/// finish: the executor holds at most its bound, and refuses the rest with
/// a message the model reads.
#[tokio::test]
async fn never_resumed_approvals_stay_within_the_bound() {
    let executor = executor(|b| b.max_pending_approvals(1_000));
    let mut refused = 0;
    for i in 0..100_000 {
        let cx = cx(&format!("run-{}", i % 97));
        let outcome = executor
            .execute_one(call(&format!("c{i}"), "delete_folder"), &cx)
            .await;
        if let Some(result) = outcome.result() {
            assert_eq!(result.error_kind(), Some(ToolErrorKind::PermissionDenied));
            assert!(result.text_content().contains("already wait"), "{result:?}");
            refused += 1;
        }
    }
    assert_eq!(executor.pending_approvals().len(), 1_000);
    assert_eq!(refused, 99_000);
}

/// One model answer with 40,004 calls that all need a person: the run gets
/// its share of the store, and another run's call still waits for its
/// decision instead of being refused.
#[tokio::test]
async fn one_run_cannot_fill_the_approval_store() {
    let executor = executor(|b| b.max_pending_approvals(1_000));
    let flood = cx("flooding-run");
    let calls: Vec<_> = (0..40_004)
        .map(|i| call(&format!("f{i}"), "delete_folder"))
        .collect();
    let outcomes = executor.execute_batch(calls, &flood).await;
    let waiting = outcomes.iter().filter(|o| o.approval().is_some()).count();
    assert_eq!(
        waiting,
        iris::executor::DEFAULT_MAX_PENDING_APPROVALS_PER_RUN
    );
    let refused = outcomes
        .iter()
        .filter_map(ToolOutcome::result)
        .find(|r| r.error_kind() == Some(ToolErrorKind::PermissionDenied))
        .expect("the calls past the run's share are refused");
    assert!(
        refused
            .text_content()
            .contains("calls of this run already wait"),
        "{refused:?}"
    );

    let other = cx("another-run");
    let outcome = executor
        .execute_one(call("c1", "delete_folder"), &other)
        .await;
    assert!(outcome.approval().is_some(), "{outcome:?}");
}

/// A call approved while its run waited in another process runs here
/// straight from the approval: it is never parked, so a full table of
/// waiting calls does not refuse it (finding: the resume parked the call
/// again and took a place among them), and a call whose request is not
/// the one approved never runs.
#[tokio::test]
async fn an_approval_from_another_process_runs_its_call_without_waiting_again() {
    let first = executor(|b| b);
    let request = waiting(
        &first
            .execute_one(call("c1", "archive_folder"), &cx("run-1"))
            .await,
    );

    // Another process, whose one place for a waiting call is taken.
    let second = executor(|b| b.max_pending_approvals(1));
    let run = cx("run-1");
    let other = waiting(
        &second
            .execute_one(call("c9", "delete_folder"), &cx("run-9"))
            .await,
    );
    let outcome = second
        .execute_approved(call("c1", "archive_folder"), &request.approval_id, &run)
        .await
        .expect("the request is the one approved");
    assert_eq!(
        outcome.result().map(iris::ToolResult::text_content),
        Some("ARCHIVED /prod".to_owned())
    );
    assert_eq!(Log::entries(&run), ["ARCHIVED /prod"]);
    assert_eq!(
        second.pending_approvals(),
        vec![other],
        "nothing else waits"
    );

    // The approval ran its call once: its id is taken in this run.
    let again = second
        .execute_approved(call("c1", "archive_folder"), &request.approval_id, &run)
        .await
        .expect("the same request");
    assert_eq!(error_kind(&again), Some(ToolErrorKind::DuplicateCall));

    // Another tool, or other arguments, under the approved id: refused,
    // and nothing runs.
    let swapped = second
        .execute_approved(
            call("c1", "delete_folder"),
            &request.approval_id,
            &cx("run-1"),
        )
        .await;
    assert!(matches!(
        swapped,
        Err(RuntimeError::ApprovalMismatch { .. })
    ));
    let fresh = cx("run-1");
    let moved = second
        .execute_approved(
            ToolUseBlock::new("c1", "archive_folder", json!({"path": "/home"})),
            &request.approval_id,
            &fresh,
        )
        .await;
    assert!(matches!(moved, Err(RuntimeError::ApprovalMismatch { .. })));
    assert!(Log::entries(&fresh).is_empty());
}
