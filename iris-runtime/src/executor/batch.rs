//! Batches: adjacent read-only, concurrency-safe calls run together.

use std::sync::Arc;

use futures_util::stream::{self, StreamExt as _};
use iris_core::{ParsedArgs, ToolContext, ToolResult, ToolUseBlock};
use tracing::Instrument as _;

use super::call::{Call, Unresolved};
use super::{ToolExecutor, ToolOutcome};
use crate::journal::{Journaled, StepClaims};

/// A call of the batch after resolve and parse, which decide its window.
enum Entry<'r> {
    Parsed(Call<'r>, ParsedArgs),
    /// Its input did not parse: only finish is left.
    Invalid(Call<'r>, ToolResult),
    Unresolved(Unresolved),
}

pub(super) async fn execute_batch(
    executor: &ToolExecutor,
    calls: Vec<ToolUseBlock>,
    cx: &ToolContext,
) -> Vec<ToolOutcome> {
    let limit = executor.inner.config.max_concurrency;
    // One snapshot for the whole batch: its calls borrow their tools from
    // it, and a registry swapped meanwhile does not pull them away.
    let registry = executor.inner.registry.snapshot();
    // Each call is parsed once, here; the tool's answer for these arguments
    // decides whether it may share a window.
    let entries: Vec<Entry<'_>> = calls
        .into_iter()
        .map(
            |block| match Call::resolve(&registry, block, cx, executor.clock()) {
                Ok(call) => match call.parse() {
                    Ok(args) => Entry::Parsed(call, args),
                    Err(invalid) => Entry::Invalid(call, invalid),
                },
                Err(unresolved) => Entry::Unresolved(unresolved),
            },
        )
        .collect();
    // A journal that keeps steps whole claims the step's calls in one entry
    // (when the first of them reaches its body) and records their results
    // in one after the last.
    let step = step_claims(&entries, cx)
        .map(|(journal, ids)| Arc::new(StepClaims::new(journal, cx.run_id().clone(), ids)));
    let step_cx;
    let cx = match &step {
        Some(claims) => {
            step_cx = cx.with_extension(Arc::clone(claims));
            &step_cx
        }
        None => cx,
    };
    let mut outcomes = Vec::with_capacity(entries.len());
    let mut window: Vec<Entry<'_>> = Vec::new();
    for entry in entries {
        if shares_window(&entry) {
            window.push(entry);
            continue;
        }
        outcomes.extend(run_window(executor, std::mem::take(&mut window), cx, limit).await);
        outcomes.push(run_entry(executor, entry, cx).await);
    }
    outcomes.extend(run_window(executor, window, cx, limit).await);
    if let Some(claims) = step {
        claims.record().await;
    }
    outcomes
}

/// The ids of the calls of the batch that may not run twice, to claim in
/// one entry, when the run's journal keeps steps whole and there is one.
/// Not async: the entries are not `Sync`, and a future holding a reference
/// to them across an await would not be `Send`.
fn step_claims(entries: &[Entry<'_>], cx: &ToolContext) -> Option<(Journaled, Vec<String>)> {
    let journal = cx.extension::<Journaled>()?;
    if !journal.0.by_step() {
        return None;
    }
    let mut ids: Vec<String> = Vec::new();
    for entry in entries {
        if let Entry::Parsed(call, _) = entry
            && let Some(id) = call.step_claim(cx)
            && !ids.iter().any(|known| known == id)
        {
            ids.push(id.to_owned());
        }
    }
    (!ids.is_empty()).then(|| (journal.clone(), ids))
}

/// Calls that failed to resolve or parse have no side effect, so they never
/// split a window.
fn shares_window(entry: &Entry<'_>) -> bool {
    match entry {
        Entry::Parsed(_, args) => args.is_read_only() && args.is_concurrency_safe(),
        Entry::Invalid(..) | Entry::Unresolved(_) => true,
    }
}

async fn run_window(
    executor: &ToolExecutor,
    window: Vec<Entry<'_>>,
    cx: &ToolContext,
    limit: usize,
) -> Vec<ToolOutcome> {
    match window.len() {
        0 => Vec::new(),
        1 => {
            let mut outcomes = Vec::with_capacity(1);
            for entry in window {
                outcomes.push(run_entry(executor, entry, cx).await);
            }
            outcomes
        }
        _ => {
            // The futures are made here, not by a closure inside the
            // stream: a closure over `Entry<'_>` kept in the batch's state
            // makes rustc unable to prove the whole future `Send` for every
            // lifetime, and a host could not `tokio::spawn` a batch or a run.
            let calls: Vec<_> = window
                .into_iter()
                .map(|entry| run_entry(executor, entry, cx))
                .collect();
            stream::iter(calls).buffered(limit).collect().await
        }
    }
}

/// A parsed call enters the stages at admit.
async fn run_entry(executor: &ToolExecutor, entry: Entry<'_>, cx: &ToolContext) -> ToolOutcome {
    match entry {
        Entry::Parsed(call, args) => {
            let span = call.span();
            let reached = call.run(executor, args, cx).instrument(span.clone()).await;
            let outcome = call.conclude(executor, reached, cx);
            super::span::ended(&span, &outcome);
            outcome
        }
        Entry::Invalid(call, invalid) => call.finish(executor, invalid, cx),
        Entry::Unresolved(unresolved) => unresolved.finish(executor, cx),
    }
}
