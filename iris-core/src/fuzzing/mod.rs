//! Harnesses for fuzzing the parsers of this crate: each takes bytes, runs
//! a parser, and panics when a property the parser must keep does not
//! hold. Driven by the libFuzzer targets in `fuzz/` and by the workspace
//! tests, which replay their seeds and saved reproducers. Not a public API.
#![allow(
    clippy::panic,
    reason = "a harness reports a broken property by panicking, as the fuzzer expects"
)]

mod arguments;
mod paths;
mod projections;

pub use arguments::tool_arguments;
pub use paths::points_inside;
pub use projections::schema_projections;

/// `data` as JSON, or `None`: bytes that are not JSON never reach a parser
/// that takes a value.
fn json(data: &[u8]) -> Option<serde_json::Value> {
    serde_json::from_slice(data).ok()
}
