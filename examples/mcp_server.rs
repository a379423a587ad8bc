//! Iris tools served over MCP on stdio: `square` and the file tools
//! (`read_file`, `write_file`, `edit_file`) in the current folder, through
//! the executor, so a write waits for a person (asked through the host's
//! elicitation, or refused when the host cannot ask).
//!
//! ```sh
//! cargo build --release --example mcp_server --features mcp
//! ```
//!
//! Then tell an MCP host to start it; for Claude Desktop, Cursor or VS Code
//! the entry looks like this (use the absolute path of the binary and of
//! the folder the tools may work in):
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "iris": {
//!       "command": "/path/to/target/release/examples/mcp_server",
//!       "cwd": "/path/to/workspace"
//!     }
//!   }
//! }
//! ```
//!
//! Standard output carries the protocol: this program never prints to it.

use std::error::Error;
use std::sync::Arc;

use iris::fs::register_file_tools;
use iris::mcp::server::{ServeTransport, serve};
use iris::{ToolExecutor, ToolRegistry};

/// Return the square of an integer.
#[iris::tool(read_only, concurrency_safe)]
fn square(
    /// The integer to square.
    value: i64,
) -> i64 {
    value * value
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut registry = ToolRegistry::new();
    registry.register(Square)?;
    register_file_tools(&mut registry)?;
    // The default policy: reads run, writes ask.
    let executor = Arc::new(ToolExecutor::builder(registry).build()?);
    serve(executor, ServeTransport::Stdio).await?;
    Ok(())
}
