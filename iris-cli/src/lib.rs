#![cfg_attr(docsrs, feature(doc_cfg))]
//! The `iris` command line: list the tools of an agent file or an MCP
//! server, see the schema each provider receives, call a tool through the
//! real executor, and check an agent file.
//!
//! ```text
//! iris list   --agent agent.yaml            # the catalog, as a table or --json
//! iris schema read_file --provider openai-strict --agent agent.yaml
//! iris call   read_file path=README.md --agent agent.yaml
//! iris call   write_file path=a.txt content=hi --approve --agent agent.yaml
//! iris check  agent.yaml                    # every problem, with file:line:column
//! iris search "change a file" --agent agent.yaml
//! iris serve  --agent agent.yaml            # the catalog as one MCP server (stdio)
//! iris list   --mcp "npx -y @modelcontextprotocol/server-everything"
//! ```
//!
//! Data goes to stdout and diagnostics to stderr; `--json` prints one JSON
//! value with a `format` version, and a failure as one JSON line on
//! stderr. Exit codes ([`Exit`]): 0 done, 1 the tool returned an error, 2
//! the command line was wrong (or the call's arguments), 3 refused by the
//! policy or a hook, 4 waiting for approval, 5 the agent file has
//! problems, 6 the catalog could not be reached, 70 Iris failed.
//!
//! A host whose `#[tool]`s live in its own binary mounts the same commands
//! over its registry with [`main`] (in a `src/bin/`), since only its binary
//! links them.

mod approve;
mod args;
mod catalog;
mod commands;
mod exit;
mod output;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Command};
use iris_runtime::ToolRegistry;

use catalog::{Catalog, Source};
pub use exit::Exit;
pub use output::FORMAT;
use output::Out;

