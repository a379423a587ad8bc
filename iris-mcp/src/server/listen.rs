//! `subscriptions/listen` (protocol 2026-07-28): a stateless client's
//! long-lived stream of the catalog's changes. The tools behind the gateway
//! change when an MCP server behind it refreshes its own, and a client that
//! holds no session learns of it here rather than only when its cached
//! `tools/list` runs out. rmcp acknowledges the filter (the first message)
//! and tags each notification with the subscription's id; this module says
//! what is offered and when to notify.

use rmcp::ErrorData;
use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;
use tokio_util::sync::CancellationToken;

/// What a listener may subscribe to: the tool list's changes (there are no
/// prompts, and resources are artifacts read by handle, never listed).
pub(super) fn offered() -> SubscriptionFilter {
    SubscriptionFilter::builder().tools_list_changed().build()
}

/// Notifies `subscription` each time the served registry changes, until
/// the client cancels it, the server ends, or the client cannot be told.
pub(super) async fn listen(
    registry: &iris_runtime::SharedRegistry,
    ended: &CancellationToken,
    subscription: SubscriptionContext,
) -> Result<(), ErrorData> {
    let wants_tools = subscription.accepted().tools_list_changed == Some(true);
    let mut changes = registry.subscribe();
    loop {
        tokio::select! {
            () = subscription.cancelled() => return Ok(()),
            () = ended.cancelled() => return Ok(()),
            next = changes.changed() => if next.is_err() { return Ok(()) },
        }
        if !wants_tools {
            continue;
        }
        if let Err(error) = subscription.sink().notify_tool_list_changed().await {
            tracing::debug!(%error, "a listening client could not be told that the tools changed");
            return Ok(());
        }
    }
}
