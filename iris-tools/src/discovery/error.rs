//! Why [`Discovery`](super::Discovery) cannot be built over a registry.

/// A registry whose deferred tools the model could never reach.
#[derive(thiserror::Error)]
pub enum DiscoveryError {
    /// Deferred tools, but no eager `tool_search` to find them.
    #[error(
        "tools {deferred} are deferred, but `tool_search` is not registered as an eager tool, so the model could never reach them; register `ToolSearch` or make them eager"
    )]
    DeferredWithoutSearch {
        /// Some of the deferred tools.
        deferred: String,
    },
    /// No eager tool besides `tool_search`.
    #[error(
        "all {count} tools are deferred; keep at least one tool besides `tool_search` eager so the model can act before it searches"
    )]
    EveryToolDeferred {
        /// How many tools are deferred.
        count: usize,
    },
    /// The encoder given to rank with failed on the tools' texts.
    #[error("the deferred tools could not be encoded for tool search: {0}")]
    Encoder(#[source] super::EncodeError),
}

iris_runtime::__wings::debug_as_display!(DiscoveryError);