/// The command set, for a host to add to its own command line.
#[must_use]
pub fn command() -> Command {
    let catalog_args = [
        Arg::new("agent")
            .long("agent")
            .value_name("FILE")
            .help("The tools of this agent file"),
        Arg::new("mcp")
            .long("mcp")
            .value_name("COMMAND|URL")
            .help("The tools of this MCP server (a command line, never run by a shell, or a URL)"),
        Arg::new("json")
            .long("json")
            .action(ArgAction::SetTrue)
            .help("Print one JSON value (with a format version) instead of text"),
    ];
    Command::new("iris")
        .about("List, inspect and call the tools of an agent file or an MCP server")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommand(
            Command::new("list")
                .about("List the tools")
                .args(catalog_args.clone()),
        )
        .subcommand(
            Command::new("schema")
                .about("Show what a provider receives for a tool, and what changed on the way")
                .arg(Arg::new("tool").required(true).value_name("TOOL"))
                .arg(
                    Arg::new("provider")
                        .long("provider")
                        .value_name("PROVIDER")
                        .default_value("openai")
                        .value_parser(commands::schema::PROVIDERS)
                        .help(
                            "openai, openai-strict, responses, anthropic, gemini or gemini-openapi",
                        ),
                )
                .args(catalog_args.clone()),
        )
        .subcommand(
            Command::new("search")
                .about("Rank the tools for an intent, as tool_search does")
                .arg(Arg::new("intent").required(true).value_name("INTENT"))
                .arg(
                    Arg::new("explain")
                        .long("explain")
                        .action(ArgAction::SetTrue)
                        .help("Show each term's part in each score"),
                )
                .args(catalog_args.clone()),
        )
        .subcommand(
            Command::new("serve")
                .about("Serve the catalog as one MCP server (stdio, or --http ADDRESS)")
                .arg(
                    Arg::new("http")
                        .long("http")
                        .value_name("ADDRESS")
                        .help("Streamable HTTP on this address instead of stdio"),
                )
                .args(catalog_args.clone()),
        )
        .subcommand(
            Command::new("run")
                .about("Run the agent file's agent on a task with its model")
                .arg(Arg::new("file").required(true).value_name("AGENT.yaml"))
                .arg(Arg::new("task").value_name("TASK").help("What to do (not with --resume)"))
                .arg(
                    Arg::new("resume")
                        .long("resume")
                        .value_name("STATE")
                        .conflicts_with("task")
                        .help("Resume a run saved while it waited for approval"),
                )
                .arg(
                    Arg::new("save")
                        .long("save")
                        .value_name("STATE")
                        .default_value("iris-run.json")
                        .help("Where a run that waits (or stops) is saved"),
                )
                .arg(
                    Arg::new("approve")
                        .long("approve")
                        .action(ArgAction::SetTrue)
                        .conflicts_with("deny")
                        .help("Approve every call that waits for approval"),
                )
                .arg(
                    Arg::new("deny")
                        .long("deny")
                        .action(ArgAction::SetTrue)
                        .help("Deny every call that waits for approval"),
                )
                .arg(
                    Arg::new("jsonl")
                        .long("jsonl")
                        .action(ArgAction::SetTrue)
                        .help("Print every run event as one JSON line"),
                ),
        )
        .subcommand(
            Command::new("call")
                .about("Call a tool through the executor: key=text, key:=json")
                .arg(Arg::new("tool").required(true).value_name("TOOL"))
                .arg(
                    Arg::new("arguments")
                        .num_args(0..)
                        .value_name("KEY=VALUE")
                        .help("key=text for a string, key:=json for anything else"),
                )
                .arg(
                    Arg::new("args-file")
                        .long("args-file")
                        .value_name("FILE")
                        .help("Arguments as a JSON object in a file (`-` for stdin)"),
                )
                .arg(
                    Arg::new("approve")
                        .long("approve")
                        .action(ArgAction::SetTrue)
                        .conflicts_with("deny")
                        .help("Approve the call if it waits for approval"),
                )
                .arg(
                    Arg::new("deny")
                        .long("deny")
                        .action(ArgAction::SetTrue)
                        .help("Deny the call if it waits for approval"),
                )
                .args(catalog_args.clone()),
        )
        .subcommand(
            Command::new("lint")
                .about("Find what each provider really receives, weak descriptions and tools searches confuse")
                .arg(
                    Arg::new("format")
                        .long("format")
                        .value_name("FORMAT")
                        .value_parser(["text", "json", "sarif"])
                        .help("text (the default), json or sarif"),
                )
                .arg(
                    Arg::new("strict")
                        .long("strict")
                        .action(ArgAction::SetTrue)
                        .help("Fail on warnings too (exit 7), for CI"),
                )
                .args(catalog_args.clone()),
        )
        .subcommand(
            Command::new("eval")
                .about("Measure how well searches find the right tool for labelled requests")
                .arg(Arg::new("cases").required(true).value_name("CASES.yaml"))
                .arg(
                    Arg::new("k")
                        .long("k")
                        .value_name("K")
                        .default_value("5")
                        .value_parser(clap::value_parser!(usize))
                        .help("Candidates counted for top-k"),
                )
                .arg(
                    Arg::new("baseline")
                        .long("baseline")
                        .value_name("FILE")
                        .help("An earlier `iris eval --json`: fail (exit 8) when a figure falls below it"),
                )
                .arg(
                    Arg::new("fail-under")
                        .long("fail-under")
                        .value_name("POINTS")
                        .default_value("0")
                        .value_parser(clap::value_parser!(f64))
                        .help("Points (0 to 100) a figure may fall below the baseline"),
                )
                .args(catalog_args.clone()),
        )
        .subcommand(
            Command::new("lock")
                .about("Pin the catalog (tools, schemas, hashes) in a lockfile")
                .arg(
                    Arg::new("output")
                        .long("output")
                        .short('o')
                        .value_name("FILE")
                        .default_value(commands::lock::DEFAULT_LOCKFILE)
                        .help("Where to write it (`-` for stdout)"),
                )
                .args(catalog_args.clone()),
        )
        .subcommand(
            Command::new("diff")
                .about("Classify what changed since a lockfile: breaking (exit 9), compatible or cosmetic")
                .arg(
                    Arg::new("lockfile")
                        .value_name("LOCKFILE")
                        .default_value(commands::lock::DEFAULT_LOCKFILE),
                )
                .arg(
                    Arg::new("against")
                        .long("against")
                        .value_name("LOCKFILE")
                        .help("Compare with this lockfile instead of the catalog"),
                )
                .args(catalog_args.clone()),
        )
        .subcommand(
            Command::new("doctor")
                .about("Check that this machine can run the catalog: it loads, its model answers, its workspace is writable")
                .args(catalog_args.clone()),
        )
        .subcommand(
            Command::new("completions")
                .about("Print a completion script for a shell")
                .arg(
                    Arg::new("shell")
                        .required(true)
                        .value_name("SHELL")
                        .value_parser(clap::value_parser!(clap_complete::Shell))
                        .help("bash, zsh, fish, elvish or powershell"),
                ),
        )
        .subcommand(
            Command::new("check")
                .about("Check an agent file: every problem, with file:line:column")
                .arg(Arg::new("file").required(true).value_name("AGENT.yaml"))
                .arg(catalog_args[2].clone()),
        )
}

