//! The events a run's observers see, collected for its transcript: hooks
//! that fired, and what streamed.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use iris_runtime::{RunEvent, RunEventObserver};

/// An observer that keeps every event. Give a clone to the executor
/// (`ToolExecutorBuilder::observer`), run, then add what it saw to the
/// transcript with [`Transcript::with_events`](crate::Transcript::with_events).
///
/// Observers hear events on threads of their own, a moment after they
/// happen; [`EventLog::wait_until`] waits for the ones a test needs.
#[derive(Debug, Clone, Default)]
pub struct EventLog {
    inner: Arc<(Mutex<Vec<RunEvent>>, Condvar)>,
}

impl EventLog {
    /// An empty log.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Every event heard so far, in order.
    #[must_use]
    pub fn events(&self) -> Vec<RunEvent> {
        self.inner
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits until `done` holds of the events heard, at most `timeout`;
    /// returns the events heard either way.
    pub fn wait_until(
        &self,
        done: impl Fn(&[RunEvent]) -> bool,
        timeout: Duration,
    ) -> Vec<RunEvent> {
        let (events, heard) = &*self.inner;
        let deadline = Instant::now() + timeout;
        let mut events = events.lock().unwrap_or_else(PoisonError::into_inner);
        while !done(&events) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            events = heard
                .wait_timeout(events, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        events.clone()
    }
}

impl RunEventObserver for EventLog {
    fn on_event(&self, event: &RunEvent) {
        let (events, heard) = &*self.inner;
        events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event.clone());
        heard.notify_all();
    }
}
