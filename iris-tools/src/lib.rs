#![cfg_attr(docsrs, feature(doc_cfg))]
//! The built-in tools of Iris, above the runtime:
//!
//! - [`fs`]: `read_file`, `write_file` and `edit_file`, confined to a
//!   workspace folder, with read-before-edit safety (feature `fs`).
//! - [`command`]: tools whose body is an external program, defined by
//!   configuration (feature `command`).
//! - [`discovery`]: deferred tools behind `tool_search`, a local ranker,
//!   budgeted disclosure, and the remote Decision backend (features
//!   `discovery` and `decision`).
//!
//! Most users depend on the `iris` facade, which re-exports both as
//! `iris::fs` and `iris::discovery`.

#[cfg(feature = "command")]
pub mod command;
#[cfg(feature = "discovery")]
pub mod discovery;
#[cfg(feature = "fs")]
pub mod fs;
