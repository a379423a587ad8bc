//! The model's turn, seen by hooks: `model.before` before a request is
//! sent, `model.after` before anything in an answer is acted on. The
//! runner builds what the hooks see; the executor runs its own hooks of the
//! two events, then the guards the agents above hold over the tree.

use iris_core::RunId;
use serde_json::Value;

use super::ToolExecutor;
use crate::hooks::{AfterVerdict, Denial, HookEvent, HookInput, InheritedGuards, Steered};

impl ToolExecutor {
    /// Whether a `model.before` hook of this executor, or of `guards`
    /// (those the agents above hold), sees each request: without one the
    /// runner builds nothing for it.
    #[must_use]
    pub fn watches_model_requests(&self, guards: Option<&InheritedGuards>) -> bool {
        self.watches(HookEvent::ModelBefore, guards)
    }

    /// Whether a `model.after` hook of this executor or of `guards` sees
    /// each answer: then nothing of an answer may reach observers or
    /// traces before the hooks have passed it (one may redact it).
    #[must_use]
    pub fn watches_model_answers(&self, guards: Option<&InheritedGuards>) -> bool {
        self.watches(HookEvent::ModelAfter, guards)
    }

    fn watches(&self, event: HookEvent, guards: Option<&InheritedGuards>) -> bool {
        self.inner.hooks.has(event) || guards.is_some_and(|g| g.iter().any(|d| d.has(event)))
    }

    /// `model.before` for run `run`, whose request is `request` (its
    /// `instructions`, `messages`, `tools` and `settings`): this
    /// executor's hooks, then the guards of the agents above, in order.
    ///
    /// # Errors
    /// The first hook that refused the turn (or failed, and so refused it).
    pub async fn model_before(
        &self,
        run: &RunId,
        request: Value,
        guards: Option<&InheritedGuards>,
    ) -> Result<Steered, Denial> {
        let mut input = HookInput::of_run(HookEvent::ModelBefore, run.clone());
        input.request = Some(request);
        let fired = self.fired(run, HookEvent::ModelBefore);
        let mut steered = Steered::default();
        let own = std::iter::once(&self.inner.hooks);
        for dispatcher in own.chain(guards.into_iter().flat_map(InheritedGuards::iter)) {
            if !dispatcher.has(HookEvent::ModelBefore) {
                continue;
            }
            // The guards above see the request as this agent's hooks
            // steered it.
            let Steered { steer, by } = dispatcher.model_before(&mut input, &fired).await?;
            steered.steer = std::mem::take(&mut steered.steer).then(steer);
            steered.by.extend(by);
        }
        Ok(steered)
    }

    /// `model.after` for run `run`, whose answer is `answer` (its `text`
    /// and `calls`): this executor's hooks, then the guards of the agents
    /// above, in order; a redaction is what the hooks after it see.
    ///
    /// # Errors
    /// The first hook that refused the answer (or failed, and so refused
    /// it).
    pub async fn model_after(
        &self,
        run: &RunId,
        answer: Value,
        guards: Option<&InheritedGuards>,
    ) -> Result<AfterVerdict, Denial> {
        let mut input = HookInput::of_run(HookEvent::ModelAfter, run.clone());
        input.answer = Some(answer);
        let fired = self.fired(run, HookEvent::ModelAfter);
        let mut verdict = AfterVerdict::default();
        let own = std::iter::once(&self.inner.hooks);
        for dispatcher in own.chain(guards.into_iter().flat_map(InheritedGuards::iter)) {
            if !dispatcher.has(HookEvent::ModelAfter) {
                continue;
            }
            let round = dispatcher.model_after(&mut input, &fired).await?;
            if round.redacted.is_some() {
                verdict.redacted = round.redacted;
            }
            if round.retry.is_some() {
                verdict.retry = round.retry;
                break;
            }
        }
        Ok(verdict)
    }
}
