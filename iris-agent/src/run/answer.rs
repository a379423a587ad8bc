//! The model's answer to the run so far.

use iris_core::ToolSpec;
use tracing::Instrument as _;

use iris_model::{Model, ModelDelta, ModelError, ModelRequest, ModelResponse};

use super::{AgentRunner, RunContext};
use crate::{RunState, history};

impl AgentRunner {
    /// The model's answer to the run so far, offering `tools`; `None` when
    /// the run was cancelled while it was asked.
    pub(super) async fn answer(
        &self,
        state: &RunState,
        tools: &[ToolSpec],
        cx: &RunContext,
    ) -> Option<Result<ModelResponse, ModelError>> {
        let messages = match self.agent.results_budget() {
            Some(budget) => {
                history::within_budget(&state.messages, budget, |tool| self.is_read_only(tool))
            }
            None => std::borrow::Cow::Borrowed(state.messages.as_slice()),
        };
        let request = ModelRequest {
            instructions: self.agent.instructions(),
            messages: &messages,
            tools,
            options: &self.options,
        };
        let executor = self.agent.executor();
        let run_id = &state.run_id;
        // Observers see text as it arrives; calls run once complete.
        let on_delta = move |delta: ModelDelta<'_>| {
            if let ModelDelta::Text(text) = delta {
                executor.emit_event(iris_runtime::RunEvent::ModelText {
                    run_id: run_id.clone(),
                    text: text.to_owned(),
                });
            }
        };
        // Deltas only feed observers: with none, the whole answer is
        // enough, and a model that streams need not cut it up.
        let streaming = executor.has_observers();
        let (model, on_delta) = (&self.model, &on_delta);
        // The model is asked only when no engine keeps this step's answer.
        let ask = move || {
            if streaming {
                model.complete_streaming(request, on_delta)
            } else {
                model.complete(request)
            }
        };
        let span = super::spans::chat(self.model_config(), &request);
        let answer = match &self.engine {
            Some(engine) => engine.answer(state.step + 1, Box::new(ask)),
            None => ask(),
        }
        .instrument(span.clone());
        let answered = tokio::select! {
            response = answer => Some(response),
            () = cx.cancel.cancelled() => None,
        };
        super::spans::chat_ended(&span, self.model_config(), answered.as_ref());
        answered
    }
}
