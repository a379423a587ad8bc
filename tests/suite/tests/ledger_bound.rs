//! The run ledger keeps a long-lived host within a fixed bound: 20,000
//! runs (ten times what it holds) that each search (a disclosure), keep history for `read_history`
//! and stop at a call waiting for approval, and are never resumed, leave
//! the live heap flat once the ledger is full.
#![allow(
    clippy::expect_used,
    clippy::cast_precision_loss,
    reason = "tests fail loudly on a broken machine"
)]

#[path = "../../../benches/support/heap.rs"]
#[allow(dead_code, reason = "the test uses part of it")]
mod heap;
mod shop;

use std::sync::Arc;

use iris::agent::{Agent, AgentRunner, RunContext, RunOutcome};
use iris::model::ModelResponse;
use iris::serde_json::json;
use iris::testing::FnModel;
use iris::{Rule, RulePolicy, RunId, ToolExecutor, ToolUseBlock};

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

/// Runs the ledger holds.
const MAX_RUNS: usize = 2_000;

/// Searches and looks up a price on the first step, orders on the next;
/// it keeps nothing of what it is asked.
fn shopper() -> FnModel {
    FnModel::new(|request| {
        let calls = if request.messages.len() == 1 {
            vec![
                shop::search(),
                ToolUseBlock::new("p", "price_of", json!({"item": "lamp"})),
            ]
        } else {
            vec![ToolUseBlock::new(
                "o",
                "place_order",
                json!({"item": "lamp"}),
            )]
        };
        Ok(ModelResponse {
            tool_calls: calls,
            ..ModelResponse::default()
        })
    })
    .forgetting_requests()
}

fn agent() -> Agent {
    let executor = ToolExecutor::builder(shop::registry())
        .policy(RulePolicy::new().write(Rule::Ask))
        .max_runs(MAX_RUNS)
        .build()
        .expect("the executor builds");
    shop::agent_with_discovery(executor)
        .results_budget(50_000)
        .build()
        .expect("the agent builds")
}

/// Runs between two looks at the heap: ten looks, the first once the
/// ledger is full.
const CHUNK: usize = 2_000;
/// Tasks that share each chunk: the machine's cores do the runs together,
/// and the heap is read between chunks, when no run is under way.
const WORKERS: usize = 2;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_thousand_runs_abandoned_at_waiting_keep_the_heap_flat() {
    let dir = Arc::new(tempfile::tempdir().expect("a folder"));
    let agent = Arc::new(agent());
    let runner = Arc::new(AgentRunner::new(Arc::clone(&agent), shopper()));
    let mut live_at = Vec::new();
    for chunk in 0..10 {
        let workers: Vec<_> = (0..WORKERS)
            .map(|worker| {
                let runner = Arc::clone(&runner);
                let dir = Arc::clone(&dir);
                tokio::spawn(async move {
                    for n in (worker..CHUNK).step_by(WORKERS) {
                        let i = chunk * CHUNK + n;
                        let cx = RunContext::new(dir.path(), RunId::new(format!("run-{i}")));
                        let outcome = runner.run("Buy a lamp.", &cx).await.expect("runs");
                        let RunOutcome::Waiting(state) = outcome else {
                            panic!("run {i} should wait for the order's approval: {outcome:?}");
                        };
                        assert_eq!(state.disclosed.len(), 1, "run {i} disclosed a tool");
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.await.expect("a worker finishes");
        }
        live_at.push(heap::live());
    }
    assert_eq!(agent.ledger().len(), MAX_RUNS);
    // The ledger fills within the first runs and its tables settle soon
    // after; from then on the heap holds steady.
    let settled = live_at[4] as f64;
    for (i, live) in live_at.iter().enumerate().skip(5) {
        let growth = *live as f64 / settled;
        assert!(
            growth < 1.02,
            "live heap after {} runs is {live} bytes, {growth:.3}x the {settled} after {}: {live_at:?}",
            (i + 1) * CHUNK,
            5 * CHUNK
        );
    }
    assert!(live_at[9] < 32 << 20, "{live_at:?}");
    // Each kept run holds its waiting call, its disclosure and its history.
    assert_eq!(agent.executor().pending_approvals().len(), MAX_RUNS);
}
