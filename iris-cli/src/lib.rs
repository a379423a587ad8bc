#![cfg_attr(docsrs, feature(doc_cfg))]
//! The `iris` command line: list, inspect, call and serve the tools of an
//! agent file or an MCP server, run the agent on a task, and gate a catalog
//! in CI (lint, eval, lock and diff).
//!
//! ```text
//! iris list   --agent agent.yaml            # the catalog, as a table or --json
//! iris schema read_file --provider openai-strict --agent agent.yaml
//! iris call   read_file path=README.md --agent agent.yaml
//! iris call   write_file path=a.txt content=hi --approve --agent agent.yaml
//! iris search "change a file" --explain --agent agent.yaml
//! iris serve  --agent agent.yaml            # the catalog as one MCP server (stdio)
//! iris run    "Tidy the config" --agent agent.yaml   # the agent loop with the file's model
//! iris check  --agent agent.yaml            # every problem, with file:line:column
//! iris lint   --strict --format sarif       # what providers receive, weak or confusable tools
//! iris eval   cases.yaml --baseline base.json
//! iris lock && iris diff                    # breaking, compatible or cosmetic changes
//! iris doctor; iris completions bash
//! iris list   --mcp "npx -y @modelcontextprotocol/server-everything"
//! ```
//!
//! Data goes to stdout and diagnostics to stderr; `--json` prints one JSON
//! value with a `format` version, and a failure as one JSON line on
//! stderr. Exit codes ([`Exit`]): 0 done, 1 the tool returned an error, 2
//! the command line was wrong (or the call's arguments), 3 refused by the
//! policy or a hook, 4 waiting for approval, 5 the agent file has
//! problems, 6 the catalog or the model could not be reached, 7 lint
//! failed, 8 eval regressed from its baseline, 9 diff found a breaking
//! change, 10 a run took its `max_steps` or was cut off by `max_tokens`,
//! 130 a run was cancelled (Ctrl-C), 70 Iris failed.
//!
//! A host whose tools live in its own binary mounts the same commands over
//! what it really runs with [`main`] (in a `src/bin/`), since only its
//! binary links them: its agent or executor (tools, policy, hooks,
//! middleware) for commands that name no agent file, and an assembly for
//! those that do (toolbox services, its own hooks and middleware), through
//! [`Host`]:
//!
//! ```no_run
//! use std::sync::Arc;
//! use iris_agent::assembly::Assembly;
//! use iris_runtime::hooks::HookRegistration;
//!
//! # struct Desk;
//! # impl iris_core::Toolbox for Desk {
//! #     fn tools(_: Arc<Self>) -> Vec<Arc<dyn iris_core::DynTool>> { Vec::new() }
//! # }
//! fn main() -> std::process::ExitCode {
//!     use iris_runtime::hooks::{BeforeAnswer, HookInput};
//!     let guard = HookRegistration::before("no-secrets", |input: &HookInput| {
//!         let text = input.arguments.as_ref().map(ToString::to_string).unwrap_or_default();
//!         if text.contains("secret") {
//!             BeforeAnswer::deny("the call holds a secret")
//!         } else {
//!             BeforeAnswer::Allow
//!         }
//!     });
//!     let assembly = Assembly::from_catalog()
//!         .with_toolbox(Arc::new(Desk))
//!         .with_hook(guard);
//!     // `desk check`, `desk list`, `desk serve` over `--agent desk.yaml`.
//!     iris_cli::main(assembly)
//! }
//! ```

mod answer;
mod approve;
mod args;
mod budget;
mod catalog;
mod commands;
mod dispatch;
mod exit;
mod host;
mod logging;
mod output;
mod progress;
mod script;

pub use dispatch::{command, main, run_cli, run_with};
pub use exit::Exit;
pub use host::Host;
pub use output::FORMAT;
