//! An agent: an executor (tools, policy, hooks, middleware, limits), with
//! what the run loop needs beside it (instructions, model, step limit,
//! discovery, results budget). Built in code with [`Agent::builder`], or
//! from an agent file (feature `assembly`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use iris_core::{RunId, ToolContext, ToolContextBuilder, ToolOrigin};

use super::history::ReadHistory;
use crate::ChildAgent;
use crate::error::AgentBuildError;
use crate::files::{AgentFiles, skill_folders, skill_roots};
use iris_model::ModelConfig;
use iris_runtime::ToolExecutor;
use iris_runtime::ToolRegistry;
use iris_runtime::ledger::RunLedger;
use iris_tools::discovery::Discovery;
use iris_tools::fs::FileService;
use iris_tools::fs::FileServiceError;

/// The built-in tools that need a [`FileService`] in the context.
const FILE_TOOLS: [&str; 3] = ["read_file", "write_file", "edit_file"];

/// An executor ready to be driven by a model: the tools with their policy,
/// hooks, middleware and limits, the instructions, the model, the step
/// limit, discovery when tools are deferred, and the results budget.
///
/// ```
/// use iris_agent::Agent;
/// use iris_runtime::{ToolExecutor, ToolRegistry};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = ToolRegistry::new(); // register the agent's tools here
/// let agent = Agent::builder(ToolExecutor::builder(registry).build()?)
///     .name("calculator")
///     .instructions("Answer with the tools you have.")
///     .max_steps(8)
///     .build()?;
/// assert_eq!(agent.max_steps(), Some(8));
/// # Ok(())
/// # }
/// ```
pub struct Agent {
    name: String,
    instructions: Option<String>,
    model: Option<ModelConfig>,
    telemetry: Option<Telemetry>,
    max_steps: Option<u32>,
    executor: ToolExecutor,
    discovery: Option<Arc<Discovery>>,
    uses_files: bool,
    origin: Option<PathBuf>,
    /// One file service per workspace, shared by every context made for
    /// it: what a run read is what its later edits are checked against;
    /// none reads or writes what the agent is made of.
    files: AgentFiles,
    results_budget: Option<usize>,
    children: Vec<Arc<ChildAgent>>,
    skills: Option<crate::Skills>,
    output: Option<crate::Output>,
    /// Its budget and prices, when it has them.
    spending: crate::budget::Spending,
    /// Who may call the agent's tools when it is served over HTTP.
    #[cfg(feature = "mcp")]
    gateway_auth: Option<iris_mcp::gateway::GatewayAuth>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.name)
            .field("origin", &self.origin)
            .field("model", &self.model)
            .field("max_steps", &self.max_steps)
            .field("tools", &self.executor.registry().len())
            .field("discovery", &self.discovery.is_some())
            .field("children", &self.children.len())
            .finish_non_exhaustive()
    }
}

/// Builds an [`Agent`] over an executor.
#[must_use]
#[derive(Debug)]
pub struct AgentBuilder {
    name: String,
    instructions: Option<String>,
    model: Option<ModelConfig>,
    telemetry: Option<Telemetry>,
    max_steps: Option<u32>,
    executor: ToolExecutor,
    discovery: Option<Arc<Discovery>>,
    origin: Option<PathBuf>,
    results_budget: Option<usize>,
    children: Vec<ChildAgent>,
    skills: Option<crate::Skills>,
    output: Option<crate::Output>,
    spending: crate::budget::Spending,
    #[cfg(feature = "mcp")]
    gateway_auth: Option<iris_mcp::gateway::GatewayAuth>,
}

impl AgentBuilder {
    /// What its runs may spend, their child agents' spend included (see
    /// [`Budget`](crate::Budget)); a runner's own budget
    /// ([`AgentRunner::with_budget`](crate::AgentRunner::with_budget)) wins.
    pub fn budget(mut self, budget: crate::Budget) -> Self {
        self.spending.budget = Some(budget);
        self
    }

    /// The prices a money budget counts at (Iris ships none).
    pub fn prices(mut self, prices: crate::PriceTable) -> Self {
        self.spending.prices = Some(prices);
        self
    }

    /// What the agent's final answer must be ([`Output::of`](crate::Output::of)
    /// a Rust type, or a schema): sent with the provider's structured output,
    /// checked, and read back typed with
    /// [`RunOutcome::output`](crate::RunOutcome::output). Without one a run
    /// ends in text.
    pub fn output(mut self, output: crate::Output) -> Self {
        self.output = Some(output);
        self
    }

    /// The skills its runs may activate: the catalog offered as one
    /// `activate_skill` tool (see
    /// [`AgentRunner::with_skills`](crate::AgentRunner::with_skills)).
    pub fn skills(mut self, skills: crate::Skills) -> Self {
        self.skills = Some(skills);
        self
    }

