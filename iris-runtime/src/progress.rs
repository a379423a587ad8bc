//! Progress a tool reports while its body runs, handed to observers as
//! [`RunEvent::ToolProgress`] without ever waiting for them.
//!
//! The executor puts a reporter in scope around an async body (only when it
//! has observers or the call's context carries a [`ProgressListener`], so a
//! call nobody watches pays nothing); the body, or an MCP server through
//! the client's `notifications/progress`, reports through it.

use std::sync::Arc;

use iris_core::{RunId, ToolContext, ToolName};

use crate::observers::RunEvent;

/// Where a call's progress events go: the executor's observers.
pub(crate) type EventSink = Arc<dyn Fn(RunEvent) + Send + Sync>;

tokio::task_local! {
    static CURRENT: ToolProgress;
}

/// Reports the progress of one running call to the executor's observers.
///
/// Cheap to clone; reporting never blocks (an observer that falls behind
/// loses events, counted in its stats).
#[derive(Clone)]
pub struct ToolProgress {
    call: Arc<Watched>,
}

struct Watched {
    sink: EventSink,
    run_id: RunId,
    call_id: String,
    tool: ToolName,
    listener: Option<ProgressListener>,
}

/// Receives the progress of the calls run with it in their context
/// (`ToolContextBuilder::extension`), besides the executor's observers: an
/// MCP server passes it on to the client that asked for progress. Called
/// on the reporting task: it must not block.
#[derive(Clone)]
pub struct ProgressListener(Arc<Listen>);

/// What a [`ProgressListener`] calls: `(progress, total, message)`.
type Listen = dyn Fn(f64, Option<f64>, Option<&str>) + Send + Sync;

impl ProgressListener {
    /// A listener calling `listen(progress, total, message)` for each
    /// report.
    pub fn new(listen: impl Fn(f64, Option<f64>, Option<&str>) + Send + Sync + 'static) -> Self {
        Self(Arc::new(listen))
    }
}

impl std::fmt::Debug for ProgressListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressListener")
    }
}

impl ToolProgress {
    /// The reporter of the call whose async body is running here, when
    /// its executor has observers; `None` otherwise (on a blocking body's
    /// thread, or outside a call).
    #[must_use]
    pub fn current() -> Option<Self> {
        CURRENT.try_with(Clone::clone).ok()
    }

    /// Reports that `progress` of `total` (when known) is done, with an
    /// optional message for the person watching.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let call = &self.call;
        if let Some(listener) = &call.listener {
            (listener.0)(progress, total, message.as_deref());
        }
        (call.sink)(RunEvent::ToolProgress {
            run_id: call.run_id.clone(),
            call_id: call.call_id.clone(),
            tool: call.tool.clone(),
            progress,
            total,
            message,
        });
    }

    /// The call reported on.
    #[must_use]
    pub fn call_id(&self) -> &str {
        &self.call.call_id
    }
}

impl std::fmt::Debug for ToolProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolProgress")
            .field("run_id", &self.call.run_id)
            .field("call_id", &self.call.call_id)
            .field("tool", &self.call.tool)
            .finish()
    }
}

/// Runs `body` with a reporter for its call in scope.
pub(crate) async fn in_scope<F: Future>(
    sink: EventSink,
    cx: &ToolContext,
    call_id: &str,
    tool: &ToolName,
    body: F,
) -> F::Output {
    let progress = ToolProgress {
        call: Arc::new(Watched {
            sink,
            run_id: cx.run_id().clone(),
            call_id: call_id.to_owned(),
            tool: tool.clone(),
            listener: cx.extension::<ProgressListener>().cloned(),
        }),
    };
    CURRENT.scope(progress, body).await
}
