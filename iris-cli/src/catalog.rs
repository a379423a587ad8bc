//! Where a command's tools come from: what a host runs itself, an agent
//! file (assembled with the host's assembly), or an MCP server started by
//! command or reached by URL.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Arg, ArgAction, ArgMatches};
use iris_agent::Agent;
use iris_mcp::client::{McpClient, McpServerConfig};
use iris_runtime::{ToolExecutor, ToolRegistry};

use crate::exit::Exit;
use crate::host::{Host, Own};

/// The arguments that name a catalog, and `--json`, shared by the
/// commands over one.
pub(crate) fn args() -> [Arg; 3] {
    [
        agent_arg(),
        Arg::new("mcp")
            .long("mcp")
            .value_name("COMMAND|URL")
            .help("The tools of this MCP server (a command line, never run by a shell, or a URL)"),
        json_arg(),
    ]
}

/// `--agent FILE`, the one way every command names an agent file.
pub(crate) fn agent_arg() -> Arg {
    agent_file_arg().help("The agent file (default: the host's own agent, else agent.yaml here)")
}

/// `--agent FILE` for the commands that take nothing but a file.
pub(crate) fn agent_file_arg() -> Arg {
    Arg::new("agent")
        .long("agent")
        .value_name("FILE")
        .help("The agent file (default: agent.yaml here)")
}

/// `--workspace DIR`.
pub(crate) fn workspace_arg() -> Arg {
    Arg::new("workspace")
        .long("workspace")
        .value_name("DIR")
        .help("The folder the file tools read and write (default: the current folder); the agent's own files and .iris/ are never among them")
}

/// `--json`.
pub(crate) fn json_arg() -> Arg {
    Arg::new("json")
        .long("json")
        .action(ArgAction::SetTrue)
        .help("Print one JSON value (with a format version) instead of text")
}

/// What a command was pointed at.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// What the host runs itself (`iris_cli::main`).
    Host,
    /// An agent file.
    Agent(PathBuf),
    /// An MCP server: a URL, or a command and its arguments.
    Mcp(String),
}

/// The tools, ready to list and call.
pub(crate) struct Catalog {
    pub(crate) agent: Arc<Agent>,
    /// Kept open while the catalog is used.
    _servers: Vec<McpClient>,
}

impl Catalog {
    /// The catalog `source` names, agent files assembled with the host's
    /// assembly; the host's own agent for [`Source::Host`].
    pub(crate) async fn open(source: &Source, host: Host) -> Result<Self, (Exit, String)> {
        match source {
            Source::Host => {
                let agent = match host.own {
                    Own::Agent(agent) => agent,
                    Own::Executor(executor) => Arc::new(agent_over(executor)?),
                    Own::Registry(registry) => {
                        announce_bare();
                        Arc::new(agent_over(built(ToolExecutor::builder(registry).build())?)?)
                    }
                    Own::Nothing => {
                        return Err((
                            Exit::Usage,
                            "no catalog: name one with `--agent FILE` or `--mcp COMMAND|URL`"
                                .to_owned(),
                        ));
                    }
                };
                Ok(Self {
                    agent,
                    _servers: Vec::new(),
                })
            }
            Source::Agent(path) => {
                let agent = host.assembly.connect(path).await.map_err(|e| {
                    let exit = if path.exists() {
                        Exit::Invalid
                    } else {
                        Exit::Unreachable
                    };
                    (exit, e.to_string())
                })?;
                Ok(Self {
                    agent: Arc::new(agent),
                    _servers: Vec::new(),
                })
            }
            Source::Mcp(server) => {
                let config = server_config(server)?;
                let client = McpClient::connect(config)
                    .await
                    .map_err(|e| (Exit::Unreachable, e.to_string()))?;
                let mut registry = ToolRegistry::new();
                client
                    .register_into(&mut registry)
                    .map_err(|e| (Exit::Invalid, e.to_string()))?;
                let executor = built(ToolExecutor::builder(registry).build())?;
                Ok(Self {
                    agent: Arc::new(agent_over(executor)?),
                    _servers: vec![client],
                })
            }
        }
    }

    /// Where the file tools work: `--workspace`, or the current folder.
    /// Never the agent file's folder for being it: the agent's own files
    /// are hidden from the file tools wherever they lie.
    pub(crate) fn workspace(sub: &ArgMatches) -> PathBuf {
        sub.try_get_one::<String>("workspace")
            .ok()
            .flatten()
            .map_or_else(|| PathBuf::from("."), PathBuf::from)
    }
}

/// An agent named `iris` over `executor`, as it is.
fn agent_over(executor: ToolExecutor) -> Result<Agent, (Exit, String)> {
    Agent::builder(executor)
        .name("iris")
        .build()
        .map_err(|e| (Exit::Invalid, e.to_string()))
}

fn built<T>(result: Result<T, iris_runtime::RuntimeError>) -> Result<T, (Exit, String)> {
    result.map_err(|e| (Exit::Invalid, e.to_string()))
}

/// Says, once per process, that a bare registry runs with none of the
/// host's hooks or middleware.
fn announce_bare() {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}: note: the host mounted a bare registry: its tools run under the default policy with no hooks and no middleware; mount the agent or executor the host runs (`iris::cli::main(agent)`) to keep them",
        crate::output::program()
    );
}

/// An MCP server's configuration from `--mcp`: a URL, or a command line
/// (split on whitespace; never given to a shell).
fn server_config(server: &str) -> Result<McpServerConfig, (Exit, String)> {
    if server.starts_with("http://") || server.starts_with("https://") {
        return Ok(McpServerConfig::http("mcp", server));
    }
    let mut words = server.split_whitespace();
    let program = words.next().ok_or_else(|| {
        (
            Exit::Usage,
            "`--mcp` needs a URL or a command, such as `--mcp \"npx -y @modelcontextprotocol/server-everything\"`".to_owned(),
        )
    })?;
    Ok(McpServerConfig::stdio(
        "mcp",
        program,
        words.map(str::to_owned),
    ))
}
