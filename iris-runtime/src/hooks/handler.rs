//! A hook's code: a type implementing the trait of its event, an `async fn`,
//! or a closure; each event has its own answer type, so a wrong answer is a
//! compile error.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use iris_core::BoxFuture;

use super::answer::{
    AfterAnswer, BeforeAnswer, HookFailure, IntoHookAnswer, ModelAfterAnswer, ModelBeforeAnswer,
};
use super::{CommandHook, HookEvent, HookInput};

/// A `tool.before` hook written as a type: may deny the call.
///
/// A hook with no state of its own is shorter as an `async fn` or a
/// closure (see [`HookRegistration::before`](super::HookRegistration::before)).
///
/// ```
/// use iris_runtime::hooks::{BeforeAnswer, BeforeHook, HookFailure, HookInput};
///
/// struct ReadOnlyDays {
///     days: Vec<String>,
///     today: String,
/// }
///
/// impl BeforeHook for ReadOnlyDays {
///     async fn before(&self, input: &HookInput) -> Result<BeforeAnswer, HookFailure> {
///         let writes = input.tool.as_ref().is_some_and(|t| t.as_str() == "write_file");
///         Ok(if writes && self.days.contains(&self.today) {
///             BeforeAnswer::deny("the workspace is read-only today")
///         } else {
///             BeforeAnswer::Allow
///         })
///     }
/// }
/// ```
pub trait BeforeHook: Send + Sync + 'static {
    /// Answers for one call; a failure denies the call.
    fn before(
        &self,
        input: &HookInput,
    ) -> impl Future<Output = Result<BeforeAnswer, HookFailure>> + Send;
}

/// A `tool.after` hook written as a type: may add feedback the model reads
/// after the result.
pub trait AfterHook: Send + Sync + 'static {
    /// Answers for one call whose body ran; a failure is recorded in the
    /// result's `stats.hook_failures`.
    fn after(
        &self,
        input: &HookInput,
    ) -> impl Future<Output = Result<AfterAnswer, HookFailure>> + Send;
}

/// A `run.started` or `run.finished` hook written as a type: is told,
/// answers nothing.
pub trait RunHook: Send + Sync + 'static {
    /// Handles the event; a failure is logged.
    fn on_run(&self, input: &HookInput) -> impl Future<Output = Result<(), HookFailure>> + Send;
}

/// A hook's answer as its code gives it: at once (a closure returning a
/// value, most hooks), with nothing to box or await, or as a future.
#[doc(hidden)]
pub enum Answering<'a, A> {
    /// The answer.
    Now(Result<A, HookFailure>),
    /// A future of it.
    Later(BoxFuture<'a, Result<A, HookFailure>>),
}

/// A hook of any kind with its answer type erased, as the dispatcher
/// stores it. Implemented by the adapters in this module.
#[doc(hidden)]
pub trait ErasedHook<A>: Send + Sync + 'static {
    fn answer<'a>(&'a self, input: &'a HookInput) -> Answering<'a, A>;
}

/// Adapts a [`BeforeHook`], [`AfterHook`] or [`RunHook`] implementation.
struct Implemented<T>(T);

impl<T: BeforeHook> ErasedHook<BeforeAnswer> for Implemented<T> {
    fn answer<'a>(&'a self, input: &'a HookInput) -> Answering<'a, BeforeAnswer> {
        Answering::Later(Box::pin(self.0.before(input)))
    }
}

impl<T: AfterHook> ErasedHook<AfterAnswer> for Implemented<T> {
    fn answer<'a>(&'a self, input: &'a HookInput) -> Answering<'a, AfterAnswer> {
        Answering::Later(Box::pin(self.0.after(input)))
    }
}

impl<T: RunHook> ErasedHook<()> for Implemented<T> {
    fn answer<'a>(&'a self, input: &'a HookInput) -> Answering<'a, ()> {
        Answering::Later(Box::pin(self.0.on_run(input)))
    }
}

/// What a hook closure or function returns: an answer at once, or a future
/// of one. `M` tells the two apart.
#[doc(hidden)]
pub trait HookReturn<'a, A, M> {
    fn into_answering(self) -> Answering<'a, A>;
}

#[doc(hidden)]
pub struct AnswerNow;
#[doc(hidden)]
pub struct AnswerLater;

impl<'a, A, R> HookReturn<'a, A, AnswerNow> for R
where
    R: IntoHookAnswer<A>,
    A: Send + 'a,
{
    fn into_answering(self) -> Answering<'a, A> {
        Answering::Now(self.into_hook_answer())
    }
}

impl<'a, A, F> HookReturn<'a, A, AnswerLater> for F
where
    F: Future + Send + 'a,
    F::Output: IntoHookAnswer<A>,
{
    fn into_answering(self) -> Answering<'a, A> {
        Answering::Later(Box::pin(async move { self.await.into_hook_answer() }))
    }
}

/// A function or closure that takes the input by reference: an `async fn`
/// may borrow it for as long as it runs.
#[doc(hidden)]
pub trait HookFn<'a, A, M>: Send + Sync + 'static {
    fn call_hook(&'a self, input: &'a HookInput) -> Answering<'a, A>;
}

