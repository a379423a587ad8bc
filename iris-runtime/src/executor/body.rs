//! Running a tool body: blocking bodies on blocking threads, panics caught,
//! deadlines and cancellation honoured.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::Poll;

use futures_util::FutureExt as _;
use iris_core::{BoxFuture, StopFlag, ToolBody, ToolContext, ToolErrorKind, ToolName, ToolResult};
use tokio_util::sync::CancellationToken;

use super::ToolExecutor;

/// When a call must have ended, its hooks included: put on the body's
/// context once hooks before it have taken some of its time, so the body
/// gets what is left, not a whole timeout of its own.
pub(super) struct CallDeadline(pub(super) tokio::time::Instant);

/// The deadline of a call of `name`: its own, or the executor's.
pub(super) fn call_timeout(ex: &ToolExecutor, name: &ToolName) -> Option<std::time::Duration> {
    let config = &ex.inner.config;
    config
        .tool_timeouts
        .get(name.as_str())
        .copied()
        .or(config.timeout)
}

/// Runs a body that was made and not yet polled.
pub(super) async fn drive(
    ex: &ToolExecutor,
    call_id: &str,
    name: &ToolName,
    body: ToolBody<'_>,
    cx: &ToolContext,
) -> ToolResult {
    let cancel = cx.extension::<CancellationToken>();
    if cancel.is_some_and(CancellationToken::is_cancelled) {
        return cancelled(name.as_str());
    }
    // A body that an earlier call of this run left running past its
    // deadline ends before this one starts.
    // Boxed: it is rare, and the common call should not carry its state.
    if ex.inner.lingering.any() {
        Box::pin(ex.inner.lingering.settle(cx.run_id())).await;
    }
    let mut stop: Option<StopFlag> = None;
    let body: BoxFuture<'_, ToolResult> = match body {
        // Progress has somewhere to go only when someone observes or
        // listens.
        ToolBody::Async(future)
            if !ex.inner.observers.is_empty()
                || cx.extension::<crate::ProgressListener>().is_some() =>
        {
            let executor = ex.clone();
            let sink: crate::progress::EventSink =
                std::sync::Arc::new(move |event| executor.emit_event(event));
            Box::pin(crate::progress::in_scope(sink, cx, call_id, name, future))
        }
        ToolBody::Async(future) => future,
        ToolBody::Blocking(body) => {
            let running = super::lingering::Running::spawn(
                body,
                cx.run_id().clone(),
                std::sync::Arc::clone(&ex.inner.lingering),
            );
            stop = Some(running.stop_flag());
            Box::pin(run_blocking(name, running))
        }
        // `ToolBody` may grow; a body this executor cannot run is an
        // error the host must fix, never a silent skip.
        _ => {
            return ToolResult::error(
                ToolErrorKind::Internal,
                format!(
                    "the runtime cannot run the body of `{name}`; update iris (its runtime is older than its core)"
                ),
            );
        }
    };
    let mut body = AssertUnwindSafe(body).catch_unwind();
    // Most bodies finish on their first poll; only one that waits pays
    // for a timer and a cancellation watch, in a boxed slow path that
    // keeps this future small.
    let first = std::future::poll_fn(|task| Poll::Ready(Pin::new(&mut body).poll(task))).await;
    let outcome = match first {
        Poll::Ready(outcome) => outcome,
        Poll::Pending => {
            let deadline = cx.extension::<CallDeadline>().map(|d| d.0);
            return Box::pin(wait_for_body(ex, name, body, cancel, stop, deadline)).await;
        }
    };
    outcome.unwrap_or_else(|panic| panicked(name.as_str(), panic.as_ref()))
}

