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

/// A `model.before` hook's answer: the request about to be sent goes as it
/// is, is refused (an input guardrail), or is steered for this turn.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelBeforeAnswer {
    /// Send the request as it is.
    Send,
    /// Do not send it: the run ends as refused, naming the hook and why.
    Refuse {
        /// Why, for the host and the trace.
        reason: String,
    },
    /// Send it changed, for this turn only.
    Steer(Steer),
}

impl ModelBeforeAnswer {
    /// Refuse the turn, saying why.
    pub fn refuse(reason: impl Into<String>) -> Self {
        Self::Refuse {
            reason: reason.into(),
        }
    }
}

/// How a `model.before` hook changes one turn's request. Every change is
/// recorded: the run's events name the hook (`HookFired`, outcome
/// `steered`), and its trace the turn's `chat` span.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Steer {
    /// Offer exactly these tools this turn, by name: fewer than offered
    /// (narrowed), or tools of the agent not offered yet, such as deferred
    /// ones (extended); never a tool the agent does not have. Of several
    /// hooks that name tools, each narrows what those before it chose.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Instructions added after the agent's own for this turn.
    #[serde(default)]
    pub instructions: Option<String>,
    /// The sampling temperature for this turn.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// The answer's token limit for this turn.
    #[serde(default)]
    pub max_tokens: Option<u32>,
}

impl Steer {
    /// Whether it changes nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Writes this steer into a `model.before` request view (`tools`,
    /// `instructions`, `settings`), so that the hooks after the one that
    /// steered see the request as it will be sent.
    pub fn apply_to(&self, request: &mut serde_json::Value) {
        if let Some(tools) = &self.tools {
            request["tools"] = serde_json::json!(tools);
        }
        if let Some(extra) = &self.instructions {
            request["instructions"] =
                serde_json::Value::String(match request["instructions"].as_str() {
                    Some(own) => format!("{own}\n\n{extra}"),
                    None => extra.clone(),
                });
        }
        if let Some(temperature) = self.temperature {
            request["settings"]["temperature"] = serde_json::json!(temperature);
        }
        if let Some(max_tokens) = self.max_tokens {
            request["settings"]["max_tokens"] = serde_json::json!(max_tokens);
        }
    }

    /// The names of what it changes, for events.
    #[must_use]
    pub fn changed(&self) -> Vec<String> {
        [
            ("tools", self.tools.is_some()),
            ("instructions", self.instructions.is_some()),
            ("temperature", self.temperature.is_some()),
            ("max_tokens", self.max_tokens.is_some()),
        ]
        .into_iter()
        .filter(|(_, set)| *set)
        .map(|(name, _)| name.to_owned())
        .collect()
    }

    /// `later` applied over this: its tools narrow these (a later hook
    /// never offers a tool an earlier one left out; the first list may
    /// extend the offer), its settings win where it sets them, its
    /// instructions come after these.
    #[must_use]
    pub fn then(mut self, later: Steer) -> Self {
        self.tools = match (self.tools, later.tools) {
            (Some(first), Some(then)) => {
                Some(then.into_iter().filter(|t| first.contains(t)).collect())
            }
            (first, then) => then.or(first),
        };
        self.instructions = match (self.instructions, later.instructions) {
            (Some(first), Some(then)) => Some(format!("{first}\n\n{then}")),
            (first, then) => then.or(first),
        };
        self.temperature = later.temperature.or(self.temperature);
        self.max_tokens = later.max_tokens.or(self.max_tokens);
        self
    }
}

/// A `model.after` hook's answer: the model's answer is acted on as it is,
/// refused (an output guardrail), asked for again with feedback, or its
/// text redacted before it is recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelAfterAnswer {
    /// Act on the answer as it is.
    Accept,
    /// Act on nothing: the run ends as refused, naming the hook and why.
    Refuse {
        /// Why, for the host and the trace.
        reason: String,
    },
    /// Ask the model again: its answer (text only; its calls do not run)
    /// and this feedback are added to the history.
    Retry {
        /// What the model reads.
        feedback: String,
    },
    /// Record and act on the answer with this text in place of the model's.
    Redact {
        /// The text kept.
        text: String,
    },
}

impl ModelAfterAnswer {
    /// Refuse the answer, saying why.
    pub fn refuse(reason: impl Into<String>) -> Self {
        Self::Refuse {
            reason: reason.into(),
        }
    }

    /// Ask the model again, telling it `feedback`.
    pub fn retry(feedback: impl Into<String>) -> Self {
        Self::Retry {
            feedback: feedback.into(),
        }
    }

    /// Keep `text` in place of the answer's.
    pub fn redact(text: impl Into<String>) -> Self {
        Self::Redact { text: text.into() }
    }
}

/// What a hook may return for an event whose answer is `A`: the answer
/// itself, or `Result<A, E>` for a hook that can fail, with any error `E`.
///
/// For `run.started` and `run.finished`, `A` is `()`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an answer a hook of this event can give",
    label = "expected `{A}`, or `Result<{A}, E>` where `E` is an error",
    note = "`tool.before` hooks answer `BeforeAnswer`, `tool.after` hooks `AfterAnswer`, `model.before` hooks `ModelBeforeAnswer`, `model.after` hooks `ModelAfterAnswer`, run hooks `()` (a `run.started` guard `BeforeAnswer`)"
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