    /// The agent's name (`agent` unless set): saved run states carry it, and
    /// a state is resumed only by an agent of the same name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The system instructions.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The model configuration: sampling options for any model, and which
    /// adapter [`AgentRunner::from_config`](super::AgentRunner::from_config) makes.
    pub fn model(mut self, model: ModelConfig) -> Self {
        self.model = Some(model);
        self
    }

    /// Where the agent's traces go (an agent file's `telemetry:`): read by
    /// whoever installs the exporter, such as `iris run`.
    pub fn telemetry(mut self, telemetry: Telemetry) -> Self {
        self.telemetry = Some(telemetry);
        self
    }

    /// Most model steps per run (default
    /// [`Agent::DEFAULT_MAX_STEPS`]).
    pub fn max_steps(mut self, steps: u32) -> Self {
        self.max_steps = Some(steps);
        self
    }

    /// Deferred discovery: the requests carry the eager tools, `tool_search`
    /// and what it disclosed. Build it over the executor's registry and
    /// ledger (`Discovery::builder(executor.shared_registry())
    /// .ledger(executor.ledger().clone())`); one over another ledger is
    /// refused by [`build`](Self::build), since ending a run would then
    /// leave its disclosures behind.
    pub fn discovery(mut self, discovery: impl Into<Arc<Discovery>>) -> Self {
        self.discovery = Some(discovery.into());
        self
    }

    /// Characters of tool results one request may carry: past it, older
    /// results of read-only tools go to the model as previews with a
    /// handle, and the `read_history` tool (registered by
    /// [`build`](Self::build) when missing) gives them back.
    pub fn results_budget(mut self, chars: usize) -> Self {
        self.results_budget = Some(chars);
        self
    }

    /// A child agent the model may hand sub-tasks to, as a tool of the
    /// child's name (see [`ChildAgent`]). [`build`](Self::build) refuses a
    /// name that a tool or another child has.
    pub fn child(mut self, child: ChildAgent) -> Self {
        self.children.push(child);
        self
    }

    /// Who may call the agent's tools when it is served over HTTP (`iris
    /// serve --http`): the issuers, audience and rules of
    /// [`iris_mcp::gateway::GatewayAuth`].
    #[cfg(feature = "mcp")]
    pub fn gateway_auth(mut self, auth: iris_mcp::gateway::GatewayAuth) -> Self {
        self.gateway_auth = Some(auth);
        self
    }

    /// The file the agent was described in (relative paths in it, such as
    /// command hooks' folders, are taken from its folder).
    pub fn origin(mut self, path: impl Into<PathBuf>) -> Self {
        self.origin = Some(path.into());
        self
    }

    /// Finishes the agent.
    ///
    /// # Errors
    /// [`AgentBuildError::LedgerMismatch`] when discovery keeps its
    /// disclosures in another ledger than the executor's;
    /// [`AgentBuildError::InvalidName`] and
    /// [`AgentBuildError::DuplicateName`] for a child agent the model could
    /// not call or tell apart; [`AgentBuildError::Runtime`] when
    /// `read_history` cannot be registered (another tool has its name).
    pub fn build(self) -> Result<Agent, AgentBuildError> {
        if let Some(discovery) = &self.discovery
            && !Arc::ptr_eq(discovery.ledger(), self.executor.ledger())
        {
            return Err(AgentBuildError::LedgerMismatch {
                part: "discovery",
                fix: "build it with `Discovery::builder(executor.shared_registry()).ledger(executor.ledger().clone())`",
            });
        }
        if self.results_budget.is_some() {
            let shared = self.executor.shared_registry();
            let missing = shared
                .snapshot()
                .resolve(super::history::READ_HISTORY)
                .is_none();
            if missing {
                shared.update(|registry| registry.register(ReadHistory).map(|_| ()))?;
            }
        }
        check_children(&self.children, &self.executor.registry())?;
        let uses_files = self.executor.registry().tools().any(|tool| {
            let definition = tool.definition_dyn();
            definition.origin() == &ToolOrigin::BuiltIn
                && FILE_TOOLS.contains(&definition.name().as_str())
        });
        let agent = Agent {
            name: self.name,
            instructions: self.instructions,
            model: self.model,
            telemetry: self.telemetry,
            max_steps: self.max_steps,
            executor: self.executor,
            discovery: self.discovery,
            uses_files,
            origin: self.origin,
            files: AgentFiles::default(),
            results_budget: self.results_budget,
            children: self.children.into_iter().map(Arc::new).collect(),
            skills: self.skills,
            output: self.output,
            spending: self.spending,
            #[cfg(feature = "mcp")]
            gateway_auth: self.gateway_auth,
        };
        // Every agent of the tree hides what the whole tree is made of: a
        // child's writer must not rewrite its parent's file either, nor
        // plant a skill where the tree finds its skills.
        agent.hide_from_files(&agent.own_files());
        agent.protect_in_files(&agent.skill_roots());
        Ok(agent)
    }
}

