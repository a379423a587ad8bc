//! A long-lived host whose runs never call `finish_run` holds a bounded
//! amount of state: executed call ids, file observations and waiting
//! approvals each stop growing at their limit.
#![allow(
    clippy::unwrap_used,
    clippy::cast_precision_loss,
    reason = "tests fail loudly on a broken machine"
)]

#[path = "../benches/support/heap.rs"]
#[allow(dead_code, reason = "the test uses part of it")]
mod heap;

use std::sync::Arc;

use iris::fs::{FileService, register_file_tools};
use iris::{Rule, RulePolicy, RunId, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};
use serde_json::json;

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

/// Delete a note (asks first).
#[iris::tool(write)]
fn delete_note(
    /// The note.
    id: String,
) -> String {
    id
}

#[tokio::test]
async fn twenty_thousand_runs_that_never_finish_stay_within_a_fixed_bound() {
    let temp = tempfile::tempdir().unwrap();
    std::fs::write(temp.path().join("notes.txt"), "one\ntwo\n").unwrap();
    let mut registry = ToolRegistry::new();
    register_file_tools(&mut registry).unwrap();
    registry.register(DeleteNote).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Ask))
        .max_runs(2_000)
        .max_pending_approvals(500)
        .build()
        .unwrap();
    let files = Arc::new(
        FileService::open(temp.path())
            .unwrap()
            .with_ledger(Arc::clone(executor.ledger())),
    );

    let mut live_at = Vec::new();
    for i in 0..20_000 {
        let cx = ToolContext::builder(temp.path(), RunId::new(format!("run-{i}")))
            .shared_state(Arc::clone(&files))
            .build();
        let read = executor
            .execute_one(
                ToolUseBlock::new("call_0", "read_file", json!({"path": "notes.txt"})),
                &cx,
            )
            .await;
        assert!(!read.result().unwrap().is_error());
        // Waits for approval, never resumed.
        executor
            .execute_one(
                ToolUseBlock::new("call_1", "delete_note", json!({"id": i.to_string()})),
                &cx,
            )
            .await;
        if i % 2_000 == 1_999 {
            live_at.push(heap::live());
        }
    }
    // Every limit is reached within the first runs, and the tables' own
    // capacity settles soon after; from then on the heap holds steady.
    let settled = live_at[4] as f64;
    for (i, live) in live_at.iter().enumerate().skip(5) {
        let growth = *live as f64 / settled;
        assert!(
            growth < 1.02,
            "live heap after {} runs is {live} bytes, {growth:.3}x the {settled} after 10,000: {live_at:?}",
            (i + 1) * 2_000
        );
    }
    assert!(live_at[9] < 16 << 20, "{live_at:?}");
    assert_eq!(executor.pending_approvals().len(), 500);
}
