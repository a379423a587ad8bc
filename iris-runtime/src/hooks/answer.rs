//! What a hook answers, one type per event, and how a hook fails.

use serde::{Deserialize, Serialize};

/// A `tool.before` hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BeforeAnswer {
    /// Let the call go on.
    Allow,
    /// Refuse the call; the model reads the reason.
    Deny {
        /// Why, for the model.
        reason: String,
    },
}

impl BeforeAnswer {
    /// Refuse the call, telling the model why.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::Deny {
            reason: reason.into(),
        }
    }
}

/// A `tool.after` hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterAnswer {
    /// Nothing to add.
    Nothing,
    /// Text the model reads after the real result, under `[Hook feedback]`.
    Feedback(String),
}

impl AfterAnswer {
    /// Feedback the model reads after the result.
    pub fn feedback(text: impl Into<String>) -> Self {
        Self::Feedback(text.into())
    }
}

/// What a hook may return for an event whose answer is `A`: the answer
/// itself, or `Result<A, E>` for a hook that can fail, with any error `E`.
///
/// For `run.started` and `run.finished`, `A` is `()`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an answer a hook of this event can give",
    label = "expected `{A}`, or `Result<{A}, E>` where `E` is an error",
    note = "`tool.before` hooks answer `BeforeAnswer`, `tool.after` hooks `AfterAnswer`, run hooks `()`"
)]
pub trait IntoHookAnswer<A> {
    /// The answer, or why there is none.
    ///
    /// # Errors
    /// The hook's own failure.
    fn into_hook_answer(self) -> Result<A, HookFailure>;
}

macro_rules! answers {
    ($($answer:ty),*) => {$(
        impl IntoHookAnswer<$answer> for $answer {
            fn into_hook_answer(self) -> Result<$answer, HookFailure> {
                Ok(self)
            }
        }

        impl<E> IntoHookAnswer<$answer> for Result<$answer, E>
        where
            E: Into<Box<dyn std::error::Error + Send + Sync>>,
        {
            fn into_hook_answer(self) -> Result<$answer, HookFailure> {
                self.map_err(HookFailure::from_error)
            }
        }
    )*};
}

answers!(BeforeAnswer, AfterAnswer, ());

/// Why a hook could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HookFailure {
    /// The hook ran past its deadline.
    #[error("did not answer within {0:?}")]
    Timeout(std::time::Duration),
    /// The command could not be started.
    #[error("could not start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// Reading or writing the command's pipes failed.
    #[error("talking to the command failed: {0}")]
    Io(#[source] std::io::Error),
    /// The command exited unsuccessfully.
    #[error("exited with {status}{}", stderr_note(.stderr))]
    Exit {
        /// The exit status.
        status: String,
        /// What it wrote to stderr.
        stderr: String,
    },
    /// The command wrote more than it may to one of its streams.
    #[error("wrote more than {limit} bytes to {stream}, so it was killed")]
    OutputTooLarge {
        /// `stdout` or `stderr`.
        stream: &'static str,
        /// The limit in bytes.
        limit: usize,
    },
    /// A hook written in code panicked.
    #[error("panicked: {0}")]
    Panicked(String),
    /// The answer was not one JSON object of the shape its event takes.
    #[error("answered malformed JSON ({source}); expected one object such as {expected}")]
    Malformed {
        /// The parse error.
        #[source]
        source: serde_json::Error,
        /// The answers the event takes.
        expected: &'static str,
    },
    /// A hook written in code reported a failure.
    #[error("{0}")]
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

impl HookFailure {
    /// What the model may read of this failure: its kind, never what the
    /// command wrote or its program's path (a hook's stderr can hold
    /// secrets). The whole failure goes to the host's logs.
    #[must_use]
    pub fn summary(&self) -> String {
        match self {
            Self::Timeout(after) => format!("did not answer within {after:?}"),
            Self::Spawn { .. } => "could not be started".to_owned(),
            Self::Io(_) => "could not be talked to".to_owned(),
            Self::Exit { status, .. } => format!("exited with {status}"),
            Self::OutputTooLarge { stream, limit } => {
                format!("wrote more than {limit} bytes to {stream}")
            }
            // Hooks written in code: their words are the host's own.
            Self::Panicked(message) => format!("panicked: {message}"),
            Self::Malformed { expected, .. } => {
                format!("answered malformed JSON; expected one object such as {expected}")
            }
            Self::Failed(error) => error.to_string(),
        }
    }

    /// A hook's own error; a `HookFailure` stays what it is.
    pub fn from_error(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        match error.into().downcast::<HookFailure>() {
            Ok(failure) => *failure,
            Err(other) => HookFailure::Failed(other),
        }
    }
}

fn stderr_note(stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; stderr: {stderr}")
    }
}

/// The text of a panic's payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

/// The answers of command hooks, as JSON.
pub(crate) mod wire {
    use super::{AfterAnswer, BeforeAnswer, Deserialize, HookFailure};

    /// A `tool.before` verdict.
    #[derive(Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Decision {
        Allow,
        Deny,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Before {
        #[serde(default)]
        decision: Option<Decision>,
        #[serde(default)]
        reason: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct After {
        #[serde(default)]
        feedback: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Run {}

    fn parse<T: serde::de::DeserializeOwned>(
        json: &[u8],
        expected: &'static str,
    ) -> Result<T, HookFailure> {
        serde_json::from_slice(json).map_err(|source| HookFailure::Malformed { source, expected })
    }

    /// `{}`, `{"decision": "allow"}` or `{"decision": "deny", "reason": "..."}`.
    pub(crate) fn before(json: &[u8]) -> Result<BeforeAnswer, HookFailure> {
        let answer: Before = parse(
            json,
            r#"`{}`, `{"decision": "allow"}` or `{"decision": "deny", "reason": "..."}` (a `tool.before` hook answers a decision)"#,
        )?;
        Ok(match answer.decision {
            Some(Decision::Deny) => BeforeAnswer::Deny {
                reason: answer
                    .reason
                    .unwrap_or_else(|| "no reason given".to_owned()),
            },
            Some(Decision::Allow) | None => BeforeAnswer::Allow,
        })
    }

    /// `{}` or `{"feedback": "..."}`.
    pub(crate) fn after(json: &[u8]) -> Result<AfterAnswer, HookFailure> {
        let answer: After = parse(
            json,
            r#"`{}` or `{"feedback": "..."}` (a `tool.after` hook answers feedback)"#,
        )?;
        Ok(answer
            .feedback
            .map_or(AfterAnswer::Nothing, AfterAnswer::Feedback))
    }

    /// `{}`.
    pub(crate) fn run(json: &[u8]) -> Result<(), HookFailure> {
        parse::<Run>(json, "`{}` (run hooks answer nothing)").map(|Run {}| ())
    }
}

/// How a hook answered, as [`RunEvent::HookFired`](crate::RunEvent::HookFired) reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[non_exhaustive]
pub enum HookOutcome {
    /// It let the call go on, or had nothing to say.
    Allowed,
    /// It refused the call, with this reason.
    Denied {
        /// The reason the model reads.
        reason: String,
    },
    /// It added this feedback to the result.
    Feedback {
        /// The feedback.
        text: String,
    },
    /// It failed (a `tool.before` hook that fails refuses the call).
    Failed {
        /// What went wrong.
        reason: String,
    },
}
