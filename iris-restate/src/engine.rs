//! The run loop's engine on Restate: every model answer and every claim and
//! result of a call that may not run twice is one journaled `run` of the
//! invocation, and the run's state is the workflow's key-value state.
//!
//! A call's claim is a journaled `run` whose closure only marks that it ran
//! in this attempt. When Restate replays an invocation, a claim kept in the
//! journal comes back without its closure running: the call was claimed by
//! an earlier attempt, and the entry after it tells what became of it (its
//! result, kept by `record`; or, when that entry is missing, the earlier
//! attempt died inside the body, and the call is recorded as unfinished,
//! once and for every later replay).
//!
//! Each call that may not run twice is claimed when its own body starts and
//! its result kept when it ends: two entries per write, so a crash inside
//! one write leaves only that write interrupted; a write of the same step
//! that had not started runs on the next attempt, and one that finished
//! keeps its result. (Keeping a step whole, one entry for its claims and one
//! for its results, saved 2.3 ms on a step of four writes but reported the
//! writes that had not started interrupted too.) Writes run one at a time,
//! so their entries come in the same order on every attempt; on a replay a
//! claim comes back kept and the result entry after it is read at once.
//!
//! The outcomes of calls never claimed are kept too
//! ([`CallJournal::keeps_every_outcome`]): one entry for each window of
//! read-only calls run together, whose closure runs the window, and one for
//! each idempotent call, so a replay runs none of them again; and, for an
//! agent that discovers tools, one entry per step keeps what was disclosed,
//! so a replay offers what a kept `tool_search` disclosed. No
//! entry is left unawaited: the SDK runs a `run`'s closure only when its
//! future is polled, and hands back its value only once the server has kept
//! it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use iris_agent::engine::Ask;
use iris_agent::{Engine, RunState, RunStatus};
use iris_core::{BoxFuture, RunId, ToolName, ToolResult};
use iris_model::{ModelError, ModelResponse};
use iris_runtime::ToolOutcome;
use iris_runtime::journal::{CallJournal, Claimed, JournalError};
use restate_sdk::context::RunFuture;
use restate_sdk::endpoint::ContextInternal;
use restate_sdk::errors::HandlerResult;
use restate_sdk::serde::Json;

use crate::keys;

/// One invocation's journal, as the run loop's [`Engine`].
#[derive(Clone)]
pub(crate) struct RestateEngine {
    ctx: ContextInternal,
}

impl RestateEngine {
    pub(crate) fn new(ctx: ContextInternal) -> Arc<Self> {
        Arc::new(Self { ctx })
    }

    /// Journals a claim named `name`: `true` when it is made in this
    /// attempt, `false` when it comes back from an earlier one (its closure,
    /// which only marks that it ran, does not run on a replay).
    async fn claimed_now(
        &self,
        name: String,
        what: impl FnOnce() -> String,
    ) -> Result<bool, JournalError> {
        let claimed_now = AtomicBool::new(false);
        self.ctx
            .run(|| {
                claimed_now.store(true, Ordering::Relaxed);
                async { HandlerResult::Ok(Json(())) }
            })
            .name(name)
            .await
            .map_err(|e| kept_no(what(), &e))?;
        Ok(claimed_now.load(Ordering::Relaxed))
    }

    /// What became of call `call_id` in an earlier attempt: its recorded
    /// result, or, when none was recorded, `None`, now kept as the call's
    /// outcome.
    async fn earlier_outcome(&self, call_id: &str) -> Result<Option<ToolResult>, JournalError> {
        let kept = self
            .ctx
            .run(|| async { HandlerResult::Ok(Json(None::<ToolResult>)) })
            .name(format!("result of {call_id}"))
            .await
            .map_err(|e| kept_no(format!("the outcome of call `{call_id}`"), &e))?;
        Ok(kept.into_inner())
    }
}

