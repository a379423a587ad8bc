//! Calls recorded as they run, for runs that outlive their process: before
//! the body of a call that may not run twice, the executor claims the call
//! in the run's journal, and after it, records the result. A process that
//! takes the run over asks the journal first: a call that ran gets its
//! recorded result, a call claimed by a process that died before recording
//! one is reported as interrupted, and only an unclaimed call runs.
//!
//! A journal where every entry costs a round trip (a durable-execution
//! engine) may keep a step whole instead ([`CallJournal::by_step`]): the
//! claims of every call of a model answer that may not run twice in one
//! entry, when the first of them reaches its body, and their results in one
//! after the step's last call. The rule is the same: a claimed call with no
//! recorded result is reported interrupted and not run again. What changes
//! is how much a crash costs: once the first of them started, calls of the
//! step that had not started when the process died are reported interrupted
//! too, and so are calls that finished but whose step did not.
//!
//! The journal rides on the run's [`ToolContext`] as the [`Journaled`]
//! extension; a context without one journals nothing. Every call of a
//! journaled run that changes something gets its [`IdempotencyKey`]; calls
//! of idempotent tools (tagged `idempotent` or `read_only`) are never
//! claimed: running them again is what recovery does with them.

use std::sync::Arc;

use iris_core::{BoxFuture, FromToolContext, RunId, ToolContext, ToolErrorKind, ToolResult};

use crate::ToolOutcome;
use sha2::{Digest, Sha256};

/// What a journal knew of a call when the executor claimed it.
#[derive(Debug, Clone, PartialEq)]
pub enum Claimed {
    /// Nothing: the call is claimed now, and runs.
    New,
    /// It ran, with this result: it does not run again.
    Ran(ToolResult),
    /// Another process claimed it and stopped before recording a result:
    /// it may or may not have taken effect, and does not run again.
    Unfinished,
}

/// Why a journal (or the engine a run is on) could not claim a call,
/// record its result or keep the run: what was being done, and the store's
/// or engine's own error, kept as the [source](std::error::Error::source)
/// (a SQLite or Restate failure stays what it was).
#[derive(Debug, thiserror::Error)]
#[error("{doing}: {source}")]
pub struct JournalError {
    doing: String,
    #[source]
    source: Box<dyn std::error::Error + Send + Sync + 'static>,
}

impl JournalError {
    /// A failure while `doing` (such as "claiming call c1"), caused by
    /// `source` (an error, or its text).
    pub fn new(
        doing: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        Self {
            doing: doing.into(),
            source: source.into(),
        }
    }

    /// What was being done.
    #[must_use]
    pub fn doing(&self) -> &str {
        &self.doing
    }
}

