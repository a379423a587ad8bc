//! Where a command's tools come from: a host's own registry, an agent
//! file, or an MCP server started by command or reached by URL.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Arg, ArgAction};
use iris_agent::Agent;
use iris_mcp::{McpClient, McpServerConfig};
use iris_runtime::{ToolExecutor, ToolRegistry};

use crate::exit::Exit;

/// The arguments that name a catalog, and `--json`, shared by the
/// commands over one.
pub(crate) fn args() -> [Arg; 3] {
    [
        Arg::new("agent")
            .long("agent")
            .value_name("FILE")
            .help("The tools of this agent file"),
        Arg::new("mcp")
            .long("mcp")
            .value_name("COMMAND|URL")
            .help("The tools of this MCP server (a command line, never run by a shell, or a URL)"),
        json_arg(),
    ]
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
    /// The host's registry (`iris_cli::main`).
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
    /// The catalog `source` names; `host` is the host's registry, when
    /// there is one.
    pub(crate) async fn open(
        source: &Source,
        host: Option<ToolRegistry>,
    ) -> Result<Self, (Exit, String)> {
        match source {
            Source::Host => {
                let registry = host.ok_or_else(|| {
                    (
                        Exit::Usage,
                        "no catalog: name one with `--agent FILE` or `--mcp COMMAND|URL`"
                            .to_owned(),
                    )
                })?;
                Self::of(registry, Vec::new())
            }
            Source::Agent(path) => {
                let agent = Agent::connect(path).await.map_err(|e| {
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
                Self::of(registry, vec![client])
            }
        }
    }

    fn of(registry: ToolRegistry, servers: Vec<McpClient>) -> Result<Self, (Exit, String)> {
        let executor = ToolExecutor::builder(registry)
            .build()
            .map_err(|e| (Exit::Invalid, e.to_string()))?;
        let agent = Agent::builder(executor)
            .name("iris")
            .build()
            .map_err(|e| (Exit::Invalid, e.to_string()))?;
        Ok(Self {
            agent: Arc::new(agent),
            _servers: servers,
        })
    }

    /// Where the file tools work: the agent file's folder, or the current
    /// folder.
    pub(crate) fn workspace(source: &Source) -> PathBuf {
        match source {
            Source::Agent(path) => path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
            _ => PathBuf::from("."),
        }
    }
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