impl Engine for RestateEngine {
    fn answer<'a>(
        &'a self,
        step: u32,
        ask: Ask<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            // The answer is kept whatever it is, a model error included: a
            // replay must take the path the first attempt took.
            let kept = self
                .ctx
                .run(move || async move { HandlerResult::Ok(Json(ask().await)) })
                .name(format!("model step {step}"))
                .await;
            match kept {
                Ok(answer) => answer.into_inner(),
                Err(failed) => Err(ModelError::new(format!(
                    "Restate could not keep the model's answer to step {step}: {failed}"
                ))),
            }
        })
    }

    fn calls(&self) -> Arc<dyn CallJournal> {
        Arc::new(self.clone())
    }

    fn now_ms(&self) -> BoxFuture<'_, Result<u64, JournalError>> {
        Box::pin(async move {
            self.ctx
                .run(|| async { HandlerResult::Ok(Json(iris_agent::store::now_ms())) })
                .name("clock")
                .await
                .map(Json::into_inner)
                .map_err(|e| kept_no("the clock's reading", &e))
        })
    }

    fn disclosed(
        &self,
        step: u32,
        disclosed: Vec<ToolName>,
    ) -> BoxFuture<'_, Result<Vec<ToolName>, JournalError>> {
        Box::pin(async move {
            self.ctx
                .run(move || async move { HandlerResult::Ok(Json(disclosed)) })
                .name(format!("disclosed after step {step}"))
                .await
                .map(Json::into_inner)
                .map_err(|e| kept_no(format!("the tools disclosed after step {step}"), &e))
        })
    }

    fn judged(
        &self,
        step: u32,
        judged: serde_json::Value,
    ) -> BoxFuture<'_, Result<serde_json::Value, JournalError>> {
        Box::pin(async move {
            self.ctx
                .run(move || async move { HandlerResult::Ok(Json(judged)) })
                .name(format!("model.after on step {step}"))
                .await
                .map(Json::into_inner)
                .map_err(|e| kept_no(format!("the model.after hooks' verdict on step {step}"), &e))
        })
    }

    fn save<'a>(
        &'a self,
        state: &'a RunState,
        status: RunStatus,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        self.ctx.set(keys::STATE, Json(state));
        self.ctx.set(keys::STATUS, Json(status));
        Box::pin(async { Ok(()) })
    }
}

impl CallJournal for RestateEngine {
    fn claim<'a>(
        &'a self,
        _run: &'a RunId,
        call_id: &'a str,
    ) -> BoxFuture<'a, Result<Claimed, JournalError>> {
        Box::pin(async move {
            let what = || format!("the claim of call `{call_id}`");
            if self
                .claimed_now(format!("claim of {call_id}"), what)
                .await?
            {
                return Ok(Claimed::New);
            }
            Ok(match self.earlier_outcome(call_id).await? {
                Some(result) => Claimed::Ran(result),
                None => Claimed::Unfinished,
            })
        })
    }

    fn keeps_every_outcome(&self) -> bool {
        true
    }

    fn keep_outcomes<'a>(
        &'a self,
        _run: &'a RunId,
        name: String,
        work: BoxFuture<'a, Vec<ToolOutcome>>,
    ) -> BoxFuture<'a, Result<Vec<ToolOutcome>, JournalError>> {
        Box::pin(async move {
            let what = format!("the {name}");
            self.ctx
                .run(move || async move { HandlerResult::Ok(Json(work.await)) })
                .name(name)
                .await
                .map(Json::into_inner)
                .map_err(|e| kept_no(what, &e))
        })
    }

    fn record<'a>(
        &'a self,
        _run: &'a RunId,
        call_id: &'a str,
        result: &'a ToolResult,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            let result = result.clone();
            self.ctx
                .run(move || async move { HandlerResult::Ok(Json(Some(result))) })
                .name(format!("result of {call_id}"))
                .await
                .map(drop)
                .map_err(|e| kept_no(format!("the result of call `{call_id}`"), &e))
        })
    }
}

/// Restate could not keep `what`; the SDK's failure, with its code, is the
/// source.
fn kept_no(
    what: impl std::fmt::Display,
    error: &restate_sdk::errors::TerminalError,
) -> JournalError {
    JournalError::new(
        format!("Restate could not keep {what}"),
        RestateFailure {
            code: error.code(),
            message: error.message().to_owned(),
        },
    )
}

/// A failure Restate reported, as a standard error (the SDK's type is not
/// one).
#[derive(Debug, thiserror::Error)]
#[error("{message} (Restate code {code})")]
pub struct RestateFailure {
    /// Restate's code for it.
    pub code: u16,
    /// Restate's message.
    pub message: String,
}
