//! Running a tool body: blocking bodies on blocking threads, panics caught,
//! deadlines and cancellation honoured.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::future::Future as _;
use std::task::Poll;

use futures_util::FutureExt as _;
use iris_core::{DynTool, ParsedArgs, ToolBody, ToolContext, ToolErrorKind, ToolResult};
use tokio_util::sync::CancellationToken;

use super::ToolExecutor;

impl ToolExecutor {
    pub(super) async fn run_body(
        &self,
        tool: &dyn DynTool,
        args: ParsedArgs,
        cx: &ToolContext,
    ) -> ToolResult {
        let name = tool.definition_dyn().name();
        let body = async {
            match tool.call_dyn(args, cx) {
                ToolBody::Async(future) => AssertUnwindSafe(future)
                    .catch_unwind()
                    .await
                    .unwrap_or_else(|panic| panicked(name.as_str(), panic.as_ref())),
                ToolBody::Blocking(body) => match tokio::task::spawn_blocking(body).await {
                    Ok(result) => result,
                    Err(err) if err.is_panic() => {
                        panicked(name.as_str(), err.into_panic().as_ref())
                    }
                    Err(_) => cancelled(name.as_str()),
                },
                // `ToolBody` may grow; a body this executor cannot run is an
                // error the host must fix, never a silent skip.
                _ => ToolResult::error(
                    ToolErrorKind::Internal,
                    format!("the runtime cannot run the body of `{name}`; update iris-runtime"),
                ),
            }
        };
        let cancel = cx.extension::<CancellationToken>();
        if cancel.is_some_and(CancellationToken::is_cancelled) {
            return cancelled(name.as_str());
        }
        // Most bodies finish on their first poll; only one that waits pays
        // for a timer and a cancellation watch.
        let mut body = std::pin::pin!(body);
        let first = std::future::poll_fn(|task| Poll::Ready(body.as_mut().poll(task))).await;
        if let Poll::Ready(result) = first {
            return result;
        }
        let timeout = self
            .inner
            .config
            .tool_timeouts
            .get(name.as_str())
            .copied()
            .or(self.inner.config.timeout);
        let timed = async {
            match timeout {
                Some(limit) => tokio::time::timeout(limit, body).await.unwrap_or_else(|_| {
                    ToolResult::error(
                        ToolErrorKind::Timeout,
                        format!(
                            "`{name}` did not finish within {:.1} s and was stopped; try a smaller request",
                            limit.as_secs_f64()
                        ),
                    )
                }),
                None => body.await,
            }
        };
        match cancel {
            Some(token) => tokio::select! {
                biased;
                () = token.cancelled() => cancelled(name.as_str()),
                result = timed => result,
            },
            None => timed.await,
        }
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

fn cancelled(name: &str) -> ToolResult {
    ToolResult::error(
        ToolErrorKind::Cancelled,
        format!("the call of `{name}` was cancelled before it finished"),
    )
}