/// Runs the command line `args` (the program's name first) over the
/// catalog it names, or over `host` when it names none; the exit code.
pub fn run_with(args: impl IntoIterator<Item = OsString>, host: Option<ToolRegistry>) -> Exit {
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

/// The `iris` binary's main: the command line of this process.
#[must_use]
pub fn run_cli() -> ExitCode {
    run_with(std::env::args_os(), None).into()
}

/// A host's `main`: the commands over `registry` (the host's own
/// `#[tool]`s), unless the command line names another catalog.
#[must_use]
pub fn main(registry: ToolRegistry) -> ExitCode {
    run_with(std::env::args_os(), Some(registry)).into()
}

async fn dispatch(matches: &ArgMatches, host: Option<ToolRegistry>) -> Exit {
    let Some((name, sub)) = matches.subcommand() else {
        return Exit::Usage;
    };
    let out = Out {
        json: matches!(sub.try_get_one::<bool>("json"), Ok(Some(true))),
    };
    if name == "completions" {
        if let Some(shell) = sub.get_one::<clap_complete::Shell>("shell") {
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut command(), "iris", &mut script);
            out.line(String::from_utf8_lossy(&script).trim_end());
        }
        return Exit::Ok;
    }
    if name == "run" {
        let file = sub
            .get_one::<String>("file")
            .map(PathBuf::from)
            .unwrap_or_default();
        let resume = sub.get_one::<String>("resume").map(PathBuf::from);
        let options = commands::run::Options {
            file: &file,
            task: sub.get_one::<String>("task").map(String::as_str),
            resume: resume.as_deref(),
            save: sub
                .get_one::<String>("save")
                .map_or_else(|| PathBuf::from("iris-run.json"), PathBuf::from),
            decide: decision_flags(sub),
            jsonl: sub.get_flag("jsonl"),
        };
        return commands::run::run(&options, out).await;
    }
    if name == "check" {
        let file = sub
            .get_one::<String>("file")
            .map(PathBuf::from)
            .unwrap_or_default();
        return commands::check::run(&file, out).await;
    }
    let source = match (sub.get_one::<String>("agent"), sub.get_one::<String>("mcp")) {
        (Some(_), Some(_)) => {
            return out.fail(
                Exit::Usage,
                "name one catalog: `--agent` or `--mcp`, not both",
            );
        }
        (Some(agent), None) => Source::Agent(PathBuf::from(agent)),
        (None, Some(mcp)) => Source::Mcp(mcp.clone()),
        (None, None) if host.is_some() => Source::Host,
        (None, None) if std::path::Path::new("agent.yaml").exists() => {
            Source::Agent(PathBuf::from("agent.yaml"))
        }
        (None, None) => {
            return out.fail(
                Exit::Usage,
                "no catalog: name one with `--agent FILE` or `--mcp COMMAND|URL` (or run where `agent.yaml` is)",
            );
        }
    };
    if name == "doctor" {
        return commands::doctor::run(&source, host, out).await;
    }
    let catalog = match Catalog::open(&source, host).await {
        Ok(catalog) => catalog,
        Err((exit, message)) => return out.fail(exit, &message),
    };
    match name {
        "list" => commands::list::run(&catalog, out),
        "schema" => {
            let tool = sub.get_one::<String>("tool").map_or("", String::as_str);
            let provider = sub
                .get_one::<String>("provider")
                .map_or("openai", String::as_str);
            commands::schema::run(&catalog, tool, provider, out)
        }
        "call" => call(sub, &catalog, &source, out).await,
        "search" => {
            let intent = sub.get_one::<String>("intent").map_or("", String::as_str);
            commands::search::run(&catalog, intent, sub.get_flag("explain"), out)
        }
        "lint" => {
            let format = match (
                sub.get_one::<String>("format").map(String::as_str),
                out.json,
            ) {
                (Some("sarif"), _) => commands::lint::Format::Sarif,
                (Some("json"), _) | (None, true) => commands::lint::Format::Json,
                _ => commands::lint::Format::Text,
            };
            let out = Out {
                json: format != commands::lint::Format::Text,
            };
            let file = match &source {
                Source::Agent(path) => Some(path.display().to_string()),
                _ => None,
            };
            commands::lint::run(
                &catalog,
                file.as_deref(),
                format,
                sub.get_flag("strict"),
                out,
            )
        }
        "eval" => {
            let cases = sub
                .get_one::<String>("cases")
                .map(PathBuf::from)
                .unwrap_or_default();
            let baseline = sub.get_one::<String>("baseline").map(PathBuf::from);
            let options = commands::eval::Options {
                cases: &cases,
                k: sub.get_one::<usize>("k").copied().unwrap_or(5),
                baseline: baseline.as_deref(),
                fail_under: sub.get_one::<f64>("fail-under").copied().unwrap_or(0.0),
            };
            commands::eval::run(&catalog, &options, out)
        }
        "lock" => {
            let output = sub.get_one::<String>("output").map_or("-", String::as_str);
            commands::lock::run(&catalog, output, out)
        }
        "diff" => {
            let lockfile = sub
                .get_one::<String>("lockfile")
                .map(PathBuf::from)
                .unwrap_or_default();
            let against = sub.get_one::<String>("against").map(PathBuf::from);
            commands::diff::run(&catalog, &lockfile, against.as_deref(), out)
        }
        "serve" => {
            let http = sub.get_one::<String>("http").map(String::as_str);
            commands::serve::run(catalog, http, out).await
        }
        _ => Exit::Usage,
    }
}

