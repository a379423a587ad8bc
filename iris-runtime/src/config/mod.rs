//! Reading configuration files, shared by the Iris crates that read them
//! (agent files, MCP server settings, the Decision backend's settings): one
//! bounded YAML loader whose errors carry line, column and key path, and
//! durations written as configuration files write them. Not a public API
//! beyond [`Seconds`], which agent files and MCP settings name, and
//! [`Problem`], what is wrong with a file and where.

mod duration;
mod problem;
// The loader and its helpers, shared with the crates that read files.
#[cfg(feature = "yaml")]
#[doc(hidden)]
pub mod yaml;

pub use duration::Seconds;
pub use problem::{Problem, Severity};
