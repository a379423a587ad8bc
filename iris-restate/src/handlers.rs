//! The workflow's handlers: `run` drives one run (the workflow key is its
//! id), `decide` records a person's reply to a waiting item, `status`
//! tells where the run stands.

use std::time::Duration;

use iris_agent::store::{check_reply, now_ms};
use iris_agent::{RunContext, RunOutcome, RunState, RunStatus};
use iris_core::RunId;
use iris_runtime::Reply;
use restate_sdk::endpoint::ContextInternal;
use restate_sdk::errors::{HandlerError, HandlerResult, TerminalError};
use restate_sdk::serde::Json;
use serde::de::DeserializeOwned;

use crate::AgentWorkflow;
use crate::engine::RestateEngine;
use crate::keys;
use crate::wire::{Decide, RunReport, RunView, StartRun};

/// `run`: the agent loop, on this invocation's journal. A call that waits
/// for a person parks the run on the durable promise of its decision; when
/// every waiting call has one, the loop goes on.
pub(crate) async fn run(
    workflow: &AgentWorkflow,
    ctx: &ContextInternal,
    key: String,
    input: &[u8],
) -> HandlerResult<Json<RunReport>> {
    let start: StartRun = parse(input, "run", r#"{"task": "what the agent should do"}"#)?;
    let runner = workflow.runner.on_engine(RestateEngine::new(ctx.clone()));
    let cx = RunContext::new(&workflow.workspace, RunId::new(key));
    let mut outcome = runner.run(start.task, &cx).await.map_err(|e| failed(&e))?;
    loop {
        let state = match outcome {
            RunOutcome::Waiting(state) => state,
            ended => {
                // Every outcome but a wait ends the loop.
                return RunReport::of(ended)
                    .map(Json)
                    .ok_or_else(|| TerminalError::new("the run ended waiting").into());
            }
        };
        let decisions = decisions(ctx, &state).await?;
        outcome = runner
            .resume(state, decisions, &cx)
            .await
            .map_err(|e| failed(&e))?;
    }
}

/// The reply to each waiting item, in call order, as each arrives; a
/// question with an expiry waits for its reply until then at most, and has
/// none when the durable timer fires first (the run then tells the model it
/// expired).
async fn decisions(ctx: &ContextInternal, state: &RunState) -> HandlerResult<Vec<(String, Reply)>> {
    let pending = state.pending();
    let mut replies = Vec::with_capacity(pending.len());
    for pending in &pending {
        let item = &pending.item;
        let name = keys::decision(&pending.id);
        let promise = ctx.promise::<Json<Reply>>(&name);
        let expiry = item.question_request().and_then(|r| r.expires_at_ms);
        let reply = match expiry {
            None => Some(promise.await?.into_inner()),
            Some(at) => {
                let left = Duration::from_millis(at.saturating_sub(now_ms()));
                restate_sdk::select! {
                    reply = promise => Some(reply?.into_inner()),
                    _ = ctx.sleep(left) => None,
                }
            }
        };
        if let Some(reply) = reply {
            replies.push((pending.id.clone(), reply));
        }
    }
    Ok(replies)
}

/// `decide`: the reply to one waiting item (a decision on a call, an
/// answer to a question), checked against what the person was shown before
/// it is handed to the run.
pub(crate) async fn decide(ctx: &ContextInternal, input: &[u8]) -> HandlerResult<()> {
    let decide: Decide = parse(
        input,
        "decide",
        r#"{"item_id": "call_1", "reply": {"decision": "approve", "approval_id": "..."}}"#,
    )?;
    let state: Option<Json<RunState>> = ctx.get(keys::STATE).await?;
    let status: Option<Json<RunStatus>> = ctx.get(keys::STATUS).await?;
    let (Some(state), Some(status)) = (state, status) else {
        return Err(conflict(
            "this run has not started, so nothing of it waits; start it with `run`",
        ));
    };
    let state = state.into_inner();
    if let Err(refused) = check_reply(
        &state.run_id,
        &state,
        status.into_inner(),
        &decide.item_id,
        &decide.reply,
    ) {
        return Err(conflict(&refused.to_string()));
    }
    let name = keys::decision(&decide.item_id);
    let earlier: Option<Json<Reply>> = ctx.peek_promise(&name).await?;
    if earlier.is_some() {
        return Err(conflict(&format!(
            "`{}` has its reply already; the first reply stands",
            decide.item_id
        )));
    }
    ctx.resolve_promise(&name, Json(decide.reply));
    Ok(())
}

/// `status`: where the run stands, and what waits.
pub(crate) async fn status(ctx: &ContextInternal) -> HandlerResult<Json<RunView>> {
    let state: Option<Json<RunState>> = ctx.get(keys::STATE).await?;
    let status: Option<Json<RunStatus>> = ctx.get(keys::STATUS).await?;
    let state = state.map(Json::into_inner);
    let waiting = state.as_ref().map(RunState::pending).unwrap_or_default();
    Ok(Json(RunView {
        status: status.map(Json::into_inner),
        waiting,
        state,
    }))
}

/// `input` as JSON of type `T`, or a terminal error that shows its shape.
fn parse<T: DeserializeOwned>(
    input: &[u8],
    handler: &str,
    example: &str,
) -> Result<T, HandlerError> {
    serde_json::from_slice(input).map_err(|e| {
        TerminalError::new_with_code(
            400,
            format!(
                "the input of `{handler}` is not what it takes ({e}); send JSON like {example}"
            ),
        )
        .into()
    })
}

/// A refusal the caller must act on: Restate does not retry it.
fn conflict(why: &str) -> HandlerError {
    TerminalError::new_with_code(409, why).into()
}

/// A run that failed: terminal, with the reason (retrying would ask the
/// model again for nothing; the journal keeps what happened).
fn failed(err: &iris_agent::RunError) -> HandlerError {
    TerminalError::new_with_code(500, err.to_string()).into()
}
