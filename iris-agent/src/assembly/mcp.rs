//! Agent files that name MCP servers (`tools.mcp`, feature `mcp`): each
//! server is started and listed before the agent is built, so its tools
//! are named, filtered, deferred and permitted like any other.

use std::path::Path;
use std::sync::Arc;

use iris_core::DynTool;

use super::build::assemble_with;
use super::error::{AssemblyError, Issues};
use super::file::AgentFile;
use super::names::Assembly;
use super::parse;
use super::sources::Chosen;
use super::{Agent, assembled, read_file};
use iris_mcp::client::{McpClient, McpServerConfig};
use serde_saphyr::Location;

impl Assembly {
    /// Reads the agent file at `path`, starts the MCP servers it names
    /// (`tools.mcp`, all at once) and assembles the agent with their tools.
    ///
    /// # Errors
    /// [`AssemblyError`] with every problem found: in the file, in a
    /// server's configuration (at `tools.mcp[i]`), or a server that could
    /// not be started or listed.
    pub async fn connect(&self, path: impl AsRef<Path>) -> Result<Agent, AssemblyError> {
        let path = path.as_ref();
        let text = read_file(path)?;
        let parsed = parse::parse(&text, path)?;
        let (remote, clients) = connect_servers(&parsed.file, path, &self.roots).await?;
        let agent = assembled(parsed, |file, text| {
            assemble_with(self, file, path, text, Some(remote), &[])
        })?;
        for client in &clients {
            // Inside this async function a runtime is always there.
            if let Err(error) = client.keep_current(agent.executor().shared_registry()) {
                tracing::warn!(%error, "an MCP server's tools will not be kept current");
            }
        }
        Ok(agent)
    }
}

impl Agent {
    /// Assembles the agent file at `path` as [`Agent::from_path`] does,
    /// after starting the MCP servers it names.
    ///
    /// # Errors
    /// As [`Assembly::connect`].
    pub async fn connect(path: impl AsRef<Path>) -> Result<Self, AssemblyError> {
        Assembly::from_catalog().connect(path).await
    }
}

/// The MCP servers the agent file at `path` names (`tools.mcp`), read and
/// checked but not started: for signing in to them (`iris login`) or
/// showing how they are reached.
///
/// # Errors
/// [`AssemblyError`] when the file cannot be read or parsed, or a server's
/// configuration is wrong (at `tools.mcp[i]`).
pub fn mcp_servers(path: impl AsRef<Path>) -> Result<Vec<McpServerConfig>, AssemblyError> {
    let path = path.as_ref();
    let text = read_file(path)?;
    let parsed = parse::parse(&text, path)?;
    let (configs, _) = server_configs(&parsed.file, path)?;
    Ok(configs.into_iter().map(|(_, config)| config).collect())
}

/// Each server `file` names, with its place in the file's list, and where
/// the list is in the file; or every configuration problem.
fn server_configs(
    file: &AgentFile,
    origin: &Path,
) -> Result<(Vec<(usize, McpServerConfig)>, Location), AssemblyError> {
    let mut issues = Issues::new(origin);
    let Some(servers) = &file.tools.mcp else {
        return Ok((Vec::new(), Location::UNKNOWN));
    };
    let at = servers.referenced;
    let mut configs = Vec::new();
    for (i, raw) in servers.value.iter().enumerate() {
        match serde_path_to_error::deserialize::<_, McpServerConfig>(raw.clone()) {
            Ok(config) => configs.push((i, config)),
            Err(error) => {
                let inner = error.path().to_string();
                let key = if inner == "." {
                    format!("tools.mcp[{i}]")
                } else {
                    format!("tools.mcp[{i}].{inner}")
                };
                issues.at(at, key, error.into_inner().to_string());
            }
        }
    }
    issues.finish()?;
    Ok((configs, at))
}

/// The agent's own model, for the servers the file lets sample with it
/// (`sample_with_model`), bounded by the model's `max_tokens`; `None`, with
/// the problem noted, when such a server is named but the file has no
/// model that can be reached.
fn sampling_model(
    file: &AgentFile,
    configs: &[(usize, McpServerConfig)],
    at: Location,
    issues: &mut Issues,
) -> Option<iris_mcp::client::SamplingModel> {
    let (first, _) = configs.iter().find(|(_, c)| c.sample_with_model)?;
    let key = format!("tools.mcp[{first}].sample_with_model");
    let Some(section) = &file.model else {
        issues.at(at, key, "the agent file names no model to sample with; give it `model:`, or leave `sample_with_model` out");
        return None;
    };
    match section.config().build_model() {
        Ok(model) => {
            let mut sampler =
                iris_mcp::client::SamplingModel::new(model.into(), section.model.clone());
            if let Some(max_tokens) = section.max_tokens {
                sampler = sampler.max_tokens(max_tokens);
            }
            Some(sampler)
        }
        Err(error) => {
            issues.at(
                at,
                key,
                format!("the agent's model cannot be reached: {error}"),
            );
            None
        }
    }
}

/// Starts every server `file` names and gathers their tools, keyed by the
/// server's place in the file, and the clients that keep them current.
async fn connect_servers(
    file: &AgentFile,
    origin: &Path,
    roots: &[std::path::PathBuf],
) -> Result<(Vec<Chosen>, Vec<McpClient>), AssemblyError> {
    let (mut configs, at) = server_configs(file, origin)?;
    let mut issues = Issues::new(origin);
    let sampler = sampling_model(file, &configs, at, &mut issues);
    for (_, config) in &mut configs {
        if config.relay_input && config.roots.is_empty() {
            config.roots = roots.to_vec();
        }
        if config.sample_with_model && config.sampling_model.is_none() {
            config.sampling_model.clone_from(&sampler);
        }
    }
    let connecting = configs
        .into_iter()
        .map(|(i, config)| async move { (i, McpClient::connect(config).await) });
    let mut chosen = Vec::new();
    let mut clients = Vec::new();
    for (i, connected) in futures_util::future::join_all(connecting).await {
        match connected {
            Ok(client) => {
                for note in client
                    .report()
                    .skipped
                    .iter()
                    .map(|s| (&s.wire_name, &s.reason))
                {
                    tracing::warn!(
                        server = client.name(),
                        tool = note.0,
                        reason = note.1,
                        "a tool of an MCP server was left out"
                    );
                }
                chosen.extend(
                    client
                        .tools()
                        .into_iter()
                        .map(|tool: Arc<dyn DynTool>| (format!("tools.mcp[{i}]"), at, tool)),
                );
                clients.push(client);
            }
            Err(error) => issues.at(at, format!("tools.mcp[{i}]"), error.to_string()),
        }
    }
    if !issues.is_empty() {
        return Err(issues
            .finish()
            .err()
            .unwrap_or(AssemblyError { issues: Vec::new() }));
    }
    Ok((chosen, clients))
}
