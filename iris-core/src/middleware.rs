//! Middleware: code that wraps one tool call.

use std::sync::Arc;

use crate::call::ToolCall;
use crate::context::ToolContext;
use crate::error::MiddlewareError;
use crate::result::ToolResult;
use crate::tool::BoxFuture;

/// Wraps a tool call, the way axum's `from_fn` wraps a request.
///
/// The stack runs in registration order, first registered outermost. A
/// middleware may look at or replace the result, or short-circuit by not
/// calling `next` at all. Permission checks and hooks are pipeline stages of
/// their own and are not seen here. Write one with `#[iris::middleware]`.
pub trait Middleware: Send + Sync + 'static {
    /// Handles `call`; `next.run(call)` runs the rest of the stack and the body.
    ///
    /// # Errors
    /// An `Err` becomes the call's error result.
    fn handle<'a>(
        &'a self,
        call: ToolCall,
        cx: &'a ToolContext,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<ToolResult, MiddlewareError>>;

    /// The name errors of this middleware carry.
    fn name(&self) -> &str {
        std::any::type_name::<Self>()
    }
}

impl<M: Middleware + ?Sized> Middleware for Arc<M> {
    fn handle<'a>(
        &'a self,
        call: ToolCall,
        cx: &'a ToolContext,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<ToolResult, MiddlewareError>> {
        (**self).handle(call, cx, next)
    }

    fn name(&self) -> &str {
        (**self).name()
    }
}

/// The innermost stage a middleware stack ends in: the side-effect gate
/// and the tool's body, run by [`Next::run`].
pub type InnerStack<'a> = Box<dyn FnOnce() -> BoxFuture<'a, ToolResult> + Send + 'a>;

/// The rest of the middleware stack, then the body.
///
/// Taken by value, so it runs at most once. The body receives the arguments
/// parsed before the stack started: changing `call.arguments_mut()` on the way
/// down changes nothing the body sees.
#[must_use = "a middleware that neither runs `next` nor returns a result of its own drops the call"]
pub struct Next<'a> {
    rest: &'a [Arc<dyn Middleware>],
    cx: &'a ToolContext,
    endpoint: InnerStack<'a>,
}

impl<'a> Next<'a> {
    /// The stack `rest` in front of `endpoint`.
    pub fn new(
        rest: &'a [Arc<dyn Middleware>],
        cx: &'a ToolContext,
        endpoint: InnerStack<'a>,
    ) -> Self {
        Self { rest, cx, endpoint }
    }

    /// Runs the next middleware, or the body when none is left.
    ///
    /// # Errors
    /// The error of a middleware further down.
    pub async fn run(self, call: ToolCall) -> Result<ToolResult, MiddlewareError> {
        match self.rest.split_first() {
            Some((first, rest)) => {
                let next = Next {
                    rest,
                    cx: self.cx,
                    endpoint: self.endpoint,
                };
                // Name the failing middleware once; outer ones pass it on.
                first
                    .handle(call, self.cx, next)
                    .await
                    .map_err(|err| err.named(first.name()))
            }
            None => Ok((self.endpoint)().await),
        }
    }
}

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("remaining", &self.rest.len())
            .finish_non_exhaustive()
    }
}

/// What a `#[middleware]` function may return: a `ToolResult`, or a
/// `Result<ToolResult, E>` with any error `E` (`MiddlewareError` from `next.run`, your own error
/// type, `Box<dyn Error + Send + Sync>`); an `Err` becomes the call's error
/// result, naming the middleware.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a middleware",
    label = "expected `ToolResult`, or `Result<ToolResult, E>` where `E` is an error"
)]
pub trait IntoMiddlewareResult {
    /// Converts the value.
    ///
    /// # Errors
    /// The middleware's own error.
    fn into_middleware_result(self) -> Result<ToolResult, MiddlewareError>;
}

impl IntoMiddlewareResult for ToolResult {
    fn into_middleware_result(self) -> Result<ToolResult, MiddlewareError> {
        Ok(self)
    }
}

impl<E> IntoMiddlewareResult for Result<ToolResult, E>
where
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn into_middleware_result(self) -> Result<ToolResult, MiddlewareError> {
        self.map_err(|error| {
            let error: Box<dyn std::error::Error + Send + Sync> = error.into();
            match error.downcast::<MiddlewareError>() {
                // A failure further down the stack, already named.
                Ok(error) => *error,
                // Named by `Next::run`, which knows which middleware it ran.
                Err(other) => MiddlewareError::new(String::new(), other),
            }
        })
    }
}