impl<'a, A, M, F, R> HookFn<'a, A, M> for F
where
    F: Fn(&'a HookInput) -> R + Send + Sync + 'static,
    R: HookReturn<'a, A, M>,
{
    fn call_hook(&'a self, input: &'a HookInput) -> Answering<'a, A> {
        self(input).into_answering()
    }
}

/// Adapts a function or closure.
struct FnHook<F, M>(F, PhantomData<fn() -> M>);

impl<A, M, F> ErasedHook<A> for FnHook<F, M>
where
    F: for<'a> HookFn<'a, A, M>,
    A: 'static,
    M: 'static,
{
    fn answer<'a>(&'a self, input: &'a HookInput) -> Answering<'a, A> {
        self.0.call_hook(input)
    }
}

/// Anything that can be a hook whose event answers `A`: a type implementing
/// the event's trait, an `async fn(&HookInput) -> A`, or a closure
/// `|input: &HookInput| ...` returning `A`, a `Result` of it, or a future
/// of either. `M` is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a hook answering `{A}`",
    label = "expected a hook answering `{A}`",
    note = "pass a type implementing `BeforeHook`, `AfterHook` or `RunHook`, an `async fn(&HookInput) -> {A}`, or a closure with its parameter's type written out: `|input: &HookInput| ...` (to `.await` inside, an async closure: `async |input: &HookInput| {{ ... }}`)"
)]
pub trait IntoHook<A, M> {
    #[doc(hidden)]
    fn into_erased(self) -> Arc<dyn ErasedHook<A>>;
}

#[doc(hidden)]
pub struct ByTrait;
#[doc(hidden)]
pub struct ByFn<M>(PhantomData<M>);

impl<T: BeforeHook> IntoHook<BeforeAnswer, ByTrait> for T {
    fn into_erased(self) -> Arc<dyn ErasedHook<BeforeAnswer>> {
        Arc::new(Implemented(self))
    }
}

impl<T: AfterHook> IntoHook<AfterAnswer, ByTrait> for T {
    fn into_erased(self) -> Arc<dyn ErasedHook<AfterAnswer>> {
        Arc::new(Implemented(self))
    }
}

impl<T: RunHook> IntoHook<(), ByTrait> for T {
    fn into_erased(self) -> Arc<dyn ErasedHook<()>> {
        Arc::new(Implemented(self))
    }
}

impl<A, M, F> IntoHook<A, ByFn<M>> for F
where
    F: for<'a> HookFn<'a, A, M>,
    A: 'static,
    M: 'static,
{
    fn into_erased(self) -> Arc<dyn ErasedHook<A>> {
        Arc::new(FnHook(self, PhantomData))
    }
}

/// What a [`HookRegistration`](super::HookRegistration) takes for an event
/// answering `A`: anything [`IntoHook`] for it, or a [`Hook`] made already
/// (a factory's product), whose events the executor's `build()` checks.
/// `M` is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a hook answering `{A}`",
    label = "expected a hook answering `{A}`",
    note = "pass a `Hook`, a type implementing `BeforeHook`, `AfterHook` or `RunHook`, an `async fn(&HookInput) -> {A}`, or a closure with its parameter's type written out: `|input: &HookInput| ...` (to `.await` inside, an async closure: `async |input: &HookInput| {{ ... }}`)"
)]
pub trait HookCode<A, M> {
    #[doc(hidden)]
    fn into_hook(self) -> Hook;
}

#[doc(hidden)]
pub struct Made;

impl<A> HookCode<A, Made> for Hook {
    fn into_hook(self) -> Hook {
        self
    }
}

impl<T: IntoHook<BeforeAnswer, M>, M> HookCode<BeforeAnswer, M> for T {
    fn into_hook(self) -> Hook {
        Hook::before(self)
    }
}

impl<T: IntoHook<AfterAnswer, M>, M> HookCode<AfterAnswer, M> for T {
    fn into_hook(self) -> Hook {
        Hook::after(self)
    }
}

impl<T: IntoHook<(), M>, M> HookCode<(), M> for T {
    fn into_hook(self) -> Hook {
        Hook::run(self)
    }
}

impl<T: IntoHook<ModelBeforeAnswer, M>, M> HookCode<ModelBeforeAnswer, M> for T {
    fn into_hook(self) -> Hook {
        Hook::model_before(self)
    }
}

impl<T: IntoHook<ModelAfterAnswer, M>, M> HookCode<ModelAfterAnswer, M> for T {
    fn into_hook(self) -> Hook {
        Hook::model_after(self)
    }
}

/// A hook's code with the events it can answer, for configuration that
/// names the event apart from the code (a factory's product, a command).
///
/// ```
/// use iris_runtime::hooks::{AfterAnswer, Hook, HookInput};
///
/// fn create_feedback(text: String) -> Hook {
///     Hook::after(move |_: &HookInput| AfterAnswer::feedback(&text))
/// }
/// ```
#[derive(Clone)]
pub struct Hook {
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    Before(Arc<dyn ErasedHook<BeforeAnswer>>),
    After(Arc<dyn ErasedHook<AfterAnswer>>),
    Run(Arc<dyn ErasedHook<()>>),
    ModelBefore(Arc<dyn ErasedHook<ModelBeforeAnswer>>),
    ModelAfter(Arc<dyn ErasedHook<ModelAfterAnswer>>),
    Command(CommandHook),
}