answers!(
    BeforeAnswer,
    AfterAnswer,
    ModelBeforeAnswer,
    ModelAfterAnswer,
    ()
);

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
    use super::{
        AfterAnswer, BeforeAnswer, Deserialize, HookFailure, ModelAfterAnswer, ModelBeforeAnswer,
        Steer,
    };

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

    /// A `model.before` verdict.
    #[derive(Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Turn {
        Send,
        Refuse,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct ModelBefore {
        #[serde(default)]
        decision: Option<Turn>,
        #[serde(default)]
        reason: Option<String>,
        #[serde(default)]
        tools: Option<Vec<String>>,
        #[serde(default)]
        instructions: Option<String>,
        #[serde(default)]
        temperature: Option<f64>,
        #[serde(default)]
        max_tokens: Option<u32>,
    }

    /// `{}`, `{"decision": "refuse", "reason": "..."}`, or a steer: any of
    /// `tools`, `instructions`, `temperature`, `max_tokens`.
    pub(crate) fn model_before(json: &[u8]) -> Result<ModelBeforeAnswer, HookFailure> {
        let answer: ModelBefore = parse(
            json,
            r#"`{}`, `{"decision": "refuse", "reason": "..."}` or `{"tools": [...], "instructions": "...", "temperature": 0.2, "max_tokens": 500}` (a `model.before` hook sends, refuses or steers the turn)"#,
        )?;
        let steer = Steer {
            tools: answer.tools,
            instructions: answer.instructions,
            temperature: answer.temperature,
            max_tokens: answer.max_tokens,
        };
        if answer.decision.is_none() && answer.reason.is_some() {
            return Err(HookFailure::Failed(
                "`reason` goes with `\"decision\": \"refuse\"`; say it".into(),
            ));
        }
        if matches!(answer.decision, Some(Turn::Refuse)) && !steer.is_empty() {
            return Err(HookFailure::Failed(
                "a `model.before` answer refuses or steers, not both".into(),
            ));
        }
        Ok(match answer.decision {
            Some(Turn::Refuse) => ModelBeforeAnswer::Refuse {
                reason: answer
                    .reason
                    .unwrap_or_else(|| "no reason given".to_owned()),
            },
            _ if !steer.is_empty() => ModelBeforeAnswer::Steer(steer),
            Some(Turn::Send) | None => ModelBeforeAnswer::Send,
        })
    }

    /// A `model.after` verdict.
    #[derive(Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Answer {
        Accept,
        Refuse,
        Retry,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct ModelAfter {
        #[serde(default)]
        decision: Option<Answer>,
        #[serde(default)]
        reason: Option<String>,
        #[serde(default)]
        feedback: Option<String>,
        #[serde(default)]
        redact: Option<String>,
    }

    /// `{}`, `{"decision": "refuse", "reason": "..."}`, `{"decision":
    /// "retry", "feedback": "..."}` or `{"redact": "text kept"}`.
    pub(crate) fn model_after(json: &[u8]) -> Result<ModelAfterAnswer, HookFailure> {
        let answer: ModelAfter = parse(
            json,
            r#"`{}`, `{"decision": "refuse", "reason": "..."}`, `{"decision": "retry", "feedback": "..."}` or `{"redact": "..."}` (a `model.after` hook accepts, refuses, retries or redacts the answer)"#,
        )?;
        if answer.redact.is_some() && answer.decision.is_some() {
            return Err(HookFailure::Failed(
                "a `model.after` answer redacts or decides, not both: give `redact` alone, or a `decision`".into(),
            ));
        }
        if answer.decision.is_none() && (answer.reason.is_some() || answer.feedback.is_some()) {
            return Err(HookFailure::Failed(
                "`reason` and `feedback` go with a `decision` (`refuse` or `retry`); say which"
                    .into(),
            ));
        }
        Ok(match (answer.decision, answer.redact) {
            (Some(Answer::Refuse), _) => ModelAfterAnswer::Refuse {
                reason: answer
                    .reason
                    .unwrap_or_else(|| "no reason given".to_owned()),
            },
            (Some(Answer::Retry), _) => ModelAfterAnswer::Retry {
                feedback: answer.feedback.unwrap_or_else(|| "answer again".to_owned()),
            },
            (_, Some(text)) => ModelAfterAnswer::Redact { text },
            (Some(Answer::Accept) | None, None) => ModelAfterAnswer::Accept,
        })
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
    /// It changed the model's request for one turn (`model.before`).
    Steered {
        /// What it changed: `tools`, `instructions`, `temperature`,
        /// `max_tokens`.
        changed: Vec<String>,
    },
    /// It sent the model's answer back with feedback (`model.after`).
    Retried {
        /// The feedback.
        feedback: String,
    },
    /// It replaced the model's text before it was recorded (`model.after`).
    Redacted,
    /// It failed (a `tool.before` hook that fails refuses the call).
    Failed {
        /// What went wrong.
        reason: String,
    },
}
