//! A model that answers from a script, turn by turn.

use std::sync::{Mutex, PoisonError};

use iris_core::{BoxFuture, ToolUseBlock};
use iris_model::{
    FinishReason, Model, ModelDelta, ModelError, ModelRequest, ModelResponse, OnDelta, Usage,
};
use serde_json::Value;

use crate::chunks::{Seeded, cut};
use crate::request::RecordedRequest;

/// One answer of a [`ScriptedModel`]: text, one call, several calls (with
/// or without text), or an error, with the usage it reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    text: Option<String>,
    /// Calls as scripted: an id when the script gave one.
    calls: Vec<(Option<String>, String, Value)>,
    usage: Usage,
    error: Option<String>,
}

impl Turn {
    /// The model answers `text` and calls nothing: the run finishes.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            calls: Vec::new(),
            usage: Usage::default(),
            error: None,
        }
    }

    /// The model calls `tool` with `arguments`; the call's id is
    /// `call_<turn>_<n>` (turns and calls counted from 1).
    #[must_use]
    pub fn call(tool: impl Into<String>, arguments: Value) -> Self {
        Self::calls([(tool, arguments)])
    }

    /// The model calls each `(tool, arguments)` in order, in one answer.
    #[must_use]
    pub fn calls<T: Into<String>>(calls: impl IntoIterator<Item = (T, Value)>) -> Self {
        Self {
            text: None,
            calls: calls
                .into_iter()
                .map(|(tool, arguments)| (None, tool.into(), arguments))
                .collect(),
            usage: Usage::default(),
            error: None,
        }
    }

    /// The model fails with `message`, as an adapter reports a provider
    /// that could not answer.
    #[must_use]
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            text: None,
            calls: Vec::new(),
            usage: Usage::default(),
            error: Some(message.into()),
        }
    }

    /// The model calls `tool` with `arguments` under the id `id`, for tests
    /// that name call ids.
    #[must_use]
    pub fn call_with_id(id: impl Into<String>, tool: impl Into<String>, arguments: Value) -> Self {
        Self::calls(std::iter::empty::<(String, Value)>()).and_call_with_id(id, tool, arguments)
    }

    /// Adds a call with the id `id`, for tests that name call ids.
    #[must_use]
    pub fn and_call_with_id(
        mut self,
        id: impl Into<String>,
        tool: impl Into<String>,
        arguments: Value,
    ) -> Self {
        self.calls.push((Some(id.into()), tool.into(), arguments));
        self
    }

    /// Adds text beside the calls.
    #[must_use]
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// The tokens this answer reports.
    #[must_use]
    pub fn with_usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = Usage::new(input_tokens, output_tokens);
        self
    }

    /// The answer this turn gives as turn `turn` (counted from 1).
    fn answer(&self, turn: usize) -> Result<ModelResponse, ModelError> {
        if let Some(message) = &self.error {
            return Err(ModelError::new(message.clone()));
        }
        let tool_calls: Vec<ToolUseBlock> = self
            .calls
            .iter()
            .enumerate()
            .map(|(i, (id, tool, arguments))| {
                let id = id
                    .clone()
                    .unwrap_or_else(|| format!("call_{turn}_{}", i + 1));
                ToolUseBlock::new(id, tool.clone(), arguments.clone())
            })
            .collect();
        let finish = if tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        Ok(ModelResponse {
            text: self.text.clone(),
            tool_calls,
            usage: self.usage,
            finish,
        })
    }
}

impl From<ModelResponse> for Turn {
    /// The answer `response`, as it is (its calls keep their ids).
    fn from(response: ModelResponse) -> Self {
        Self {
            text: response.text,
            calls: response
                .tool_calls
                .into_iter()
                .map(|call| (Some(call.id), call.name, call.input))
                .collect(),
            usage: response.usage,
            error: None,
        }
    }
}

/// A model that answers each request with the next [`Turn`] of its
/// script, and keeps every request for assertions ([`requests`]).
///
/// Streamed, it hands each answer over in pieces (text, then each call's
/// id, name and argument JSON) cut where a seed says, as a provider's
/// stream does; the runner streams when an observer listens, so such a
/// test runs the loop's streaming path. A request past the script's end
/// fails with a message that names the turn asked for.
///
/// [`requests`]: ScriptedModel::requests
#[derive(Debug)]
pub struct ScriptedModel {
    turns: Vec<Turn>,
    seed: u64,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    answered: usize,
    requests: Vec<RecordedRequest>,
}

impl ScriptedModel {
    /// A model that answers with `turns`, in order.
    pub fn new(turns: impl IntoIterator<Item = Turn>) -> Self {
        Self {
            turns: turns.into_iter().collect(),
            seed: 0,
            state: Mutex::new(State::default()),
        }
    }

    /// Cuts streamed answers at places `seed` decides (0 by default).
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Every request answered (or refused past the script's end), oldest
    /// first.
    #[must_use]
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// How many turns of the script were used.
    #[must_use]
    pub fn turns_used(&self) -> usize {
        self.lock().answered.min(self.turns.len())
    }

    /// Whether every turn of the script was used.
    #[must_use]
    pub fn is_exhausted(&self) -> bool {
        self.turns_used() == self.turns.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records `request` and gives the next turn's answer, with its number.
    fn next(&self, request: &ModelRequest<'_>) -> (usize, Result<ModelResponse, ModelError>) {
        let recorded = RecordedRequest::of(request);
        let mut state = self.lock();
        state.answered += 1;
        let turn = state.answered;
        let answer = match self.turns.get(turn - 1) {
            Some(scripted) => scripted.answer(turn),
            None => Err(ModelError::new(format!(
                "the scripted model was asked for turn {turn}, but its script has {} turn(s); add a turn, or find out why the run asked again (the request's newest message: {})",
                self.turns.len(),
                recorded.newest()
            ))),
        };
        state.requests.push(recorded);
        (turn, answer)
    }
}

impl Model for ScriptedModel {
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let (_, answer) = self.next(&request);
        Box::pin(async move { answer })
    }

    fn complete_streaming<'a>(
        &'a self,
        request: ModelRequest<'a>,
        on_delta: OnDelta<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let (turn, answer) = self.next(&request);
        streamed(
            answer,
            self.seed ^ (turn as u64).wrapping_mul(0x100_0000_01b3),
            on_delta,
        )
    }
}

/// `answer` as a streamed answer: handed to `on_delta` in pieces first
/// (cut as `seed` says), when it is one.
pub(crate) fn streamed(
    answer: Result<ModelResponse, ModelError>,
    seed: u64,
    on_delta: OnDelta<'_>,
) -> BoxFuture<'static, Result<ModelResponse, ModelError>> {
    if let Ok(response) = &answer {
        stream(response, &mut Seeded::new(seed), on_delta);
    }
    Box::pin(async move { answer })
}

/// Hands `response` to `on_delta` in pieces: its text, then each call's
/// id and name, then its arguments' JSON.
fn stream(response: &ModelResponse, rng: &mut Seeded, on_delta: OnDelta<'_>) {
    if let Some(text) = &response.text {
        for piece in cut(text, rng) {
            on_delta(ModelDelta::Text(piece));
        }
    }
    for (index, call) in response.tool_calls.iter().enumerate() {
        on_delta(ModelDelta::ToolCall {
            index,
            id: Some(&call.id),
            name: Some(&call.name),
            arguments: "",
        });
        let arguments = call.input.to_string();
        for piece in cut(&arguments, rng) {
            on_delta(ModelDelta::ToolCall {
                index,
                id: None,
                name: None,
                arguments: piece,
            });
        }
    }
}