/// Refuses a child whose name the model could not call, or could not tell
/// from a tool's or another child's.
fn check_children(children: &[ChildAgent], registry: &ToolRegistry) -> Result<(), AgentBuildError> {
    for (at, child) in children.iter().enumerate() {
        let name = child.name();
        if let Err(why) = iris_core::ToolName::new(name.to_owned()) {
            return Err(AgentBuildError::InvalidName {
                name: name.to_owned(),
                why: why.to_string(),
            });
        }
        if child.description().trim().is_empty() {
            return Err(AgentBuildError::InvalidName {
                name: name.to_owned(),
                why: "the child agent has no description, and the parent model chooses it by its description; give one".to_owned(),
            });
        }
        let second = || format!("child agent `{name}` (agent `{}`)", child.agent().name());
        if let Some(tool) = registry.resolve(name) {
            return Err(AgentBuildError::DuplicateName {
                name: name.to_owned(),
                first: format!("tool `{}`", tool.definition_dyn().name()),
                second: second(),
            });
        }
        // Run control's own tools: a child by either name would be
        // answered by the feature that owns it, never started.
        let owner = match name {
            iris_runtime::question::ASK_QUESTION => Some(
                "`ask_question`, the tool of run control's questions (`AgentRunner::with_questions`)",
            ),
            iris_skills::ACTIVATE_SKILL => Some(
                "`activate_skill`, the tool of run control's skills (`AgentRunner::with_skills`, `skills` in an agent file)",
            ),
            _ => None,
        };
        if let Some(owner) = owner {
            return Err(AgentBuildError::DuplicateName {
                name: name.to_owned(),
                first: owner.to_owned(),
                second: second(),
            });
        }
        if let Some(first) = children[..at].iter().find(|c| c.name() == name) {
            return Err(AgentBuildError::DuplicateName {
                name: name.to_owned(),
                first: format!("child agent `{name}` (agent `{}`)", first.agent().name()),
                second: second(),
            });
        }
    }
    Ok(())
}

impl Agent {
    /// Steps a run takes when the agent sets no step limit.
    pub const DEFAULT_MAX_STEPS: u32 = 40;

    /// Starts an agent over `executor` (its tools, policy, hooks, middleware
    /// and limits).
    pub fn builder(executor: ToolExecutor) -> AgentBuilder {
        AgentBuilder {
            name: "agent".to_owned(),
            instructions: None,
            model: None,
            telemetry: None,
            max_steps: None,
            executor,
            discovery: None,
            origin: None,
            results_budget: None,
            children: Vec::new(),
            skills: None,
            output: None,
            spending: crate::budget::Spending::default(),
            #[cfg(feature = "mcp")]
            gateway_auth: None,
        }
    }

    /// What its final answer must be, if anything (a runner's own, given
    /// with [`AgentRunner::with_output`](crate::AgentRunner::with_output),
    /// wins).
    #[must_use]
    pub fn output(&self) -> Option<&crate::Output> {
        self.output.as_ref()
    }

    /// Its budget, when it has one.
    #[must_use]
    pub fn budget(&self) -> Option<&crate::Budget> {
        self.spending.budget.as_ref()
    }

    /// The prices its money budget counts at, when it has them.
    #[must_use]
    pub fn prices(&self) -> Option<&crate::PriceTable> {
        self.spending.prices.as_ref()
    }

    pub(crate) fn spending(&self) -> &crate::budget::Spending {
        &self.spending
    }

    /// The skills its runs may activate (a runner's own, given with
    /// [`AgentRunner::with_skills`](crate::AgentRunner::with_skills), win).
    #[must_use]
    pub fn skills(&self) -> Option<&crate::Skills> {
        self.skills.as_ref()
    }

    /// The agent's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The system instructions.
    #[must_use]
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The model configuration.
    #[must_use]
    pub fn model(&self) -> Option<&ModelConfig> {
        self.model.as_ref()
    }

    /// Where the agent's traces go, when it says.
    #[must_use]
    pub fn telemetry(&self) -> Option<&Telemetry> {
        self.telemetry.as_ref()
    }

    /// Most model steps per run.
    #[must_use]
    pub fn max_steps(&self) -> Option<u32> {
        self.max_steps
    }

    /// Every tool the agent has, as of now (MCP servers' tools are kept
    /// current when their servers announce changes).
    #[must_use]
    pub fn registry(&self) -> Arc<ToolRegistry> {
        self.executor.registry()
    }

