//! Questions to a person, answered by run control: the runner offers
//! `ask_question` only where the host says a person can answer, reads the
//! model's call itself (no hook, middleware or permission rule sees it),
//! and either asks the host's answerer at once or makes the call a waiting
//! item that a reply resumes.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use iris_core::{BoxFuture, ToolErrorKind, ToolResult, ToolUseBlock};
use iris_model::Message;
use iris_runtime::question::{ASK_QUESTION, QuestionEnding, parse_questions};
use iris_runtime::{QuestionReply, QuestionRequest, RunEvent};

use super::{AgentRunner, RunContext};
use crate::RunState;

/// Questions a run asks unless the host allows another number.
pub const DEFAULT_MAX_QUESTIONS: u32 = 8;

/// Who answers a question at once, in this process (a dialog, a chat
/// front end): the run then never waits for it.
pub trait Answerer: Send + Sync + 'static {
    /// The person's reply to `request`.
    fn answer(&self, request: QuestionRequest) -> BoxFuture<'_, QuestionReply>;
}

impl<F, Fut> Answerer for F
where
    F: Fn(QuestionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = QuestionReply> + Send + 'static,
{
    fn answer(&self, request: QuestionRequest) -> BoxFuture<'_, QuestionReply> {
        Box::pin(self(request))
    }
}

/// That a person can answer this runner's runs, and how: given with
/// [`AgentRunner::with_questions`], it offers the model `ask_question`;
/// without it the tool is absent from every request, and never answered
/// on anyone's behalf.
#[derive(Clone)]
pub struct Questions {
    expiry: Option<Duration>,
    max_per_run: u32,
    answerer: Option<Arc<dyn Answerer>>,
}

impl std::fmt::Debug for Questions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Questions")
            .field("expiry", &self.expiry)
            .field("max_per_run", &self.max_per_run)
            .field("answerer", &self.answerer.is_some())
            .finish()
    }
}

impl Default for Questions {
    fn default() -> Self {
        Self::new()
    }
}

impl Questions {
    /// A person answers later: a question makes the run wait
    /// ([`RunOutcome::Waiting`](crate::RunOutcome::Waiting)) until a reply
    /// resumes it. No expiry; at most [`DEFAULT_MAX_QUESTIONS`] per run.
    #[must_use]
    pub fn new() -> Self {
        Self {
            expiry: None,
            max_per_run: DEFAULT_MAX_QUESTIONS,
            answerer: None,
        }
    }

    /// `answerer` answers each question at once, and the run never waits
    /// for one.
    #[must_use]
    pub fn answered_by(answerer: impl Answerer) -> Self {
        Self {
            answerer: Some(Arc::new(answerer)),
            ..Self::new()
        }
    }

    /// A question nobody answered within `expiry` ends as `expired` when
    /// the run is resumed after it.
    #[must_use]
    pub fn expiring_after(mut self, expiry: Duration) -> Self {
        self.expiry = Some(expiry);
        self
    }

    /// At most `max` questions per run; the model is told when it asked
    /// them all.
    #[must_use]
    pub fn at_most(mut self, max: u32) -> Self {
        self.max_per_run = max;
        self
    }
}

/// What run control made of one `ask_question` call.
pub(super) enum Asked {
    /// Its result: an answer from the host's answerer, or a refusal.
    Finished(ToolResult),
    /// It waits for a person.
    Waiting(QuestionRequest),
}

impl AgentRunner {
    /// Whether `call` asks the person a question (run control's, where a
    /// person can answer).
    pub(super) fn is_question(&self, call: &ToolUseBlock) -> bool {
        self.questions.is_some() && call.name == ASK_QUESTION
    }

    /// Whether `call` is one run control answers rather than the executor:
    /// a question, a skill's activation or a delegation to a child agent.
    pub(super) fn is_run_control(&self, call: &ToolUseBlock) -> bool {
        self.is_question(call) || self.is_skill_activation(call) || self.is_delegation(call)
    }

