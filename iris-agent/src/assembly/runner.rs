//! Runners made straight from an agent file: the agent assembled, and the
//! model its `model` section names reached through the matching adapter.

use std::path::Path;
use std::sync::Arc;

use super::{Assembly, AssemblyError, Problem};
use crate::{Agent, AgentRunner, RunError};
use iris_runtime::observers::RunEventObserver;

impl AgentRunner {
    /// A runner of the agent file at `path` (functions and factories from
    /// the link-time catalog), its executor reporting to `observers`, asking
    /// the model its `model` section names (see [`AgentRunner::from_config`]).
    ///
    /// # Errors
    /// [`AssemblyError`] as for [`Agent::from_path`], and an issue at
    /// `model` when the file names no model, names one whose adapter is not
    /// built in, or its key variable is not set.
    pub fn from_config_path(
        path: impl AsRef<Path>,
        observers: impl IntoIterator<Item = Arc<dyn RunEventObserver>>,
    ) -> Result<Self, AssemblyError> {
        let path = path.as_ref();
        let agent = Assembly::from_catalog()
            .with_observers(observers)
            .load(path)?;
        connected(agent, path)
    }

    /// As [`AgentRunner::from_config_path`], after starting the MCP
    /// servers the file names (`tools.mcp`, feature `mcp`).
    ///
    /// # Errors
    /// As [`AgentRunner::from_config_path`], and an issue for a server that
    /// cannot be started or listed.
    #[cfg(feature = "mcp")]
    pub async fn connect_config_path(
        path: impl AsRef<Path>,
        observers: impl IntoIterator<Item = Arc<dyn RunEventObserver>>,
    ) -> Result<Self, AssemblyError> {
        Assembly::from_catalog()
            .with_observers(observers)
            .connect_runner(path)
            .await
    }
}

impl Assembly {
    /// A runner of the agent file at `path`, assembled with these names,
    /// hooks and middleware after starting the MCP servers it names, asking
    /// the model its `model` section names (see [`AgentRunner::from_config`]).
    ///
    /// # Errors
    /// As [`Assembly::connect`], and an issue at `model` as for
    /// [`AgentRunner::from_config_path`].
    #[cfg(feature = "mcp")]
    pub async fn connect_runner(
        &self,
        path: impl AsRef<Path>,
    ) -> Result<AgentRunner, AssemblyError> {
        let path = path.as_ref();
        let agent = self.connect(path).await?;
        connected(agent, path)
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
