//! The `iris` command set mounted over a host's own executor: here the
//! 500-tool example catalog (the one the discovery example defers), so
//! every command of the command line works on tools only this binary links.
//!
//! ```sh
//! cargo run --release --features cli --example catalog_cli -- list --json
//! cargo run --release --features cli --example catalog_cli -- search "cancel my hotel booking" --explain
//! cargo run --release --features cli --example catalog_cli -- lint
//! ```
//!
//! `IRIS_CATALOG_TOOLS` sets how many tools (500 unless set).
#![allow(
    clippy::print_stderr,
    reason = "an example says on stderr why it stopped"
)]

#[allow(
    dead_code,
    clippy::panic,
    reason = "shared with the discovery example; the catalog is fixed and valid"
)]
#[path = "discovery/catalog.rs"]
mod catalog;

use std::process::ExitCode;

use iris::ToolRegistry;

fn main() -> ExitCode {
    let count = std::env::var("IRIS_CATALOG_TOOLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(500);
    let mut registry = ToolRegistry::new();
    for tool in catalog::tools(count) {
        if let Err(error) = registry.register(tool) {
            eprintln!("the example catalog does not register: {error}");
            return ExitCode::FAILURE;
        }
    }
    // What the host runs: here the tools under the default policy (a host
    // with hooks or middleware adds them to this builder, or hands over its
    // `Agent`).
    match iris::ToolExecutor::builder(registry).build() {
        Ok(executor) => iris::cli::main(executor),
        Err(error) => {
            eprintln!("the example catalog does not build an executor: {error}");
            ExitCode::FAILURE
        }
    }
}
