//! Synchronous bodies that passed their deadline and run on: a thread
//! cannot be stopped from outside, so the executor keeps their handles, and
//! every later call of the same run waits for them to end before its own
//! body starts. A timed-out write therefore never overlaps, or lands after,
//! the calls that follow it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use iris_core::{RunId, StopFlag, ToolResult};
use tokio::task::{JoinError, JoinHandle};

use crate::ledger::RunLedger;

/// The bodies still running past their deadline; each run's are its slot
/// in the run ledger.
#[derive(Debug)]
pub(super) struct Lingering {
    /// How many are held, so a call finds "none" without a lock.
    count: Arc<AtomicUsize>,
    ledger: Arc<RunLedger>,
}

/// One run's bodies running past their deadline.
#[derive(Default)]
struct Bodies {
    handles: Vec<JoinHandle<ToolResult>>,
    /// The executor's count, which a run the ledger drops lowers by its own
    /// (its bodies run on, unwatched: no call of it will wait for them).
    counted: Option<Arc<AtomicUsize>>,
}

impl Drop for Bodies {
    fn drop(&mut self) {
        if let Some(count) = &self.counted {
            count.fetch_sub(self.handles.len(), Ordering::AcqRel);
        }
    }
}

impl Lingering {
    pub(super) fn new(ledger: Arc<RunLedger>) -> Self {
        Self {
            count: Arc::default(),
            ledger,
        }
    }

    /// Whether any body runs past its deadline, in any run.
    pub(super) fn any(&self) -> bool {
        self.count.load(Ordering::Acquire) != 0
    }

    /// Waits until every body `run` left running has ended.
    pub(super) async fn settle(&self, run: &RunId) {
        let Some(mut bodies) = self.ledger.take_slot::<Bodies>(run) else {
            return;
        };
        let waiting = std::mem::take(&mut bodies.handles);
        let settled = waiting.len();
        for body in waiting {
            // Its result was already reported as a timeout; only its end
            // matters here.
            let _ = body.await;
        }
        self.count.fetch_sub(settled, Ordering::AcqRel);
    }

    fn hold(&self, run: &RunId, body: JoinHandle<ToolResult>) {
        self.ledger.with_slot(run, |bodies: &mut Bodies| {
            bodies
                .counted
                .get_or_insert_with(|| Arc::clone(&self.count))
                .fetch_add(1, Ordering::AcqRel);
            bodies.handles.push(body);
        });
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

impl Running {
    /// The flag that asks the body to stop.
    pub(super) fn stop_flag(&self) -> StopFlag {
        self.flag.clone()
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
                self.lingering.hold(&self.run, handle);
            }
        }
    }
}