async fn call(sub: &ArgMatches, catalog: &Catalog, source: &Source, out: Out) -> Exit {
    let tool = sub.get_one::<String>("tool").map_or("", String::as_str);
    let base = match sub.get_one::<String>("args-file") {
        None => None,
        Some(file) => {
            let text = if file == "-" {
                let mut text = String::new();
                match std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
                    Ok(_) => text,
                    Err(e) => return out.fail(Exit::Usage, &format!("stdin: {e}")),
                }
            } else {
                match std::fs::read_to_string(file) {
                    Ok(text) => text,
                    Err(e) => return out.fail(Exit::Usage, &format!("`{file}`: {e}")),
                }
            };
            match serde_json::from_str(&text) {
                Ok(value) => Some(value),
                Err(e) => {
                    return out.fail(Exit::Usage, &format!("the arguments file is not JSON: {e}"));
                }
            }
        }
    };
    let pairs: Vec<String> = sub
        .get_many::<String>("arguments")
        .map(|values| values.cloned().collect())
        .unwrap_or_default();
    let arguments = match args::parse(base, &pairs) {
        Ok(arguments) => arguments,
        Err(why) => return out.fail(Exit::Usage, &why),
    };
    let decide = decision_flags(sub);
    let workspace = Catalog::workspace(source);
    commands::call::run(catalog, &workspace, tool, arguments, decide, out).await
}

/// How `--approve` and `--deny` decide waiting calls.
fn decision_flags(sub: &ArgMatches) -> approve::Decide {
    if sub.get_flag("approve") {
        approve::Decide::Approve
    } else if sub.get_flag("deny") {
        approve::Decide::Deny
    } else {
        approve::Decide::Ask
    }
}
