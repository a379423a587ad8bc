//! What the command set runs over in a host's own binary: the host's agent
//! (its executor with its tools, policy, hooks and middleware) for the
//! commands that name no agent file, and the host's assembly (toolbox
//! services, its own hooks and middleware, the link-time catalog) for the
//! agent files they do name.

use std::sync::Arc;

use iris_agent::Agent;
use iris_agent::assembly::Assembly;
use iris_runtime::{ToolExecutor, ToolRegistry};

/// What the command line works over: hand one to [`main`](crate::main).
///
/// ```no_run
/// use std::sync::Arc;
/// use iris_agent::Agent;
/// use iris_agent::assembly::Assembly;
/// use iris_cli::Host;
/// use iris_runtime::{ToolExecutor, ToolRegistry};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let executor = ToolExecutor::builder(ToolRegistry::new()).build()?; // tools, hooks, middleware, policy
/// let agent = Agent::builder(executor).name("desk").build()?;
/// // `desk list`, `desk call`, `desk serve` run `agent` as it is built;
/// // `desk check --agent desk.yaml` and `desk serve --agent desk.yaml`
/// // assemble the file with this assembly (toolbox services, the host's
/// // own hooks and middleware).
/// let host = Host::agent(agent).with_assembly(Assembly::from_catalog());
/// let _ = iris_cli::main(host);
/// # Ok(())
/// # }
/// ```
pub struct Host {
    pub(crate) own: Own,
    pub(crate) assembly: Assembly,
    /// The model `run` asks instead of the one the agent file names.
    pub(crate) model: Option<Arc<dyn iris_model::Model>>,
}

/// What the host runs itself, when it names no agent file.
pub(crate) enum Own {
    /// Nothing: agent files only.
    Nothing,
    Agent(Arc<Agent>),
    Executor(ToolExecutor),
    /// Nothing of the host's but its tools.
    Registry(ToolRegistry),
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let own = match &self.own {
            Own::Nothing => "nothing",
            Own::Agent(_) => "agent",
            Own::Executor(_) => "executor",
            Own::Registry(_) => "bare registry",
        };
        f.debug_struct("Host")
            .field("own", &own)
            .field("assembly", &self.assembly)
            .field("own_model", &self.model.is_some())
            .finish()
    }
}

impl Host {
    /// The `iris` binary's: no agent of its own, agent files assembled from
    /// the link-time catalog.
    #[must_use]
    pub fn binary() -> Self {
        Self::assembly(Assembly::from_catalog())
    }

    /// The host's agent, exactly as it runs (tools, policy, hooks,
    /// middleware, limits, discovery, model); agent files named on the
    /// command line are assembled from the link-time catalog unless
    /// [`with_assembly`](Self::with_assembly) says otherwise.
    #[must_use]
    pub fn agent(agent: impl Into<Arc<Agent>>) -> Self {
        Self {
            own: Own::Agent(agent.into()),
            assembly: Assembly::from_catalog(),
            model: None,
        }
    }

    /// The host's executor: its tools with their policy, hooks, middleware
    /// and limits.
    #[must_use]
    pub fn executor(executor: ToolExecutor) -> Self {
        Self {
            own: Own::Executor(executor),
            assembly: Assembly::from_catalog(),
            model: None,
        }
    }

    /// Agent files only, assembled with `assembly` (the host's toolbox
    /// services, hooks and middleware): commands name a file with
    /// `--agent FILE`, or run where `agent.yaml` is.
    #[must_use]
    pub fn assembly(assembly: Assembly) -> Self {
        Self {
            own: Own::Nothing,
            assembly,
            model: None,
        }
    }

    /// A bare registry: its tools under the default policy, with no hooks
    /// and no middleware. Commands that run tools say so on stderr; mount
    /// the host's [`Agent`] or executor instead to keep them.
    #[must_use]
    pub fn registry(registry: ToolRegistry) -> Self {
        Self {
            own: Own::Registry(registry),
            assembly: Assembly::from_catalog(),
            model: None,
        }
    }

    /// Agent files named on the command line are assembled with
    /// `assembly`.
    #[must_use]
    pub fn with_assembly(mut self, assembly: Assembly) -> Self {
        self.assembly = assembly;
        self
    }

    /// `run` asks `model` instead of the model the agent file names: the
    /// host's own adapter, or a scripted model to try a run without a
    /// provider (the `iris` binary takes `--script FILE` for that).
    #[must_use]
    pub fn with_model(mut self, model: impl iris_model::Model) -> Self {
        self.model = Some(Arc::new(model));
        self
    }

    /// Whether the host runs something of its own when no file is named.
    pub(crate) fn has_own(&self) -> bool {
        !matches!(self.own, Own::Nothing)
    }
}

impl From<Agent> for Host {
    fn from(agent: Agent) -> Self {
        Self::agent(agent)
    }
}

impl From<Arc<Agent>> for Host {
    fn from(agent: Arc<Agent>) -> Self {
        Self::agent(agent)
    }
}

impl From<ToolExecutor> for Host {
    fn from(executor: ToolExecutor) -> Self {
        Self::executor(executor)
    }
}

impl From<ToolRegistry> for Host {
    fn from(registry: ToolRegistry) -> Self {
        Self::registry(registry)
    }
}

impl From<Assembly> for Host {
    fn from(assembly: Assembly) -> Self {
        Self::assembly(assembly)
    }
}