    /// Run control's answer to the model's `ask_question` call: an
    /// `invalid_arguments` result for questions that do not fit, a refusal
    /// past the cap, the answerer's reply, or a wait.
    pub(super) async fn ask(
        &self,
        call: &ToolUseBlock,
        state: &RunState,
        cx: &RunContext,
    ) -> Asked {
        let Some(questions) = &self.questions else {
            return Asked::Finished(ToolResult::error(
                ToolErrorKind::ToolNotAvailable,
                "`ask_question` is not offered in this run: nobody is there to answer",
            ));
        };
        let asked = match parse_questions(&call.input) {
            Ok(asked) => asked,
            Err(why) => {
                return Asked::Finished(ToolResult::error(
                    ToolErrorKind::InvalidArguments,
                    format!("{why}; nothing was asked"),
                ));
            }
        };
        if asked_before(state, &call.id) >= questions.max_per_run {
            return Asked::Finished(ToolResult::error(
                ToolErrorKind::PermissionDenied,
                format!(
                    "this run has asked the {} questions it may; go on without asking more",
                    questions.max_per_run
                ),
            ));
        }
        let expires_at_ms = match questions.expiry {
            // On an engine the reading is kept: a replay asks the same
            // question, under the same id.
            Some(expiry) => match self.clock_ms().await {
                Ok(now) => {
                    Some(now.saturating_add(u64::try_from(expiry.as_millis()).unwrap_or(u64::MAX)))
                }
                Err(err) => {
                    return Asked::Finished(ToolResult::error(
                        ToolErrorKind::Internal,
                        format!("the question could not be asked: {err}"),
                    ));
                }
            },
            None => None,
        };
        let request =
            QuestionRequest::new(state.run_id.clone(), call.id.clone(), asked, expires_at_ms);
        let executor = self.agent.executor();
        executor.emit_event(RunEvent::QuestionAsked {
            run_id: state.run_id.clone(),
            call_id: call.id.clone(),
            question_id: request.question_id.clone(),
            questions: request.questions.len(),
        });
        let Some(answerer) = &questions.answerer else {
            return Asked::Waiting(request);
        };
        let reply = tokio::select! {
            reply = answerer.answer(request.clone()) => reply,
            () = cx.cancel.cancelled() => QuestionReply::cancel(),
        };
        if let Err(why) = request.check(&reply) {
            let result = ToolResult::error(
                ToolErrorKind::Internal,
                format!(
                    "the host's answer did not fit the questions ({why}); the question was not answered"
                ),
            );
            self.answered(&request, QuestionEnding::Cancelled);
            return Asked::Finished(result);
        }
        Asked::Finished(self.settle(&request, Some(&reply)))
    }

    /// The result of a question that ends with `reply` (none: it expired).
    pub(super) fn settle(
        &self,
        request: &QuestionRequest,
        reply: Option<&QuestionReply>,
    ) -> ToolResult {
        let ending = match reply {
            Some(QuestionReply::Answered { .. }) => QuestionEnding::Answered,
            Some(QuestionReply::Declined) => QuestionEnding::Declined,
            Some(QuestionReply::Cancelled) => QuestionEnding::Cancelled,
            None => QuestionEnding::Expired,
        };
        self.answered(request, ending);
        request.result(ending, reply)
    }

    fn answered(&self, request: &QuestionRequest, ending: QuestionEnding) {
        self.agent
            .executor()
            .emit_event(RunEvent::QuestionAnswered {
                run_id: request.run_id.clone(),
                call_id: request.call_id.clone(),
                question_id: request.question_id.clone(),
                ending,
            });
    }
}

/// `ask_question` calls the run made before call `call_id`.
fn asked_before(state: &RunState, call_id: &str) -> u32 {
    let calls = state
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .flatten()
        .take_while(|call| call.id != call_id)
        .filter(|call| call.name == ASK_QUESTION)
        .count();
    u32::try_from(calls).unwrap_or(u32::MAX)
}
