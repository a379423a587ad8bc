//! The workflow's handlers: `run` drives one run (the workflow key is its
//! id), `decide` records a person's decision on a waiting call, `status`
//! tells where the run stands.

use iris_agent::{RunContext, RunOutcome, RunState, RunStatus};
use iris_core::RunId;
use iris_runtime::ApprovalDecision;
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

/// The decision on each waiting call, in call order, as each arrives.
async fn decisions(
    ctx: &ContextInternal,
    state: &RunState,
) -> HandlerResult<Vec<(String, ApprovalDecision)>> {
    let mut decisions = Vec::with_capacity(state.pending.len());
    for pending in &state.pending {
        let id = &pending.call.id;
        let decision: Json<ApprovalDecision> = ctx.promise(&keys::decision(id)).await?;
        decisions.push((id.clone(), decision.into_inner()));
    }
    Ok(decisions)
}

/// `decide`: the decision on one waiting call, checked against the request
/// the person was shown before it is handed to the run.
pub(crate) async fn decide(ctx: &ContextInternal, input: &[u8]) -> HandlerResult<()> {
    let decide: Decide = parse(
        input,
        "decide",
        r#"{"call_id": "call_1", "decision": {"decision": "approve", "approval_id": "..."}}"#,
    )?;
    let state: Option<Json<RunState>> = ctx.get(keys::STATE).await?;
    let status: Option<Json<RunStatus>> = ctx.get(keys::STATUS).await?;
    let (Some(state), Some(status)) = (state, status) else {
        return Err(conflict(
            "this run has not started, so no call of it waits; start it with `run`",
        ));
    };
    let state = state.into_inner();
    let waiting = || {
        state
            .pending
            .iter()
            .map(|p| format!("`{}`", p.call.id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let pending = state.pending.iter().find(|p| p.call.id == decide.call_id);
    let pending = match (status.into_inner(), pending) {
        (RunStatus::Waiting, Some(pending)) => pending,
        (RunStatus::Waiting, None) => {
            return Err(conflict(&format!(
                "call `{}` does not wait in this run; the calls that wait are {}",
                decide.call_id,
                waiting()
            )));
        }
        (status, _) => {
            return Err(conflict(&format!(
                "no call of this run waits for a decision (the run is {})",
                status.as_str()
            )));
        }
    };
    if let ApprovalDecision::Approve { approval_id } = &decide.decision
        && approval_id != &pending.request.approval_id
    {
        return Err(conflict(&format!(
            "this approval names request `{approval_id}`, but call `{}` waits under request `{}` (tool `{}`, arguments hash {}); approve the request that is shown",
            decide.call_id,
            pending.request.approval_id,
            pending.request.tool,
            pending.request.arguments_hash
        )));
    }
    let name = keys::decision(&decide.call_id);
    let earlier: Option<Json<ApprovalDecision>> = ctx.peek_promise(&name).await?;
    if earlier.is_some() {
        return Err(conflict(&format!(
            "call `{}` was decided already; the first decision stands",
            decide.call_id
        )));
    }
    ctx.resolve_promise(&name, Json(decide.decision));
    Ok(())
}

/// `status`: where the run stands, and what waits.
pub(crate) async fn status(ctx: &ContextInternal) -> HandlerResult<Json<RunView>> {
    let state: Option<Json<RunState>> = ctx.get(keys::STATE).await?;
    let status: Option<Json<RunStatus>> = ctx.get(keys::STATUS).await?;
    let state = state.map(Json::into_inner);
    let waiting = state
        .as_ref()
        .map(|s| s.pending.iter().map(|p| p.request.clone()).collect())
        .unwrap_or_default();
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