    /// The executor: permissions, hooks, middleware and limits in place.
    #[must_use]
    pub fn executor(&self) -> &ToolExecutor {
        &self.executor
    }

    /// The run ledger (the executor's): what lives as long as a run.
    #[must_use]
    pub fn ledger(&self) -> &Arc<RunLedger> {
        self.executor.ledger()
    }

    /// Discovery, when some tool is deferred.
    #[must_use]
    pub fn discovery(&self) -> Option<&Arc<Discovery>> {
        self.discovery.as_ref()
    }

    /// Characters of tool results a request may carry before older
    /// observations are shortened.
    #[must_use]
    pub fn results_budget(&self) -> Option<usize> {
        self.results_budget
    }

    /// Who may call the agent's tools when it is served over HTTP, when
    /// its file or builder says.
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn gateway_auth(&self) -> Option<&iris_mcp::gateway::GatewayAuth> {
        self.gateway_auth.as_ref()
    }

    /// The child agents the model may hand sub-tasks to.
    pub fn children(&self) -> impl Iterator<Item = &Arc<ChildAgent>> {
        self.children.iter()
    }

    /// The child agent named `name`, if the agent has one.
    #[must_use]
    pub fn child(&self, name: &str) -> Option<&Arc<ChildAgent>> {
        self.children.iter().find(|c| c.name() == name)
    }

    /// The file the agent was described in, if any.
    #[must_use]
    pub fn origin(&self) -> Option<&Path> {
        self.origin.as_deref()
    }

    /// A context for calls of run `run` in `workspace`, carrying what the
    /// agent's tools need: the run ledger (for `read_history`), the file
    /// service for the built-in file tools (one per workspace, kept by the
    /// agent and keeping what a run read in the ledger), discovery for
    /// `tool_search`. Add more state to the builder before building it.
    ///
    /// # Errors
    /// [`FileServiceError`] when the workspace cannot be opened for the file
    /// tools.
    pub fn context_builder(
        &self,
        workspace: impl AsRef<Path>,
        run: RunId,
    ) -> Result<ToolContextBuilder, FileServiceError> {
        let workspace = workspace.as_ref();
        let mut builder =
            ToolContext::builder(workspace, run).shared_state(Arc::clone(self.executor.ledger()));
        if self.uses_files {
            builder = builder.shared_state(self.file_service(workspace)?);
        }
        if let Some(discovery) = &self.discovery {
            builder = builder.shared_state(Arc::clone(discovery));
        }
        Ok(builder)
    }

    fn file_service(&self, workspace: &Path) -> Result<Arc<FileService>, FileServiceError> {
        self.files.service(workspace, self.executor.ledger())
    }

    /// What the agent is made of, which its file tools (and its children's)
    /// never read or write, wherever it lies: its agent file, its children's
    /// at any depth, and every skill's folder. A server over the agent
    /// hides the same from the file tools it serves.
    #[must_use]
    pub fn own_files(&self) -> Vec<(PathBuf, String)> {
        let mut own = Vec::new();
        if let Some(origin) = &self.origin {
            own.push((origin.clone(), format!("the file of agent `{}`", self.name)));
        }
        if let Some(skills) = &self.skills {
            own.extend(skill_folders(skills));
        }
        for child in &self.children {
            own.extend(child.agent().own_files());
        }
        own
    }

    /// The folders the tree's skills were found in.
    fn skill_roots(&self) -> Vec<(PathBuf, String)> {
        let mut roots = self.skills.as_ref().map(skill_roots).unwrap_or_default();
        for child in &self.children {
            roots.extend(child.agent().skill_roots());
        }
        roots
    }

    /// Lets the file tools of this agent and its children only read
    /// beneath `folders`.
    pub(crate) fn protect_in_files(&self, folders: &[(PathBuf, String)]) {
        self.files.protect(folders);
        for child in &self.children {
            child.agent().protect_in_files(folders);
        }
    }

    /// Hides `places` (files or folders, with what each is, for the
    /// model) from the file tools of this agent and of its children, at
    /// any depth, in every workspace: skills given to a runner, a host's
    /// own secrets.
    pub fn hide_from_files(&self, places: &[(PathBuf, String)]) {
        self.files.hide(places);
        for child in &self.children {
            child.agent().hide_from_files(places);
        }
    }
}

/// Where an agent's traces go (the spans of `iris::telemetry`), as its
/// agent file's `telemetry:` section says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Telemetry {
    /// The OTLP/HTTP address of the collector (`http://127.0.0.1:4318`).
    pub otlp: Option<String>,
    /// The `service.name` the traces carry.
    pub service_name: Option<String>,
    /// Whether messages, instructions, tool definitions, arguments and
    /// results are recorded in the spans.
    pub capture_content: bool,
}
