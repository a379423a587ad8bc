//! From a command line to a command: the command set, the runtime, and
//! which command runs over which catalog.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::catalog::{Catalog, Source};
use crate::output::{self, Out};
use crate::{Exit, Host, commands, logging, progress};
use clap::{ArgMatches, Command};

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

async fn dispatch(matches: &ArgMatches, mut host: Host) -> Exit {
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
    // The folder the file tools serve is also the root the agent's MCP
    // servers are told of, those the file lets ask their caller.
    if matches!(name, "serve" | "run") {
        host.assembly = host.assembly.with_roots([Catalog::workspace(sub)]);
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
                        .unwrap_or(iris_mcp::client::UpstreamLogin::DEFAULT_WAIT),
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