async fn wait_for_body(
    ex: &ToolExecutor,
    name: &ToolName,
    mut body: impl Future<Output = Result<ToolResult, Box<dyn Any + Send>>> + Unpin,
    cancel: Option<&CancellationToken>,
    stop: Option<StopFlag>,
    deadline: Option<tokio::time::Instant>,
) -> ToolResult {
    let config = &ex.inner.config;
    let timeout = call_timeout(ex, name);
    // Hooks before the body may have used some of the call's time.
    let left = |limit: std::time::Duration| {
        deadline.map_or(limit, |at| {
            at.saturating_duration_since(tokio::time::Instant::now())
        })
    };
    let finished = |outcome: Result<ToolResult, Box<dyn Any + Send>>| {
        outcome.unwrap_or_else(|panic| panicked(name.as_str(), panic.as_ref()))
    };
    let timed = async {
        match timeout {
            Some(limit) => match tokio::time::timeout(left(limit), &mut body).await {
                Ok(outcome) => Ok(finished(outcome)),
                Err(_) => Err(Ended::Deadline(limit)),
            },
            None => Ok(finished((&mut body).await)),
        }
    };
    let ended = match cancel {
        Some(token) => tokio::select! {
            biased;
            () = token.cancelled() => Err(Ended::Cancelled),
            result = timed => result,
        },
        None => timed.await,
    };
    let why = match ended {
        Ok(result) => return result,
        Err(why) => why,
    };
    let Some(stop) = stop else {
        // An async body is dropped, and so stopped, here.
        return match why {
            Ended::Deadline(limit) => timed_out(name.as_str(), limit),
            Ended::Cancelled => cancelled(name.as_str()),
        };
    };
    // A thread cannot be stopped from outside: it is asked to stop, and
    // given a grace period to end, so that what is reported is what
    // happened whenever the body cooperates.
    stop.raise();
    let grace = config.stop_grace;
    match tokio::time::timeout(grace, &mut body).await {
        Ok(outcome) => stopped_in_grace(name.as_str(), &why, &finished(outcome)),
        Err(_) => still_running(name.as_str(), &why, grace),
    }
}

/// Why a body was stopped before it ended.
enum Ended {
    Deadline(std::time::Duration),
    Cancelled,
}

impl Ended {
    fn kind(&self) -> ToolErrorKind {
        match self {
            Self::Deadline(_) => ToolErrorKind::Timeout,
            Self::Cancelled => ToolErrorKind::Cancelled,
        }
    }

    /// Why the body of `name` was asked to stop, in words for the model.
    fn because(&self, name: &str) -> String {
        match self {
            Self::Deadline(limit) => format!(
                "`{name}` did not finish within {:.1} s",
                limit.as_secs_f64()
            ),
            Self::Cancelled => format!("the call of `{name}` was cancelled"),
        }
    }
}

/// A blocking body that ended within its grace period: what it did is known.
fn stopped_in_grace(name: &str, why: &Ended, result: &ToolResult) -> ToolResult {
    let returned = if result.is_error() {
        "failed with"
    } else {
        "returned"
    };
    ToolResult::error(
        why.kind(),
        format!(
            "{} and was asked to stop; it has ended, so nothing of it runs on, and {returned}: {}",
            why.because(name),
            crate::echo::shorten_to(&result.text_content(), 2_000)
        ),
    )
}

/// A blocking body still running past its grace period.
fn still_running(name: &str, why: &Ended, grace: std::time::Duration) -> ToolResult {
    ToolResult::error(
        why.kind(),
        format!(
            "{}; it was asked to stop and had not ended {:.1} s later: it runs on a thread that cannot be stopped from outside, so the operation may still complete (later calls of this run wait until it has ended); check its effect before you call it again",
            why.because(name),
            grace.as_secs_f64()
        ),
    )
}

/// A synchronous body on a blocking thread, so it cannot stall the async
/// workers. Dropping this future (the deadline passed, the call was
/// cancelled) raises the call's stop flag: a body not started yet never
/// starts, a running one sees `ToolContext::should_stop`, and the run's
/// later calls wait for it to end.
async fn run_blocking(name: &ToolName, running: super::lingering::Running) -> ToolResult {
    match running.await {
        Ok(result) => result,
        Err(err) if err.is_panic() => panicked(name.as_str(), err.into_panic().as_ref()),
        Err(_) => cancelled(name.as_str()),
    }
}

fn panicked(name: &str, payload: &(dyn Any + Send)) -> ToolResult {
    let detail = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    tracing::error!(tool = name, panic = %detail, "tool body panicked");
    ToolResult::error(
        ToolErrorKind::ToolPanicked,
        format!("`{name}` failed with an internal error ({detail}); the call did not complete"),
    )
}

fn timed_out(name: &str, limit: std::time::Duration) -> ToolResult {
    ToolResult::error(
        ToolErrorKind::Timeout,
        format!(
            "`{name}` did not finish within {:.1} s and was stopped; try a smaller request",
            limit.as_secs_f64()
        ),
    )
}

fn cancelled(name: &str) -> ToolResult {
    ToolResult::error(
        ToolErrorKind::Cancelled,
        format!("the call of `{name}` was cancelled before it finished"),
    )
}
