//! Questions to a person, answered by run control: the runner offers
//! `ask_question` only where the host says a person can answer, reads the
//! model's call itself (no hook, middleware or permission rule sees it),
//! and either asks the host's answerer at once or makes the call a waiting
//! item that a reply resumes.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use iris_core::{BoxFuture, ToolErrorKind, ToolResult, ToolSpec, ToolUseBlock};
use iris_model::Message;
use iris_runtime::question::{ASK_QUESTION, QuestionEnding, parse_questions};
use iris_runtime::{QuestionReply, QuestionRequest, Reply, RunEvent};

use rustc_hash::FxHashSet;

use super::{Answered, Control, ItemReplies, Turn};
use crate::{RunError, RunState, WaitingItem, store};

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
/// [`AgentRunner::with_questions`](crate::AgentRunner::with_questions), it offers the model `ask_question`;
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
    /// Questions a run asks unless the host allows another number.
    pub const DEFAULT_MAX_PER_RUN: u32 = 8;

    /// A person answers later: a question makes the run wait
    /// ([`RunOutcome::Waiting`](crate::RunOutcome::Waiting)) until a reply
    /// resumes it. No expiry; at most [`Questions::DEFAULT_MAX_PER_RUN`] per run.
    #[must_use]
    pub fn new() -> Self {
        Self {
            expiry: None,
            max_per_run: Self::DEFAULT_MAX_PER_RUN,
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

    /// At most `max` questions per run, counted in questions (a call may
    /// ask up to four) across the whole tree of agents (a child's count
    /// toward its root's cap) and across pauses; the model is told when it
    /// asked them all.
    #[must_use]
    pub fn at_most(mut self, max: u32) -> Self {
        self.max_per_run = max;
        self
    }
}

/// The owner of `ask_question`: offered where the host says a person can
/// answer, and resuming the questions a run waits on whoever resumes it.
#[derive(Clone, Default)]
pub(in crate::run) struct Asker {
    /// How a person answers; `None`: the model is never offered the tool.
    pub(in crate::run) questions: Option<Questions>,
}

impl Control for Asker {
    fn claims(&self, _: &Turn<'_>, call: &ToolUseBlock) -> bool {
        self.questions.is_some() && call.name == ASK_QUESTION
    }

    fn resumes(&self, _: &Turn<'_>, item: &WaitingItem) -> bool {
        // A question that waits is settled by any runner that resumes it,
        // offering questions or not.
        item.question_request().is_some()
    }

    fn offer(&self, turn: &Turn<'_>, specs: &mut Vec<ToolSpec>) -> Result<(), RunError> {
        if self.questions.is_none() {
            return Ok(());
        }
        // Never a discovery candidate, never in the executor's offer.
        if turn.runner.agent.registry().resolve(ASK_QUESTION).is_some() {
            return Err(RunError::NameTaken {
                name: ASK_QUESTION.to_owned(),
            });
        }
        specs.push(iris_runtime::question::ask_question_spec());
        Ok(())
    }

    fn answer<'a>(
        &'a self,
        turn: &'a Turn<'a>,
        calls: Vec<ToolUseBlock>,
    ) -> BoxFuture<'a, Vec<Answered>> {
        Box::pin(async move {
            let mut answers = Vec::with_capacity(calls.len());
            // One at a time, in call order: each reserves its place under
            // the cap before the next is read.
            for call in calls {
                answers.push(self.ask(turn, call).await);
            }
            answers
        })
    }

    fn resume<'a>(
        &'a self,
        turn: &'a Turn<'a>,
        item: WaitingItem,
        replies: ItemReplies,
        now: u64,
    ) -> BoxFuture<'a, Result<Answered, RunError>> {
        Box::pin(async move {
            let Some(request) = item.question_request() else {
                return Ok(Answered::Waiting(Box::new(item)));
            };
            Ok(match replies.own {
                _ if request.expired_at(now) => Answered::done(settle(turn, request, None)),
                Some(Reply::Answer(answer)) => Answered::done(settle(turn, request, Some(&answer))),
                _ => Answered::Waiting(Box::new(item)),
            })
        })
    }

    fn take_over<'a>(
        &'a self,
        turn: &'a Turn<'a>,
        call: ToolUseBlock,
        kept: Option<WaitingItem>,
        replies: ItemReplies,
    ) -> BoxFuture<'a, Answered> {
        Box::pin(async move {
            let Some(request) = kept.as_ref().and_then(WaitingItem::question_request) else {
                // Cut off before it was asked: ask it now.
                return self.ask(turn, call).await;
            };
            match replies.own {
                Some(Reply::Answer(answer)) if request.check(&answer).is_ok() => {
                    Answered::done(settle(turn, request, Some(&answer)))
                }
                _ if request.expired_at(store::now_ms()) => {
                    Answered::done(settle(turn, request, None))
                }
                _ => Answered::Waiting(Box::new(WaitingItem::asked(call, request.clone()))),
            }
        })
    }
}

