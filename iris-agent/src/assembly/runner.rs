//! Runners made straight from an agent file: the agent assembled, and the
//! model its `model` section names reached through the matching adapter.
//! Two ways, each on the shortcut ([`AgentRunner`], names and factories from
//! the link-time catalog) and on an [`Assembly`] (names, hooks, middleware
//! and observers of the host's own): `open`, which starts the MCP servers
//! the file names first (feature `mcp`), and the sync `from_path` /
//! [`Assembly::runner`] for files without servers.

use std::path::Path;

use super::{Assembly, AssemblyError, Problem};
use crate::{Agent, AgentRunner, RunError};

impl AgentRunner {
    /// A runner of the agent file at `path`, after starting the MCP servers
    /// it names (`tools.mcp`, feature `mcp`), asking the model its `model`
    /// section names (see [`AgentRunner::from_config`]); names and factories
    /// come from the link-time catalog. [`Assembly::open_runner`] does the
    /// same with names, hooks and observers of the host's own.
    ///
    /// # Errors
    /// [`AssemblyError`] as for [`Assembly::load`], an issue for a server
    /// that cannot be started or listed, and an issue at `model` when the
    /// file names no model, names one whose adapter is not built in, or its
    /// key variable is not set.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, AssemblyError> {
        Assembly::from_catalog().open_runner(path).await
    }

    /// As [`AgentRunner::open`], without starting anything: for a file that
    /// names no MCP servers (one that does is refused, saying to open it).
    ///
    /// # Errors
    /// As [`AgentRunner::open`].
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, AssemblyError> {
        Assembly::from_catalog().runner(path)
    }
}

impl Assembly {
    /// A runner of the agent file at `path`, assembled with these names,
    /// hooks, middleware and observers after starting the MCP servers it
    /// names (feature `mcp`), asking the model its `model` section names.
    ///
    /// # Errors
    /// As [`AgentRunner::open`].
    #[cfg_attr(
        not(feature = "mcp"),
        expect(clippy::unused_async, reason = "it starts servers with feature `mcp`")
    )]
    pub async fn open_runner(&self, path: impl AsRef<Path>) -> Result<AgentRunner, AssemblyError> {
        let path = path.as_ref();
        #[cfg(feature = "mcp")]
        let agent = self.connect(path).await?;
        #[cfg(not(feature = "mcp"))]
        let agent = self.load(path)?;
        connected(agent, path)
    }

    /// As [`Assembly::open_runner`], without starting anything: for a file
    /// that names no MCP servers.
    ///
    /// # Errors
    /// As [`AgentRunner::open`].
    pub fn runner(&self, path: impl AsRef<Path>) -> Result<AgentRunner, AssemblyError> {
        let path = path.as_ref();
        connected(self.load(path)?, path)
    }
}

/// A runner of `agent` with the adapter its model section names; a model
/// that cannot be reached is an issue of the file's `model` key.
fn connected(agent: Agent, path: &Path) -> Result<AgentRunner, AssemblyError> {
    AgentRunner::from_config(agent).map_err(|err| {
        let message = match err {
            RunError::Model(model) => model.to_string(),
            other => other.to_string(),
        };
        AssemblyError {
            issues: vec![Problem::new(path, "model", message)],
        }
    })
}