/// Where calls of a run are recorded; see the [module docs](self).
pub trait CallJournal: Send + Sync + 'static {
    /// Claims `call_id` of `run` before its body runs, or tells what an
    /// earlier claim left. An error keeps the body from running (the run
    /// was taken over by another process, the store failed).
    fn claim<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
    ) -> BoxFuture<'a, Result<Claimed, JournalError>>;

    /// Records the result of a call that ran. A failure is logged; the
    /// result still goes to the model.
    fn record<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        result: &'a ToolResult,
    ) -> BoxFuture<'a, Result<(), JournalError>>;

    /// Whether this journal keeps the outcomes of the calls it never
    /// claims too (those of idempotent and read-only tools), through
    /// [`keep_outcomes`](Self::keep_outcomes), so that a replay runs no call
    /// whose outcome it kept. For an engine that replays a run's whole
    /// history on every attempt; `false` by default, which suits a store,
    /// whose take-over runs only the last step's calls again.
    fn keeps_every_outcome(&self) -> bool {
        false
    }

    /// The outcomes of calls this journal never claims (a window of
    /// read-only calls run together, or one idempotent call), kept under
    /// `name`: what `work` gives the first time, the kept outcomes, without
    /// running `work`, on a replay. Only called when
    /// [`keeps_every_outcome`](Self::keeps_every_outcome) says so; by
    /// default, runs `work`.
    fn keep_outcomes<'a>(
        &'a self,
        run: &'a RunId,
        name: String,
        work: BoxFuture<'a, Vec<ToolOutcome>>,
    ) -> BoxFuture<'a, Result<Vec<ToolOutcome>, JournalError>> {
        let _ = (run, name);
        Box::pin(async move { Ok(work.await) })
    }

    /// Whether the executor hands this journal a step's claims and results
    /// whole, through [`claim_step`](Self::claim_step) and
    /// [`record_step`](Self::record_step), instead of a call at a time
    /// around each body. For journals whose every entry costs a round trip;
    /// `false` by default, which records each result as soon as its body
    /// ends.
    fn by_step(&self) -> bool {
        false
    }

    /// Claims the calls `call_ids` of one step of `run` together, when the
    /// first of them reaches its body: one answer per id, in order. An error
    /// keeps every one of them from running. By default, one
    /// [`claim`](Self::claim) after another.
    fn claim_step<'a>(
        &'a self,
        run: &'a RunId,
        call_ids: &'a [&'a str],
    ) -> BoxFuture<'a, Result<Vec<Claimed>, JournalError>> {
        Box::pin(async move {
            let mut claimed = Vec::with_capacity(call_ids.len());
            for call_id in call_ids {
                claimed.push(self.claim(run, call_id).await?);
            }
            Ok(claimed)
        })
    }

    /// Records the results of the calls of one step that ran, after the
    /// last of them. The executor calls it once for every
    /// [`claim_step`](Self::claim_step) that claimed a call anew, with no
    /// results when none of them reached its body, and never after one
    /// that claimed none anew (every call had run or been cut off before),
    /// so that an engine replaying its journal meets the same entries in
    /// the same order. By default, one [`record`](Self::record) after
    /// another.
    fn record_step<'a>(
        &'a self,
        run: &'a RunId,
        results: &'a [(String, ToolResult)],
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            for (call_id, result) in results {
                self.record(run, call_id, result).await?;
            }
            Ok(())
        })
    }
}

mod step;
pub(crate) use step::{StepAnswer, StepClaims};

/// The context extension that journals a run's calls.
#[derive(Clone)]
pub struct Journaled(pub Arc<dyn CallJournal>);

impl std::fmt::Debug for Journaled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Journaled(..)")
    }
}

/// A key that names one call of one run, the same in every process and on
/// every attempt: what a tool hands a payment API or a message queue so
/// that a call made twice takes effect once. Calls of journaled runs get
/// it in their context (`#[ctx] key: IdempotencyKey`), except those of
/// read-only tools.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// The key of call `call_id` of `run`: 32 hexadecimal digits.
    #[must_use]
    pub fn of(run: &RunId, call_id: &str) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(run.as_str().as_bytes());
        hasher.update([0]);
        hasher.update(call_id.as_bytes());
        let digest = hasher.finalize();
        Self(crate::digest::hex(&digest[..16]))
    }

    /// The key as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromToolContext for IdempotencyKey {
    fn from_context(cx: &ToolContext) -> Result<Self, ToolResult> {
        cx.extension::<IdempotencyKey>().cloned().ok_or_else(|| {
            ToolResult::error(
                ToolErrorKind::Internal,
                "this tool takes an idempotency key, which only calls of a run kept in a store get (a runner built `with_store`), and only for tools that are not `read_only`",
            )
        })
    }
}

/// The result of a call a process claimed and died in.
pub(crate) fn unfinished(tool: &str) -> ToolResult {
    ToolResult::error(
        ToolErrorKind::Interrupted,
        format!(
            "the process running this call of `{tool}` stopped before its outcome was recorded, so it may or may not have taken effect; it was not run again. Check its effect before calling it again"
        ),
    )
}

/// The result of a call the journal would not claim.
pub(crate) fn refused(tool: &str, why: &JournalError) -> ToolResult {
    ToolResult::error(
        ToolErrorKind::Internal,
        format!(
            "the call of `{tool}` could not be recorded before it ran, so it did not run: {why}"
        ),
    )
}

#[cfg(test)]
mod error_tests {
    use super::JournalError;

    #[test]
    fn a_journal_error_keeps_its_cause() {
        let cause = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "database is locked");
        let error = JournalError::new("claiming call `c1`", cause);
        assert_eq!(error.to_string(), "claiming call `c1`: database is locked");
        assert_eq!(error.doing(), "claiming call `c1`");
        let source = std::error::Error::source(&error).expect("the cause is kept");
        assert!(source.downcast_ref::<std::io::Error>().is_some());
    }
}
