//! Questions a run asks a person: the built-in `ask_question` tool's shape,
//! the request a waiting question carries, and the replies it takes.
//!
//! A question is run control, like an approval: the runner answers the
//! model's `ask_question` call itself, and no hook, middleware or
//! permission rule sees it. The tool takes what models know from Claude's
//! `AskUserQuestion`: one to four questions, each with a header of at most
//! twelve characters, two to four options (a label and a description) and
//! `multi_select`; a free-text answer is always allowed. Arguments that do
//! not fit are an `invalid_arguments` result and nothing waits.
//!
//! A waiting question is bound as an approval is: its
//! [`question_id`](QuestionRequest::question_id) hashes the run, the call
//! id, the questions and the expiry, and an answer names it; an answer for
//! another run, call or question set is refused. An answer is never an
//! approval: the ids are hashed apart, and a reply of one kind given for a
//! waiting item of the other is refused.
//!
//! A question ends one of four ways the model can tell apart (its result's
//! `status`): `answered`, `declined`, `expired` (no answer before the
//! configured expiry) or `cancelled`.

mod parse;
mod reply;
mod spec;

use iris_core::RunId;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::digest::{arguments_hash, hex};

pub use parse::parse_questions;
pub use reply::{Answer, QuestionEnding, QuestionReply, Reply};
pub use spec::ask_question_spec;

/// The name the model calls to ask the person a question.
pub const ASK_QUESTION: &str = "ask_question";

/// One question to the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    /// The question itself.
    pub question: String,
    /// A short label for it (at most [`Question::MAX_HEADER_CHARS`] characters), as a
    /// tab or chip would show it.
    pub header: String,
    /// The choices offered; the person may also answer in their own words.
    pub options: Vec<QuestionOption>,
    /// Whether several options may be chosen.
    pub multi_select: bool,
}

/// One choice a question offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionOption {
    /// What the person picks.
    pub label: String,
    /// What picking it means.
    pub description: String,
}

impl Question {
    /// Most questions one call asks.
    pub const MAX_PER_CALL: usize = 4;
    /// Fewest options a question offers.
    pub const MIN_OPTIONS: usize = 2;
    /// Most options a question offers.
    pub const MAX_OPTIONS: usize = 4;
    /// Most characters of a question's header.
    pub const MAX_HEADER_CHARS: usize = 12;
    /// Most characters of a question's text.
    pub const MAX_CHARS: usize = 500;
}

impl QuestionOption {
    /// Most characters of an option's label.
    pub const MAX_LABEL_CHARS: usize = 80;
    /// Most characters of an option's description.
    pub const MAX_DESCRIPTION_CHARS: usize = 300;
}

/// A call of `ask_question` that waits for a person, with what to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionRequest {
    /// What an answer must name: SHA-256 (hex) of the run, the call id, the
    /// questions and the expiry, hashed apart from approval ids.
    pub question_id: String,
    /// The run that asks.
    pub run_id: RunId,
    /// The call that asks.
    pub call_id: String,
    /// The questions, in the order the model asked them.
    pub questions: Vec<Question>,
    /// When the question expires, in milliseconds since the Unix epoch; a
    /// resume after it ends the question as `expired`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<u64>,
}

impl QuestionRequest {
    /// The request call `call_id` of `run_id` makes with `questions`.
    #[must_use]
    pub fn new(
        run_id: RunId,
        call_id: String,
        questions: Vec<Question>,
        expires_at_ms: Option<u64>,
    ) -> Self {
        let question_id = question_id(&run_id, &call_id, &questions, expires_at_ms);
        Self {
            question_id,
            run_id,
            call_id,
            questions,
            expires_at_ms,
        }
    }

    /// Whether the request is what its `question_id` binds (a request kept
    /// outside the process and edited afterwards is not).
    #[must_use]
    pub fn is_intact(&self) -> bool {
        self.question_id
            == question_id(
                &self.run_id,
                &self.call_id,
                &self.questions,
                self.expires_at_ms,
            )
    }

    /// Whether the question has expired at `now_ms`.
    #[must_use]
    pub fn expired_at(&self, now_ms: u64) -> bool {
        self.expires_at_ms.is_some_and(|at| now_ms >= at)
    }
}

/// The id an answer to `questions` asked by call `call_id` must carry.
fn question_id(
    run_id: &RunId,
    call_id: &str,
    questions: &[Question],
    expires_at_ms: Option<u64>,
) -> String {
    let questions = serde_json::to_value(questions).unwrap_or_default();
    let expiry = expires_at_ms.map(|at| at.to_string()).unwrap_or_default();
    let mut hasher = Sha256::new();
    // The domain tag keeps a question id from ever equalling an approval
    // id; each part is prefixed by its length, so no two requests hash the
    // same bytes.
    for part in [
        "iris question",
        run_id.as_str(),
        call_id,
        &arguments_hash(&questions),
        &expiry,
    ] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex(&hasher.finalize())
}

#[cfg(test)]
mod tests;
