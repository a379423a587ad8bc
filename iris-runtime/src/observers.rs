//! Observers: consumers of committed facts that can never change a result.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use iris_core::{RunId, ToolErrorKind, ToolName};

use crate::hooks::{HookEvent, HookOutcome};
use serde::Serialize;

/// A fact the executor committed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunEvent {
    /// A run began.
    RunStarted {
        /// The run.
        run_id: RunId,
    },
    /// A run ended.
    RunFinished {
        /// The run.
        run_id: RunId,
    },
    /// A call's body is about to run.
    ToolStarted {
        /// The run.
        run_id: RunId,
        /// The call.
        call_id: String,
        /// The tool.
        tool: ToolName,
    },
    /// A call has its result.
    ToolFinished {
        /// The run.
        run_id: RunId,
        /// The call.
        call_id: String,
        /// The tool, when the name resolved.
        tool: Option<ToolName>,
        /// The failure kind, when it failed.
        error_kind: Option<ToolErrorKind>,
        /// Time from the start of the call to its result.
        elapsed: Duration,
    },
    /// A call waits for a person's approval.
    ToolWaiting {
        /// The run.
        run_id: RunId,
        /// The call.
        call_id: String,
        /// The tool.
        tool: ToolName,
    },
    /// A running call reported how far it got (an MCP server's
    /// `notifications/progress`, or a body through
    /// [`ToolProgress`](crate::ToolProgress)).
    ToolProgress {
        /// The run.
        run_id: RunId,
        /// The call.
        call_id: String,
        /// The tool.
        tool: ToolName,
        /// How much is done; it grows with each report.
        progress: f64,
        /// How much there is in all, when known.
        total: Option<f64>,
        /// What it is doing, when said.
        message: Option<String>,
    },
    /// A piece of the model's text, as it streams in (from the runner,
    /// with a streaming model).
    ModelText {
        /// The run.
        run_id: RunId,
        /// The new text.
        text: String,
    },
    /// A run's typed output as far as the model has streamed it: the start
    /// of its answer read as far as it is valid JSON (open strings, lists
    /// and objects closed where the text stops), for a form that fills in
    /// as the answer arrives. The checked value is the run's at its end.
    OutputPartial {
        /// The run.
        run_id: RunId,
        /// The value so far.
        value: serde_json::Value,
    },
    /// The model asked the person a question (`ask_question`); run control
    /// answers it, never the tool chain.
    QuestionAsked {
        /// The run.
        run_id: RunId,
        /// The call that asks.
        call_id: String,
        /// What an answer names.
        question_id: String,
        /// How many questions it asks.
        questions: usize,
    },
    /// A question ended: answered, declined, expired or cancelled.
    QuestionAnswered {
        /// The run.
        run_id: RunId,
        /// The call that asked.
        call_id: String,
        /// The question's id.
        question_id: String,
        /// How it ended.
        ending: crate::question::QuestionEnding,
    },
    /// The model activated a skill (run control, beside the executor): its
    /// instructions are now in the run's history.
    SkillActivated {
        /// The run.
        run_id: RunId,
        /// The activating call.
        call_id: String,
        /// The skill's name.
        skill: String,
    },
    /// A child agent started on a delegation (run control, beside the
    /// executor). Waiting for a person is never its end.
    ChildStarted {
        /// The run at the root of the tree.
        root_run_id: RunId,
        /// The child's run.
        run_id: RunId,
        /// The run that delegated.
        parent_run_id: RunId,
        /// The call that delegated.
        parent_call_id: String,
        /// The child agent's name.
        agent: String,
        /// How deep it runs (1 for a child of the root).
        depth: u32,
    },
    /// A child agent's delegation ended (not a pause).
    ChildEnded {
        /// The run at the root of the tree.
        root_run_id: RunId,
        /// The child's run.
        run_id: RunId,
        /// The run that delegated.
        parent_run_id: RunId,
        /// The call that delegated.
        parent_call_id: String,
        /// The child agent's name.
        agent: String,
        /// How deep it ran.
        depth: u32,
        /// How: `finished`, `max_steps`, `max_tokens`, `deadline`,
        /// `cancelled` or `failed`.
        ending: String,
    },
    /// A hook ran, and how it answered.
    HookFired {
        /// The run.
        run_id: RunId,
        /// The call, for `tool.before` and `tool.after` hooks.
        call_id: Option<String>,
        /// The hook's registered name.
        hook: String,
        /// The event it ran for.
        on: HookEvent,
        /// How it answered.
        outcome: HookOutcome,
    },
}

