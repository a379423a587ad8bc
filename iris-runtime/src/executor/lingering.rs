//! Synchronous bodies that passed their deadline and run on: a thread
//! cannot be stopped from outside, so the executor keeps their handles, and
//! every later call of the same run waits for them to end before its own
//! body starts. A timed-out write therefore never overlaps, or lands after,
//! the calls that follow it.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use iris_core::{RunId, StopFlag, ToolResult};
use tokio::task::{JoinError, JoinHandle};

/// The bodies still running past their deadline, per run.
#[derive(Debug, Default)]
pub(super) struct Lingering {
    /// How many are held, so a call finds "none" without a lock.
    count: AtomicUsize,
    bodies: Mutex<HashMap<RunId, Vec<JoinHandle<ToolResult>>>>,
}

impl Lingering {
    /// Whether any body runs past its deadline, in any run.
    pub(super) fn any(&self) -> bool {
        self.count.load(Ordering::Acquire) != 0
    }

    /// Waits until every body `run` left running has ended.
    pub(super) async fn settle(&self, run: &RunId) {
        let waiting = self
            .bodies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(run)
            .unwrap_or_default();
        let settled = waiting.len();
        for body in waiting {
            // Its result was already reported as a timeout; only its end
            // matters here.
            let _ = body.await;
        }
        self.count.fetch_sub(settled, Ordering::AcqRel);
    }

    /// Lets go of the bodies `run` left running (they run on, unwatched):
    /// the run is over, and no call of it will come to wait for them.
    pub(super) fn forget(&self, run: &RunId) {
        if self.count.load(Ordering::Acquire) == 0 {
            return;
        }
        let dropped = self
            .bodies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(run)
            .map_or(0, |bodies| bodies.len());
        self.count.fetch_sub(dropped, Ordering::AcqRel);
    }

    fn hold(&self, run: RunId, body: JoinHandle<ToolResult>) {
        self.count.fetch_add(1, Ordering::AcqRel);
        self.bodies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(run)
            .or_default()
            .push(body);
    }
}

/// A blocking body on its thread. Dropped before it ends (its deadline
/// passed, or the call was cancelled), it raises the body's stop flag and
/// hands the thread's handle to [`Lingering`].
pub(super) struct Running {
    handle: Option<JoinHandle<ToolResult>>,
    flag: StopFlag,
    run: RunId,
    lingering: Arc<Lingering>,
}

impl Running {
    pub(super) fn spawn(
        body: Box<dyn FnOnce() -> ToolResult + Send>,
        run: RunId,
        lingering: Arc<Lingering>,
    ) -> Self {
        let flag = StopFlag::new();
        let scoped = flag.clone();
        let handle = tokio::task::spawn_blocking(move || {
            if scoped.is_raised() {
                return ToolResult::error(
                    iris_core::ToolErrorKind::Cancelled,
                    "the call was stopped before it started",
                );
            }
            scoped.scope(body)
        });
        Self {
            handle: Some(handle),
            flag,
            run,
            lingering,
        }
    }
}

impl Future for Running {
    type Output = Result<ToolResult, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(handle) = self.handle.as_mut() else {
            return Poll::Pending;
        };
        let done = Pin::new(handle).poll(cx);
        if done.is_ready() {
            self.handle = None;
        }
        done
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            self.flag.raise();
            if !handle.is_finished() {
                self.lingering.hold(self.run.clone(), handle);
            }
        }
    }
}
