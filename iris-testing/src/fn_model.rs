//! A model made of a closure.

use std::sync::{Mutex, PoisonError};

use iris_core::BoxFuture;
use iris_core::ToolUseBlock;
use iris_model::{Message, Model, ModelError, ModelRequest, ModelResponse, OnDelta};

use crate::request::RecordedRequest;
use crate::scripted::streamed;

type Answer = dyn Fn(&RecordedRequest) -> Result<ModelResponse, ModelError> + Send + Sync;

/// A model whose every answer a closure gives, from the whole request
/// (what was offered and the history so far); requests are kept as by
/// [`ScriptedModel`](crate::ScriptedModel), and streamed answers are cut
/// the same way.
pub struct FnModel {
    answer: Box<Answer>,
    requests: Mutex<Vec<RecordedRequest>>,
    keep: bool,
    answered: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for FnModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnModel").finish_non_exhaustive()
    }
}

impl FnModel {
    /// A model that answers from the history alone, the same in every
    /// process (what runs that move between processes, on a store or
    /// Restate, need): it makes `calls` for the person's request, and once
    /// results came back answers with what they said, joined by ` | `.
    #[must_use]
    pub fn calling_then_reporting(calls: Vec<ToolUseBlock>) -> Self {
        Self::new(move |request| Ok(calling_then_reporting(&calls, request)))
    }

    /// A model that answers with `answer`.
    pub fn new(
        answer: impl Fn(&RecordedRequest) -> Result<ModelResponse, ModelError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            answer: Box::new(answer),
            requests: Mutex::new(Vec::new()),
            keep: true,
            answered: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Keeps no requests: for tests that make many runs and measure what
    /// they keep (the model would otherwise hold every history it saw).
    #[must_use]
    pub fn forgetting_requests(mut self) -> Self {
        self.keep = false;
        self
    }

    /// Every request answered, oldest first (none when it was told to
    /// forget them).
    #[must_use]
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn next(&self, request: &ModelRequest<'_>) -> (usize, Result<ModelResponse, ModelError>) {
        let recorded = RecordedRequest::of(request);
        let answer = (self.answer)(&recorded);
        let turn = 1 + self
            .answered
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.keep {
            self.requests
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(recorded);
        }
        (turn, answer)
    }
}

impl Model for FnModel {
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
        streamed(answer, turn as u64, on_delta)
    }
}

/// What [`FnModel::calling_then_reporting`] answers to `request`: `calls`
/// when the last message is the person's, else the results' text joined
/// by ` | ` (for a model that wraps it, to die or wait on the way).
#[must_use]
pub fn calling_then_reporting(calls: &[ToolUseBlock], request: &RecordedRequest) -> ModelResponse {
    if let Some(Message::User { .. }) = request.messages.last() {
        return ModelResponse {
            tool_calls: calls.to_vec(),
            ..ModelResponse::default()
        };
    }
    let results = request.result_texts();
    ModelResponse {
        text: Some(results.join(" | ")),
        ..ModelResponse::default()
    }
}
