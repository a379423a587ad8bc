//! Reading configuration files, shared by the Iris crates that read them
//! (agent files, MCP server settings, the Decision backend's settings): one
//! bounded YAML loader whose errors carry line, column and key path, and
//! durations written as configuration files write them. Not a public API
//! beyond [`Seconds`], which agent files and MCP settings name.

mod duration;
#[cfg(feature = "yaml")]
pub mod yaml;

pub use duration::Seconds;
