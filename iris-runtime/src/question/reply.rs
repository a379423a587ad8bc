//! What a person replies to a waiting item, and what the model is told.

use iris_core::ToolResult;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::QuestionRequest;
use crate::ApprovalDecision;

/// A person's reply to one waiting item of a run: a decision for an
/// approval, an answer for a question. A reply of one kind for an item of
/// the other is refused. Written as the decision or the answer alone, so
/// a decision recorded before questions existed reads back as one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Reply {
    /// For a call that waits for approval.
    Decision(ApprovalDecision),
    /// For a question.
    Answer(QuestionReply),
}

impl From<ApprovalDecision> for Reply {
    fn from(decision: ApprovalDecision) -> Self {
        Reply::Decision(decision)
    }
}

impl From<QuestionReply> for Reply {
    fn from(answer: QuestionReply) -> Self {
        Reply::Answer(answer)
    }
}

/// A person's reply to a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum QuestionReply {
    /// One answer per question, in the order asked.
    Answered {
        /// The `question_id` of the request that was shown.
        question_id: String,
        /// The answers.
        answers: Vec<Answer>,
    },
    /// The person chose not to answer.
    Declined,
    /// The question was withdrawn (a dialog dismissed, a client gone).
    Cancelled,
}

impl QuestionReply {
    /// Answers `request` with `answers`, one per question.
    #[must_use]
    pub fn answer(request: &QuestionRequest, answers: Vec<Answer>) -> Self {
        QuestionReply::Answered {
            question_id: request.question_id.clone(),
            answers,
        }
    }

    /// Declines to answer.
    #[must_use]
    pub fn decline() -> Self {
        QuestionReply::Declined
    }

    /// Withdraws the question.
    #[must_use]
    pub fn cancel() -> Self {
        QuestionReply::Cancelled
    }
}

/// The answer to one question: options chosen by label, words of the
/// person's own, or both.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// Labels of the chosen options (several only for `multi_select`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selected: Vec<String>,
    /// The person's own words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl Answer {
    /// Most characters of a person's free-text answer to one question.
    pub const MAX_CHARS: usize = 2_000;

    /// Chooses the option labelled `label`.
    #[must_use]
    pub fn choose(label: impl Into<String>) -> Self {
        Self {
            selected: vec![label.into()],
            text: None,
        }
    }

    /// Chooses every option in `labels`.
    #[must_use]
    pub fn choose_all(labels: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            selected: labels.into_iter().map(Into::into).collect(),
            text: None,
        }
    }

    /// Answers in the person's own words.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            selected: Vec::new(),
            text: Some(text.into()),
        }
    }
}

/// How a question ended, as the model reads it in the call's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionEnding {
    /// The person answered.
    Answered,
    /// The person chose not to.
    Declined,
    /// Nobody answered before it expired.
    Expired,
    /// It was withdrawn.
    Cancelled,
}

impl QuestionEnding {
    /// The ending as its result's `status` names it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            QuestionEnding::Answered => "answered",
            QuestionEnding::Declined => "declined",
            QuestionEnding::Expired => "expired",
            QuestionEnding::Cancelled => "cancelled",
        }
    }
}

impl QuestionRequest {
    /// Checks `reply` against what was asked: an answer names this
    /// request's `question_id`, gives one answer per question, each an
    /// offered label (several only where `multi_select`) or words of the
    /// person's own of at most [`Answer::MAX_CHARS`] characters.
    ///
    /// # Errors
    /// Why the reply does not fit, for the person who gave it.
    pub fn check(&self, reply: &QuestionReply) -> Result<(), String> {
        let QuestionReply::Answered {
            question_id,
            answers,
        } = reply
        else {
            return Ok(());
        };
        if *question_id != self.question_id {
            return Err(
                "the answer names another question set (its `question_id` is not this question's): answer the questions as they were shown"
                    .to_owned(),
            );
        }
        if answers.len() != self.questions.len() {
            return Err(format!(
                "{} questions were asked and {} answers given; give one answer per question, in order",
                self.questions.len(),
                answers.len()
            ));
        }
        for (at, (question, answer)) in self.questions.iter().zip(answers).enumerate() {
            let which = || format!("answer {} (`{}`)", at + 1, shown(&question.header));
            let text = answer.text.as_deref().map(str::trim).unwrap_or_default();
            if answer.selected.is_empty() && text.is_empty() {
                return Err(format!(
                    "{} chooses nothing and says nothing; choose an option or answer in words",
                    which()
                ));
            }
            if answer.selected.len() > 1 && !question.multi_select {
                return Err(format!(
                    "{} chooses {} options, and this question takes one",
                    which(),
                    answer.selected.len()
                ));
            }
            for (picked, label) in answer.selected.iter().enumerate() {
                if answer.selected[..picked].contains(label) {
                    return Err(format!(
                        "{} chooses `{}` more than once; choose each option at most once",
                        which(),
                        shown(label)
                    ));
                }
                if !question.options.iter().any(|o| &o.label == label) {
                    let offered: Vec<_> = question
                        .options
                        .iter()
                        .map(|o| format!("`{}`", shown(&o.label)))
                        .collect();
                    return Err(format!(
                        "{} chooses `{}`, which was not offered; choose one of {}, or answer in words",
                        which(),
                        shown(label),
                        offered.join(", ")
                    ));
                }
            }
            let chars = answer.text.as_deref().map_or(0, |t| t.chars().count());
            if chars > Answer::MAX_CHARS {
                return Err(format!(
                    "{} has {chars} characters of text; keep it to {}",
                    which(),
                    Answer::MAX_CHARS
                ));
            }
        }
        Ok(())
    }

    /// The result the model reads for the question's `ending`; `reply` is
    /// the checked answer when it was answered.
    #[must_use]
    pub fn result(&self, ending: QuestionEnding, reply: Option<&QuestionReply>) -> ToolResult {
        let status = ending.as_str();
        let text = match ending {
            QuestionEnding::Declined => {
                "The person declined to answer. Go on without the answer, and do not ask the same again.".to_owned()
            }
            QuestionEnding::Expired => {
                "Nobody answered before the question expired. Go on with your best judgement, and say what you assumed.".to_owned()
            }
            QuestionEnding::Cancelled => {
                "The question was withdrawn before it was answered. Go on without the answer.".to_owned()
            }
            QuestionEnding::Answered => {
                let Some(QuestionReply::Answered { answers, .. }) = reply else {
                    return ToolResult::json(json!({"status": status}));
                };
                let mut text = String::from("The person answered:");
                let mut data = Vec::with_capacity(answers.len());
                for (question, answer) in self.questions.iter().zip(answers) {
                    text.push_str("\n- ");
                    text.push_str(&question.question);
                    text.push_str(" -> ");
                    let mut parts: Vec<String> = answer.selected.clone();
                    if let Some(words) = answer.text.as_deref().filter(|t| !t.trim().is_empty()) {
                        parts.push(format!("\"{words}\""));
                    }
                    text.push_str(&parts.join(", "));
                    data.push(json!({
                        "header": question.header,
                        "question": question.question,
                        "selected": answer.selected,
                        "text": answer.text,
                    }));
                }
                return ToolResult::text(text)
                    .with_data(json!({"status": status, "answers": data}));
            }
        };
        ToolResult::text(text).with_data(json!({"status": status}))
    }
}

fn shown(text: &str) -> String {
    crate::echo::for_person(text, crate::echo::ECHO_CHARS)
}
