//! Driving a run to its end, deciding each approval it asks for, and
//! gathering its transcript on the way.

use iris_agent::{AgentRunner, RunContext, RunError, RunOutcome};
use iris_runtime::{ApprovalDecision, ApprovalRequest};

use crate::transcript::Transcript;

/// Runs `task` with `runner` until the run ends, answering every approval
/// it asks for with `decide` and resuming it; returns the last outcome and
/// the run's transcript (the pauses and decisions included). A run that
/// pauses more than 100 times is stopped there, returning its waiting
/// outcome.
///
/// # Errors
/// What the run or a resume returns.
pub async fn run_to_end(
    runner: &AgentRunner,
    task: &str,
    cx: &RunContext,
    mut decide: impl FnMut(&ApprovalRequest) -> ApprovalDecision,
) -> Result<(RunOutcome, Transcript), RunError> {
    let mut outcome = runner.run(task, cx).await?;
    let mut transcript = Transcript::of(&outcome);
    for _ in 0..100 {
        let RunOutcome::Waiting(state) = &outcome else {
            break;
        };
        let decisions: Vec<(String, ApprovalDecision)> = state
            .pending
            .iter()
            .map(|pending| (pending.call.id.clone(), decide(&pending.request)))
            .collect();
        for (call_id, decision) in &decisions {
            transcript.record_decision(call_id, decision);
        }
        outcome = runner.resume(state.clone(), decisions, cx).await?;
        transcript.record(&outcome);
    }
    Ok((outcome, transcript))
}

/// Approves every request, as shown.
pub fn approve_all() -> impl FnMut(&ApprovalRequest) -> ApprovalDecision {
    ApprovalDecision::approve
}

/// Denies every request with `reason`.
pub fn deny_all(reason: &str) -> impl FnMut(&ApprovalRequest) -> ApprovalDecision + '_ {
    move |_| ApprovalDecision::deny(reason)
}
