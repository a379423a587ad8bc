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
    // A journal that keeps every outcome keeps those of the calls it never
    // claims, a window (or an idempotent call) at a time: a replay runs
    // none of them again.
    let keeper = cx
        .extension::<Journaled>()
        .filter(|journal| journal.0.keeps_every_outcome());
    let mut outcomes = Vec::with_capacity(entries.len());
    let mut window: Vec<Entry<'_>> = Vec::new();
    for entry in entries {
        if shares_window(&entry) {
            window.push(entry);
            continue;
        }
        let before = std::mem::take(&mut window);
        outcomes.extend(kept_window(executor, before, cx, limit, keeper).await);
        match keeper {
            Some(_) if is_never_claimed(&entry) => {
                outcomes.extend(kept_window(executor, vec![entry], cx, 1, keeper).await);
            }
            _ => outcomes.push(run_entry(executor, entry, cx).await),
        }
    }
    outcomes.extend(kept_window(executor, window, cx, limit, keeper).await);
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

/// [`run_window`], its outcomes kept by `keeper` when there is one: run
/// the first time, read back on a replay.
async fn kept_window(
    executor: &ToolExecutor,
    window: Vec<Entry<'_>>,
    cx: &ToolContext,
    limit: usize,
    keeper: Option<&Journaled>,
) -> Vec<ToolOutcome> {
    // Calls that never reach a body (unknown, unparsable) end the same way
    // on every attempt: nothing to keep.
    let bodies = window
        .iter()
        .any(|entry| matches!(entry, Entry::Parsed(..)));
    let Some(journal) = keeper.filter(|_| bodies) else {
        return run_window(executor, window, cx, limit).await;
    };
    let ids: Vec<String> = window.iter().map(|entry| entry.id().to_owned()).collect();
    // Named after its calls, which the runtime names the same on every
    // attempt, and bounded whatever the ids.
    let name = match ids.as_slice() {
        [one] => format!("outcome of {}", iris_core::text::prefix(one, 64)),
        [first, ..] => format!(
            "outcomes of {} and {} more",
            iris_core::text::prefix(first, 64),
            ids.len() - 1
        ),
        [] => String::new(),
    };
    let work = Box::pin(run_window(executor, window, cx, limit));
    match journal.0.keep_outcomes(cx.run_id(), name, work).await {
        Ok(outcomes)
            if outcomes.len() == ids.len()
                && outcomes.iter().zip(&ids).all(|(o, id)| o.call_id() == id) =>
        {
            outcomes
        }
        Ok(_) => {
            let why = crate::journal::JournalError::new(
                "reading kept outcomes",
                "the journal kept outcomes for other calls; was the run's history changed?",
            );
            not_kept(&ids, &why)
        }
        Err(why) => not_kept(&ids, &why),
    }
}

/// The outcomes of calls whose outcomes a journal could not keep or give
/// back: each an error the model reads.
fn not_kept(ids: &[String], why: &crate::journal::JournalError) -> Vec<ToolOutcome> {
    tracing::error!(error = ?why, "the outcomes of calls could not be kept in the run's journal");
    ids.iter()
        .map(|id| ToolOutcome::Finished {
            call_id: id.clone(),
            result: ToolResult::error(
                iris_core::ToolErrorKind::Internal,
                format!("the outcome of this call could not be kept in the run's journal: {why}"),
            ),
        })
        .collect()
}

/// Whether a journal never claims `entry`'s call: it is idempotent (or it
/// never reaches a body at all).
fn is_never_claimed(entry: &Entry<'_>) -> bool {
    match entry {
        Entry::Parsed(call, _) => call.is_idempotent(),
        Entry::Invalid(..) | Entry::Unresolved(_) => true,
    }
}

impl Entry<'_> {
    fn id(&self) -> &str {
        match self {
            Entry::Parsed(call, _) | Entry::Invalid(call, _) => call.id(),
            Entry::Unresolved(unresolved) => unresolved.id(),
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
