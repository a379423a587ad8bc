//! Batches: adjacent read-only, concurrency-safe calls run together.

use std::time::Instant;

use futures_util::stream::{self, StreamExt as _};
use iris_core::{ParsedArgs, ToolContext, ToolUseBlock};

use super::pipeline::{Prepared, Unprepared};
use super::{ToolExecutor, ToolOutcome};

type Call = (Option<Instant>, Result<(Prepared, ParsedArgs), Unprepared>);

pub(super) async fn execute_batch(
    executor: &ToolExecutor,
    calls: Vec<ToolUseBlock>,
    cx: &ToolContext,
) -> Vec<ToolOutcome> {
    let limit = executor.inner.config.max_concurrency;
    // Each call is parsed once, here; the tool's answer for these arguments
    // decides whether it may share a window.
    let prepared: Vec<Call> = calls
        .into_iter()
        .map(|call| (executor.clock(), executor.prepare(call, cx)))
        .collect();
    let mut outcomes = Vec::with_capacity(prepared.len());
    let mut window: Vec<Call> = Vec::new();
    for call in prepared {
        if shares_window(&call) {
            window.push(call);
            continue;
        }
        outcomes.extend(run_window(executor, std::mem::take(&mut window), cx, limit).await);
        outcomes.push(run_call(executor, call, cx).await);
    }
    outcomes.extend(run_window(executor, window, cx, limit).await);
    outcomes
}

/// Calls that failed to resolve or parse have no side effect, so they never
/// split a window.
fn shares_window((_, call): &Call) -> bool {
    match call {
        Ok((_, args)) => args.is_read_only() && args.is_concurrency_safe(),
        Err(_) => true,
    }
}

async fn run_window(
    executor: &ToolExecutor,
    window: Vec<Call>,
    cx: &ToolContext,
    limit: usize,
) -> Vec<ToolOutcome> {
    match window.len() {
        0 => Vec::new(),
        1 => {
            let mut outcomes = Vec::with_capacity(1);
            for call in window {
                outcomes.push(run_call(executor, call, cx).await);
            }
            outcomes
        }
        _ => {
            stream::iter(window)
                .map(|call| run_call(executor, call, cx))
                .buffered(limit)
                .collect()
                .await
        }
    }
}

async fn run_call(executor: &ToolExecutor, (started, call): Call, cx: &ToolContext) -> ToolOutcome {
    match call {
        Ok((prepared, args)) => executor.execute_parsed(prepared, args, cx, started).await,
        Err(unprepared) => executor.finish_unprepared(unprepared, cx, started),
    }
}
