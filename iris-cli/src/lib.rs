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
mod catalog;
mod commands;
mod exit;
mod host;
mod logging;
mod output;
mod progress;
mod script;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use catalog::{Catalog, Source};
use clap::{ArgMatches, Command};
pub use exit::Exit;
pub use host::Host;
pub use output::FORMAT;
use output::Out;

/// The command set, for a host to add to its own command line.
#[must_use]
pub fn command() -> Command {
    Command::new("iris")
        .about("List, inspect, call, serve, run, lint, evaluate and pin a tool catalog; sign in to its servers")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommands([
            commands::list::command(),
            commands::schema::command(),
            commands::search::command(),
            commands::call::command(),
            commands::serve::command(),
            commands::run::command(),
            commands::check::command(),
            commands::lint::command(),
            commands::eval::command(),
            commands::lock::command(),
            commands::login::command(),
            commands::diff::command(),
            commands::doctor::command(),
            commands::completions::command(),
        ])
}

/// Runs the command line `args` (the program's name first) over the
/// catalog it names (agent files assembled with `host`'s assembly), or over
/// what `host` runs itself when it names none; the exit code.
pub fn run_with(args: impl IntoIterator<Item = OsString>, host: impl Into<Host>) -> Exit {
    let host = host.into();
    let mut args = args.into_iter().peekable();
    if let Some(first) = args.peek() {
        output::name_program(first);
    }
    let matches = match command().try_get_matches_from(args) {
        Ok(matches) => matches,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() {
                Exit::Usage
            } else {
                Exit::Ok
            };
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            return Out { json: false }.fail(Exit::Internal, &format!("no async runtime: {e}"));
        }
    };
    runtime.block_on(dispatch(&matches, host))
}

/// The `iris` binary's main: the command line of this process, over
/// agent files and MCP servers.
#[must_use]
pub fn run_cli() -> ExitCode {
    run_with(std::env::args_os(), Host::binary()).into()
}

/// A host's `main`: the commands over what the host really runs, since
/// only its binary links its tools. Hand over its [`Agent`](iris_agent::Agent)
/// or [`ToolExecutor`](iris_runtime::ToolExecutor) (tools, policy, hooks,
/// middleware), an [`Assembly`](iris_agent::assembly::Assembly) for its
/// agent files (toolbox services, its own hooks and middleware), or both
/// through [`Host`]. A bare [`ToolRegistry`](iris_runtime::ToolRegistry)
/// still works, and the commands say that no hooks or middleware are
/// attached.
#[must_use]
pub fn main(host: impl Into<Host>) -> ExitCode {
    run_with(std::env::args_os(), host).into()
}

async fn dispatch(matches: &ArgMatches, host: Host) -> Exit {
    let Some((name, sub)) = matches.subcommand() else {
        return Exit::Usage;
    };
    let out = Out {
        json: matches!(sub.try_get_one::<bool>("json"), Ok(Some(true))),
    };
    // `run` installs it with its traces' exporter, once it knows it.
    if name != "run" {
        logging::install(None::<tracing_subscriber::layer::Identity>);
    }
    // The commands that need no catalog, or make their own.
    match name {
        "completions" => {
            return sub
                .get_one::<clap_complete::Shell>("shell")
                .map_or(Exit::Usage, |shell| commands::completions::run(*shell, out));
        }
        "check" | "run" | "login" => {
            // These take an agent file and nothing else.
            let file = match source_of(sub, false) {
                Ok(Source::Agent(file)) => file,
                Ok(_) => {
                    return out.fail(
                        Exit::Usage,
                        &format!("`{name}` takes an agent file: `--agent FILE`"),
                    );
                }
                Err(message) => return out.fail(Exit::Usage, message),
            };
            return if name == "check" {
                commands::check::run(&file, &host.assembly, out).await
            } else if name == "login" {
                let options = commands::login::Options {
                    server: sub.get_one::<String>("server").map_or("", String::as_str),
                    open_browser: !sub.get_flag("no-browser"),
                    wait: sub
                        .get_one::<std::time::Duration>("wait")
                        .copied()
                        .unwrap_or(iris_mcp::LOGIN_WAIT),
                };
                commands::login::run(&file, &options, out).await
            } else {
                Box::pin(commands::run::from_matches(sub, file, &host, out)).await
            };
        }
        _ => {}
    }
    let source = match source_of(sub, host.has_own()) {
        Ok(source) => source,
        Err(message) => return out.fail(Exit::Usage, message),
    };
    if name == "doctor" {
        return commands::doctor::run(&source, host, out).await;
    }
    let opening = progress::after_a_second("loading the catalog (starting its MCP servers)", out);
    let opened = Catalog::open(&source, host).await;
    drop(opening);
    let catalog = match opened {
        Ok(catalog) => catalog,
        Err((exit, message)) => return out.fail(exit, &message),
    };
    let text = |key: &str| sub.get_one::<String>(key).map(String::as_str);
    match name {
        "list" => commands::list::run(&catalog, out),
        "schema" => commands::schema::run(
            &catalog,
            text("tool").unwrap_or_default(),
            text("provider").unwrap_or("openai"),
            out,
        ),
        "call" => commands::call::from_matches(sub, &catalog, out).await,
        "search" => commands::search::run(
            &catalog,
            text("intent").unwrap_or_default(),
            sub.get_flag("explain"),
            out,
        ),
        "serve" => {
            let http = commands::serve::Http {
                address: text("http"),
                no_auth: sub.get_flag("no-auth"),
            };
            commands::serve::run(catalog, sub, http, out).await
        }
        "lint" => commands::lint::from_matches(sub, &catalog, &source, out),
        "eval" => commands::eval::from_matches(sub, &catalog, out),
        "lock" => commands::lock::run(&catalog, text("output").unwrap_or("-"), out),
        "diff" => {
            let lockfile = text("lockfile").map(PathBuf::from).unwrap_or_default();
            let against = text("against").map(PathBuf::from);
            commands::diff::run(&catalog, &lockfile, against.as_deref(), out)
        }
        _ => Exit::Usage,
    }
}

/// The catalog the command line names: `--agent`, `--mcp`, what the host
/// runs itself, or `agent.yaml` in the current folder.
fn source_of(sub: &ArgMatches, has_host: bool) -> Result<Source, &'static str> {
    let named = |key: &str| sub.try_get_one::<String>(key).ok().flatten();
    match (named("agent"), named("mcp")) {
        (Some(_), Some(_)) => Err("name one catalog: `--agent` or `--mcp`, not both"),
        (Some(agent), None) => Ok(Source::Agent(PathBuf::from(agent))),
        (None, Some(mcp)) => Ok(Source::Mcp(mcp.clone())),
        (None, None) if has_host => Ok(Source::Host),
        (None, None) if std::path::Path::new("agent.yaml").exists() => {
            Ok(Source::Agent(PathBuf::from("agent.yaml")))
        }
        (None, None) => Err(
            "no catalog: name one with `--agent FILE` or `--mcp COMMAND|URL` (or run where `agent.yaml` is)",
        ),
    }
}

/// How `--approve` and `--deny` decide waiting calls.
pub(crate) fn decision_flags(sub: &ArgMatches) -> approve::Decide {
    if sub.get_flag("approve") {
        approve::Decide::Approve
    } else if sub.get_flag("deny") {
        approve::Decide::Deny
    } else {
        approve::Decide::Ask
    }
}
