//! `iris login SERVER --agent AGENT.yaml`: a person signs in once to an MCP
//! server of the agent file whose transport has a `login:` section (the
//! OAuth authorization-code flow in the browser); the tokens go to the
//! token cache, where `iris serve`, `iris run` and every other command
//! reaching that server find them.

use std::path::Path;
use std::time::Duration;

use clap::{Arg, ArgAction, Command};
use serde_json::json;

use crate::exit::Exit;
use crate::output::Out;

/// How the sign-in goes.
pub(crate) struct Options<'a> {
    /// The server's name in the agent file.
    pub(crate) server: &'a str,
    /// Open the sign-in page in a browser (else only print its address).
    pub(crate) open_browser: bool,
    /// How long to wait for the browser to come back.
    pub(crate) wait: Duration,
}

pub(crate) async fn run(path: &Path, options: &Options<'_>, out: Out) -> Exit {
    let servers = match iris_agent::assembly::mcp_servers(path) {
        Ok(servers) => servers,
        Err(error) => {
            for problem in &error.issues {
                out.note(&problem.to_string());
            }
            return out.fail(
                Exit::Invalid,
                &format!("{} problem(s) in {}", error.issues.len(), path.display()),
            );
        }
    };
    let Some(config) = servers.iter().find(|s| s.name == options.server) else {
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        return out.fail(
            Exit::Usage,
            &format!(
                "{} names no MCP server `{}`; it names: {}",
                path.display(),
                options.server,
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            ),
        );
    };
    let show = |address: &str| {
        out.note(&format!(
            "Sign in to `{}` at this address (waiting up to {}):\n\n  {address}\n",
            options.server,
            humantime::format_duration(options.wait)
        ));
        if options.open_browser
            && let Err(error) = webbrowser::open(address)
        {
            out.note(&format!(
                "no browser could be opened ({error}); open the address yourself"
            ));
        }
    };
    match iris_mcp::client::login(config, options.wait, show).await {
        Ok(signed_in) => {
            if out.json {
                out.json(json!({
                    "server": signed_in.server,
                    "issuer": signed_in.issuer,
                    "scopes": signed_in.scopes,
                    "token_cache": signed_in.token_cache.display().to_string(),
                }));
            } else {
                out.line(&format!(
                    "signed in to `{}` at {} (scopes: {}); tokens kept in {}, readable only by you",
                    signed_in.server,
                    signed_in.issuer,
                    if signed_in.scopes.is_empty() {
                        "none named".to_owned()
                    } else {
                        signed_in.scopes.join(" ")
                    },
                    signed_in.token_cache.display()
                ));
            }
            Exit::Ok
        }
        Err(error) => out.fail(Exit::Unreachable, &error.to_string()),
    }
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("login")
        .about("Sign in to an MCP server of an agent file (OAuth in the browser), once")
        .arg(Arg::new("server").required(true).help(
            "The MCP server's name in the agent file (its transport needs a `login:` section)",
        ))
        .arg(crate::catalog::agent_file_arg())
        .arg(
            Arg::new("no-browser")
                .long("no-browser")
                .action(ArgAction::SetTrue)
                .help(
                    "Only print the sign-in address, to open in a browser on this machine yourself",
                ),
        )
        .arg(
            Arg::new("wait")
                .long("wait")
                .value_name("DURATION")
                .default_value("5m")
                .value_parser(humantime::parse_duration)
                .help("How long to wait for the browser to come back"),
        )
        .arg(crate::catalog::json_arg())
}
