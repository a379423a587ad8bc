//! The built-in `tool_search` tool.

use iris_core::{State, ToolContext, ToolResult};

use super::Discovery;

/// Find tools that are not loaded yet. Describe each separate need as one
/// intent in your own words (or give a tool's exact name); the best tool
/// for each is selected and its schema is loaded for your next request.
#[iris_macros::tool(crate = "::iris_core", built_in, read_only, concurrency_safe)]
pub async fn tool_search(
    /// What you need, one entry per separate need: 1 to 8 short intents,
    /// such as "convert a PDF to text" (only the first 500 characters of
    /// each are read).
    intents: Vec<String>,
    #[ctx] cx: &ToolContext,
    #[state] discovery: State<Discovery>,
) -> ToolResult {
    discovery.search(cx, intents).await
}