impl Asker {
    /// Run control's answer to the model's `ask_question` call: an
    /// `invalid_arguments` result for questions that do not fit, a refusal
    /// past the cap, the answerer's reply, or a wait.
    async fn ask(&self, turn: &Turn<'_>, call: ToolUseBlock) -> Answered {
        let Some(questions) = &self.questions else {
            return Answered::done(ToolResult::error(
                ToolErrorKind::ToolNotAvailable,
                "`ask_question` is not offered in this run: nobody is there to answer",
            ));
        };
        let (state, cx) = (turn.state, turn.cx);
        let asked = match parse_questions(&call.input) {
            Ok(asked) => asked,
            Err(why) => {
                return Answered::done(ToolResult::error(
                    ToolErrorKind::InvalidArguments,
                    format!("{why}; nothing was asked"),
                ));
            }
        };
        let max = questions.max_per_run;
        let tally = cx
            .questions
            .clone()
            .unwrap_or_else(|| Tally::new(asked_in(state, Steps::BeforeLast)));
        let count = u32::try_from(asked.len()).unwrap_or(u32::MAX);
        if let Err(asked_so_far) = tally.reserve(count, max) {
            let left = max.saturating_sub(asked_so_far);
            let what = if left == 0 {
                "go on without asking more".to_owned()
            } else {
                format!("ask at most {left} more, or go on without asking")
            };
            return Answered::done(ToolResult::error(
                ToolErrorKind::PermissionDenied,
                format!(
                    "this run has asked {asked_so_far} of the {max} questions it may (its child agents' count too), and this call asks {count}; {what}"
                ),
            ));
        }
        let expires_at_ms = match questions.expiry {
            // On an engine the reading is kept: a replay asks the same
            // question, under the same id.
            Some(expiry) => match turn.runner.clock_ms().await {
                Ok(now) => {
                    Some(now.saturating_add(u64::try_from(expiry.as_millis()).unwrap_or(u64::MAX)))
                }
                Err(err) => {
                    return Answered::done(ToolResult::error(
                        ToolErrorKind::Internal,
                        format!("the question could not be asked: {err}"),
                    ));
                }
            },
            None => None,
        };
        let request =
            QuestionRequest::new(state.run_id.clone(), call.id.clone(), asked, expires_at_ms);
        turn.runner
            .agent
            .executor()
            .emit_event(RunEvent::QuestionAsked {
                run_id: state.run_id.clone(),
                call_id: call.id.clone(),
                question_id: request.question_id.clone(),
                questions: request.questions.len(),
            });
        let Some(answerer) = &questions.answerer else {
            return Answered::Waiting(Box::new(WaitingItem::asked(call, request)));
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
            answered(turn, &request, QuestionEnding::Cancelled);
            return Answered::done(result);
        }
        Answered::done(settle(turn, &request, Some(&reply)))
    }
}

/// The result of a question that ends with `reply` (none: it expired).
fn settle(turn: &Turn<'_>, request: &QuestionRequest, reply: Option<&QuestionReply>) -> ToolResult {
    let ending = match reply {
        Some(QuestionReply::Answered { .. }) => QuestionEnding::Answered,
        Some(QuestionReply::Declined) => QuestionEnding::Declined,
        Some(QuestionReply::Cancelled) => QuestionEnding::Cancelled,
        None => QuestionEnding::Expired,
    };
    answered(turn, request, ending);
    request.result(ending, reply)
}

/// Tells observers `request` ended as `ending`.
fn answered(turn: &Turn<'_>, request: &QuestionRequest, ending: QuestionEnding) {
    turn.runner
        .agent
        .executor()
        .emit_event(RunEvent::QuestionAnswered {
            run_id: request.run_id.clone(),
            call_id: request.call_id.clone(),
            question_id: request.question_id.clone(),
            ending,
        });
}

/// The questions asked in a tree of runs, shared by the root's run and
/// every child agent's under it while they run: a question reserves its
/// place before it is asked, so the cap holds for questions (not calls),
/// across the whole tree, for children running at once too, and across
/// pauses (a resume starts the tally from what the state shows asked).
#[derive(Debug, Clone)]
pub(in crate::run) struct Tally(Arc<AtomicU32>);

impl Tally {
    /// A tally that starts at `asked`.
    pub(in crate::run) fn new(asked: u32) -> Self {
        Self(Arc::new(AtomicU32::new(asked)))
    }

    /// Takes `count` more places of `max`; the questions asked so far when
    /// they do not fit.
    fn reserve(&self, count: u32, max: u32) -> Result<(), u32> {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |asked| {
                asked.checked_add(count).filter(|total| *total <= max)
            })
            .map(drop)
    }
}

/// Which steps of a run's history [`asked_in`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::run) enum Steps {
    /// Every step.
    All,
    /// Every step but the last (whose questions are being asked).
    BeforeLast,
}

/// The questions `state`'s run asked in `steps`, and every question of
/// the child agents' runs kept in it (ended or waiting, at any depth): a
/// call's questions count unless run control refused it (not offered, past
/// the cap, or questions that do not fit).
pub(in crate::run) fn asked_in(state: &RunState, steps: Steps) -> u32 {
    let refused: FxHashSet<&str> = state
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool {
                call_id,
                tool,
                result,
            } if tool == ASK_QUESTION
                && matches!(
                    result.error_kind(),
                    Some(
                        ToolErrorKind::PermissionDenied
                            | ToolErrorKind::ToolNotAvailable
                            | ToolErrorKind::InvalidArguments
                            | ToolErrorKind::DuplicateCall
                    )
                ) =>
            {
                Some(call_id.as_str())
            }
            _ => None,
        })
        .collect();
    let mut answers = state
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .collect::<Vec<_>>();
    if steps == Steps::BeforeLast
        && matches!(state.messages.last(), Some(Message::Assistant { .. }))
    {
        answers.pop();
    }
    let own: usize = answers
        .into_iter()
        .flatten()
        .filter(|call| call.name == ASK_QUESTION && !refused.contains(call.id.as_str()))
        .filter_map(|call| parse_questions(&call.input).ok())
        .map(|questions| questions.len())
        .sum();
    let own = u32::try_from(own).unwrap_or(u32::MAX);
    let ended = state.children.iter().map(|child| &child.state);
    let waiting = state.waiting.iter().filter_map(WaitingItem::child_state);
    ended
        .chain(waiting)
        .map(|child| asked_in(child, Steps::All))
        .fold(own, u32::saturating_add)
}
