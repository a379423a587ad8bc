//! A model made of a closure.

use std::sync::{Mutex, PoisonError};

use iris_core::BoxFuture;
use iris_model::{Model, ModelError, ModelRequest, ModelResponse, OnDelta};

use crate::chunks::Seeded;
use crate::request::RecordedRequest;
use crate::scripted::stream;

type Answer = dyn Fn(&RecordedRequest) -> Result<ModelResponse, ModelError> + Send + Sync;

/// A model whose every answer a closure gives, from the whole request
/// (what was offered and the history so far); requests are kept as by
/// [`ScriptedModel`](crate::ScriptedModel), and streamed answers are cut
/// the same way.
pub struct FnModel {
    answer: Box<Answer>,
    requests: Mutex<Vec<RecordedRequest>>,
}

impl std::fmt::Debug for FnModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnModel").finish_non_exhaustive()
    }
}

impl FnModel {
    /// A model that answers with `answer`.
    pub fn new(
        answer: impl Fn(&RecordedRequest) -> Result<ModelResponse, ModelError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            answer: Box::new(answer),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Every request answered, oldest first.
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
        let mut requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        requests.push(recorded);
        (requests.len(), answer)
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
        if let Ok(response) = &answer {
            stream(response, &mut Seeded::new(turn as u64), on_delta);
        }
        Box::pin(async move { answer })
    }
}
