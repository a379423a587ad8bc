//! Driving a run to its end, deciding each approval and answering each
//! question it asks, and gathering its transcript on the way.

use std::collections::VecDeque;

use iris_agent::{AgentRunner, PendingItem, RunContext, RunError, RunOutcome, Wait};
use iris_runtime::question::Answer;
use iris_runtime::{ApprovalDecision, ApprovalRequest, QuestionReply, QuestionRequest, Reply};

use crate::transcript::Transcript;

/// Most pauses a driven run is resumed from before it is stopped.
const MAX_PAUSES: usize = 100;

/// Runs `task` with `runner` until the run ends, answering every approval
/// it asks for with `decide` and resuming it; returns the last outcome and
/// the run's transcript (the pauses and decisions included). A run that
/// asks the person a question stops there, waiting (answer questions with
/// [`run_answering`]); one that pauses more than 100 times is stopped
/// there too, returning its waiting outcome.
///
/// # Errors
/// What the run or a resume returns.
pub async fn run_to_end(
    runner: &AgentRunner,
    task: &str,
    cx: &RunContext,
    decide: impl FnMut(&ApprovalRequest) -> ApprovalDecision,
) -> Result<(RunOutcome, Transcript), RunError> {
    run_answering(runner, task, cx, decide, |_| None).await
}

/// Runs `task` as [`run_to_end`] does, and answers each question the model
/// asks with `answer` (`None`: nobody answers, and the run is returned
/// waiting). Give the runner
/// [`with_questions`](iris_agent::AgentRunner::with_questions) so that the
/// model is offered `ask_question`; [`answers`] scripts the replies.
///
/// # Errors
/// What the run or a resume returns.
pub async fn run_answering(
    runner: &AgentRunner,
    task: &str,
    cx: &RunContext,
    mut decide: impl FnMut(&ApprovalRequest) -> ApprovalDecision,
    mut answer: impl FnMut(&QuestionRequest) -> Option<QuestionReply>,
) -> Result<(RunOutcome, Transcript), RunError> {
    let mut outcome = runner.run(task, cx).await?;
    let mut transcript = Transcript::of(&outcome);
    for _ in 0..MAX_PAUSES {
        let RunOutcome::Waiting(state) = &outcome else {
            break;
        };
        let pending = state.pending();
        let mut replies: Vec<(String, Reply)> = Vec::with_capacity(pending.len());
        for entry @ PendingItem { id, item, .. } in &pending {
            let reply = match item.wait() {
                Wait::Approval { request } => Reply::from(decide(request)),
                Wait::Question { request } => match answer(request) {
                    Some(reply) => Reply::from(reply),
                    None => return Ok((outcome, transcript)),
                },
                _ => return Ok((outcome, transcript)),
            };
            transcript.record_reply(entry, &reply);
            replies.push((id.clone(), reply));
        }
        outcome = runner.resume(state.clone(), replies, cx).await?;
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

/// Answers the questions the model asks in turn: the first `ask_question`
/// call gets the first entry (one [`Answer`] per question it asks), the
/// second the next; past the last, nobody answers (the run waits).
pub fn answers(
    script: impl IntoIterator<Item = Vec<Answer>>,
) -> impl FnMut(&QuestionRequest) -> Option<QuestionReply> {
    let mut script: VecDeque<Vec<Answer>> = script.into_iter().collect();
    move |request| {
        let answers = script.pop_front()?;
        Some(QuestionReply::answer(request, answers))
    }
}

/// Declines every question.
pub fn decline_all() -> impl FnMut(&QuestionRequest) -> Option<QuestionReply> {
    |_| Some(QuestionReply::decline())
}