/// Receives committed facts.
///
/// Each observer gets its own thread and queue: a slow observer falls behind
/// (and loses events past the queue's capacity, counted) without slowing
/// the executor; a panic is caught and counted.
pub trait RunEventObserver: Send + Sync + 'static {
    /// Handles one event.
    fn on_event(&self, event: &RunEvent);
}

/// Delivery counters of one observer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ObserverStats {
    /// Events handed to the observer.
    pub delivered: u64,
    /// Events dropped because its queue was full.
    pub dropped: u64,
    /// Events during which it panicked.
    pub panicked: u64,
}

#[derive(Default)]
struct Counters {
    delivered: AtomicU64,
    dropped: AtomicU64,
    panicked: AtomicU64,
}

/// One observer's queue and the thread that feeds it, shared by every
/// executor the observer was added to: a run's child agents run on
/// executors of their own, and an observer of all of them hears their
/// events in the order they happened, not per executor.
struct Delivery {
    sender: SyncSender<RunEvent>,
    counters: Arc<Counters>,
}

struct Slot {
    delivery: Arc<Delivery>,
}

/// The deliveries alive, by the address of the observer they feed.
static DELIVERIES: Mutex<Vec<(usize, Weak<Delivery>)>> = Mutex::new(Vec::new());

/// The observers of an executor.
#[derive(Default)]
pub(crate) struct Observers {
    slots: Vec<Slot>,
}

/// Events queued per observer before new ones are dropped.
const QUEUE: usize = 1024;

impl Observers {
    pub(crate) fn add(&mut self, observer: Arc<dyn RunEventObserver>) {
        if let Some(delivery) = delivery_for(observer) {
            self.slots.push(Slot { delivery });
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Queues `event` for every observer without ever waiting.
    pub(crate) fn emit(&self, event: &RunEvent) {
        for slot in &self.slots {
            let delivery = &slot.delivery;
            match delivery.sender.try_send(event.clone()) {
                Ok(()) => {}
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                    delivery.counters.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    pub(crate) fn stats(&self) -> Vec<ObserverStats> {
        self.slots
            .iter()
            .map(|slot| {
                let counters = &slot.delivery.counters;
                ObserverStats {
                    delivered: counters.delivered.load(Ordering::Relaxed),
                    dropped: counters.dropped.load(Ordering::Relaxed),
                    panicked: counters.panicked.load(Ordering::Relaxed),
                }
            })
            .collect()
    }
}

/// The delivery feeding `observer`: the one already alive for it, or a
/// new one with its own thread.
fn delivery_for(observer: Arc<dyn RunEventObserver>) -> Option<Arc<Delivery>> {
    let key = Arc::as_ptr(&observer).cast::<()>().addr();
    let mut deliveries = DELIVERIES.lock().unwrap_or_else(PoisonError::into_inner);
    deliveries.retain(|(_, delivery)| delivery.strong_count() > 0);
    if let Some(alive) = deliveries
        .iter()
        .find(|(kept, _)| *kept == key)
        .and_then(|(_, delivery)| delivery.upgrade())
    {
        return Some(alive);
    }
    let (sender, receiver) = sync_channel::<RunEvent>(QUEUE);
    let counters = Arc::new(Counters::default());
    let thread_counters = Arc::clone(&counters);
    let spawned = std::thread::Builder::new()
        .name("iris-observer".to_owned())
        .spawn(move || {
            for event in receiver {
                let outcome = catch_unwind(AssertUnwindSafe(|| observer.on_event(&event)));
                let counter = if outcome.is_ok() {
                    &thread_counters.delivered
                } else {
                    &thread_counters.panicked
                };
                counter.fetch_add(1, Ordering::Relaxed);
            }
        });
    if let Err(err) = spawned {
        tracing::error!(%err, "could not start an observer thread; the observer gets no events");
        return None;
    }
    let delivery = Arc::new(Delivery { sender, counters });
    deliveries.push((key, Arc::downgrade(&delivery)));
    Some(delivery)
}

impl fmt::Debug for Observers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.stats()).finish()
    }
}