impl Hook {
    /// A `tool.before` hook.
    pub fn before<M>(hook: impl IntoHook<BeforeAnswer, M>) -> Self {
        Self {
            kind: Kind::Before(hook.into_erased()),
        }
    }

    /// The same hook, a command killed at `deadline`.
    pub(super) fn with_deadline(mut self, deadline: std::time::Duration) -> Self {
        if let Kind::Command(command) = &mut self.kind {
            command.set_deadline(deadline);
        }
        self
    }

    /// A `tool.after` hook.
    pub fn after<M>(hook: impl IntoHook<AfterAnswer, M>) -> Self {
        Self {
            kind: Kind::After(hook.into_erased()),
        }
    }

    /// A `run.started` or `run.finished` hook.
    pub fn run<M>(hook: impl IntoHook<(), M>) -> Self {
        Self {
            kind: Kind::Run(hook.into_erased()),
        }
    }

    /// A `model.before` hook, which may refuse or steer a turn.
    pub fn model_before<M>(hook: impl IntoHook<ModelBeforeAnswer, M>) -> Self {
        Self {
            kind: Kind::ModelBefore(hook.into_erased()),
        }
    }

    /// A `model.after` hook, which may refuse, retry or redact an answer.
    pub fn model_after<M>(hook: impl IntoHook<ModelAfterAnswer, M>) -> Self {
        Self {
            kind: Kind::ModelAfter(hook.into_erased()),
        }
    }

    /// A command, which answers every event.
    #[must_use]
    pub fn command(hook: CommandHook) -> Self {
        Self {
            kind: Kind::Command(hook),
        }
    }

    /// The events this hook can answer, as their names.
    #[must_use]
    pub fn answers(&self) -> &'static str {
        match self.kind {
            Kind::Before(_) => "tool.before and run.started",
            Kind::After(_) => "tool.after",
            Kind::Run(_) => "run.started and run.finished",
            Kind::ModelBefore(_) => "model.before",
            Kind::ModelAfter(_) => "model.after",
            Kind::Command(_) => "every event",
        }
    }

    /// Whether this hook can answer `event`.
    #[must_use]
    pub fn answers_event(&self, event: HookEvent) -> bool {
        self.for_event(event).is_some()
    }

    /// The handler for `event`, or `None` when this hook cannot answer it.
    pub(crate) fn for_event(&self, event: HookEvent) -> Option<Handler> {
        Some(match (&self.kind, event) {
            // A `tool.before` answer on `run.started` guards the task.
            (Kind::Before(hook), HookEvent::ToolBefore | HookEvent::RunStarted) => {
                Handler::Before(Arc::clone(hook))
            }
            (Kind::ModelBefore(hook), HookEvent::ModelBefore) => {
                Handler::ModelBefore(Arc::clone(hook))
            }
            (Kind::ModelAfter(hook), HookEvent::ModelAfter) => {
                Handler::ModelAfter(Arc::clone(hook))
            }
            (Kind::After(hook), HookEvent::ToolAfter) => Handler::After(Arc::clone(hook)),
            (Kind::Run(hook), HookEvent::RunStarted | HookEvent::RunFinished) => {
                Handler::Run(Arc::clone(hook))
            }
            // A command on `run.started` may refuse the task, as one on
            // `tool.before` may refuse a call.
            (Kind::Command(command), HookEvent::ToolBefore | HookEvent::RunStarted) => {
                Handler::Before(Arc::new(Implemented(command.clone())))
            }
            (Kind::Command(command), HookEvent::ToolAfter) => {
                Handler::After(Arc::new(Implemented(command.clone())))
            }
            (Kind::Command(command), HookEvent::RunFinished) => {
                Handler::Run(Arc::new(Implemented(command.clone())))
            }
            (Kind::Command(command), HookEvent::ModelBefore) => {
                Handler::ModelBefore(Arc::new(command.clone()))
            }
            (Kind::Command(command), HookEvent::ModelAfter) => {
                Handler::ModelAfter(Arc::new(command.clone()))
            }
            _ => return None,
        })
    }
}

impl fmt::Debug for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Command(command) => f.debug_tuple("Hook").field(command).finish(),
            _ => f.debug_tuple("Hook").field(&self.answers()).finish(),
        }
    }
}

/// A hook's code for the one event it is registered for.
#[derive(Clone)]
pub(crate) enum Handler {
    Before(Arc<dyn ErasedHook<BeforeAnswer>>),
    After(Arc<dyn ErasedHook<AfterAnswer>>),
    Run(Arc<dyn ErasedHook<()>>),
    ModelBefore(Arc<dyn ErasedHook<ModelBeforeAnswer>>),
    ModelAfter(Arc<dyn ErasedHook<ModelAfterAnswer>>),
}
