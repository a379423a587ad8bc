//! Tools that are methods of one service.

use std::sync::Arc;

use crate::tool::DynTool;

/// A service whose `#[tool]` methods became tools: what
/// `#[iris::toolbox]` implements on the type of an `impl` block.
///
/// Each tool holds an `Arc` of the service, so one service value backs all
/// of them; register them together with the runtime's
/// `ToolRegistry::register_toolbox`.
pub trait Toolbox: Send + Sync + 'static {
    /// One tool per `#[tool]` method, in the order of the `impl` block, each
    /// bound to `service`.
    fn tools(service: Arc<Self>) -> Vec<Arc<dyn DynTool>>;
}
