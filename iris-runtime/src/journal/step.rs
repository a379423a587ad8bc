//! A step's claims taken whole, for a journal that keeps steps whole
//! ([`CallJournal::by_step`]). When the first call of the step that may not
//! run twice reaches its body, every such call of the step is claimed in
//! one entry; each takes its answer there; their results go back in one
//! entry after the step's last call.
//!
//! Claiming at the first such body, not when the step begins, keeps what
//! runs before it (reads, idempotent writes) outside the claim: a process
//! that dies there leaves nothing claimed, and its replacement runs the
//! step's writes as if nothing had happened.

use std::sync::{Mutex, PoisonError};

use iris_core::{RunId, ToolResult};
use tokio::sync::OnceCell;

use super::{Claimed, JournalError, Journaled};

/// One step's claims, carried on the step's context to the calls' bodies.
pub(crate) struct StepClaims {
    journal: Journaled,
    run: RunId,
    /// The calls to claim, in step order.
    ids: Vec<String>,
    /// What the claim entry answered, once a body asked for it.
    answered: OnceCell<Answered>,
    /// The results of the claimed calls that ran, in the order they ended.
    results: Mutex<Vec<(String, ToolResult)>>,
}

/// The claim entry's answer.
enum Answered {
    /// Each call's answer, until the call takes it. `any_new`: whether any
    /// was claimed anew; only then is a result entry written (a step whose
    /// every call ran or was cut off in an earlier attempt wrote its entry
    /// then).
    Claimed {
        answers: Mutex<Vec<(String, Claimed)>>,
        any_new: bool,
    },
    /// The journal would not claim them: none runs.
    Refused(JournalError),
}

/// What a call of the step learns when it reaches its body.
pub(crate) enum StepAnswer<'s> {
    /// The journal's answer for this call.
    Claimed(Claimed),
    /// The journal would not claim the step: the call does not run.
    Refused(&'s JournalError),
}

impl StepClaims {
    /// The claims of `ids`, calls of one step of `run`, taken when the
    /// first of them reaches its body.
    pub(crate) fn new(journal: Journaled, run: RunId, ids: Vec<String>) -> Self {
        Self {
            journal,
            run,
            ids,
            answered: OnceCell::new(),
            results: Mutex::new(Vec::new()),
        }
    }

    /// The answer for `call_id`, claiming the step's calls if none has
    /// yet; `None` when the step does not claim it, or it took its answer
    /// already.
    pub(crate) async fn take(&self, call_id: &str) -> Option<StepAnswer<'_>> {
        if !self.claims(call_id) {
            return None;
        }
        match self.answered.get_or_init(|| self.claim()).await {
            Answered::Refused(why) => Some(StepAnswer::Refused(why)),
            Answered::Claimed { answers, .. } => {
                let mut answers = answers.lock().unwrap_or_else(PoisonError::into_inner);
                let at = answers.iter().position(|(id, _)| id == call_id)?;
                Some(StepAnswer::Claimed(answers.swap_remove(at).1))
            }
        }
    }

    async fn claim(&self) -> Answered {
        let ids: Vec<&str> = self.ids.iter().map(String::as_str).collect();
        match self.journal.0.claim_step(&self.run, &ids).await {
            Ok(answers) if answers.len() == ids.len() => {
                let any_new = answers.iter().any(|answer| matches!(answer, Claimed::New));
                Answered::Claimed {
                    answers: Mutex::new(self.ids.iter().cloned().zip(answers).collect()),
                    any_new,
                }
            }
            Ok(answers) => Answered::Refused(JournalError::new(
                format!("claiming the {} calls of a step", ids.len()),
                format!("the journal answered for {} of them", answers.len()),
            )),
            Err(why) => Answered::Refused(why),
        }
    }

    /// Whether the step claims `call_id` with the others.
    pub(crate) fn claims(&self, call_id: &str) -> bool {
        self.ids.iter().any(|id| id == call_id)
    }

    /// Keeps the result of a call of the step that ran, for
    /// [`record`](Self::record).
    pub(crate) fn keep(&self, call_id: &str, result: &ToolResult) {
        self.results
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((call_id.to_owned(), result.clone()));
    }

    /// Records the step's results in one entry, when it claimed a call
    /// anew. A failure is logged: the results still went to the model.
    pub(crate) async fn record(&self) {
        let Some(Answered::Claimed { any_new: true, .. }) = self.answered.get() else {
            return;
        };
        let results =
            std::mem::take(&mut *self.results.lock().unwrap_or_else(PoisonError::into_inner));
        if let Err(why) = self.journal.0.record_step(&self.run, &results).await {
            tracing::error!(calls = results.len(), error = ?why, "a step's results could not be recorded");
        }
    }
}
