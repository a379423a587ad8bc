//! Child agents: declared by the host, never invented by the model. The
//! parent model sees each as a tool of its name; calling it is run control
//! (the parent's hooks and middleware never wrap it, the parent's policy
//! decides whether it may start, by its name), and the child runs its own
//! loop with its own instructions, tools, hooks, middleware and limits,
//! seeing only its task, and answers the call with its output.

use std::sync::Arc;
use std::time::Duration;

use iris_core::{ToolDefinition, ToolName, ToolSpec};
use iris_model::Model;
use iris_runtime::CeilingReach;
use serde_json::{Value, json};

use crate::Agent;

/// What the parent model writes for a child unless its input is typed.
const TASK_DESCRIPTION: &str = "What to do, with everything needed to do it: the agent sees this and its own instructions, nothing else of this conversation.";

/// The run id of the child that call `call_id` of run `parent` delegated
/// to: derived, so that two children never share a run (the same child
/// called twice, a state cloned and resumed twice), and the id escaped as a
/// [`CallPath`](iris_core::CallPath) segment, so that no call id (one with
/// `/` in it) names another call's child.
pub(crate) fn child_run_id(parent: &iris_core::RunId, call_id: &str) -> iris_core::RunId {
    iris_core::RunId::new(iris_core::CallPath::join(Some(parent.as_str()), call_id))
}

/// An agent a parent may hand a sub-task to, declared by the host (never
/// invented by the model). The parent model sees it as a tool of its name;
/// calling it is run control: the parent's hooks and middleware never wrap
/// it, and the parent's policy decides by its name whether it may start
/// (allow, ask, deny). The child runs its own loop with its own
/// instructions, tools, policy, hooks and middleware, sees only its task
/// (unless [`with_parent_history`](Self::with_parent_history)), may do
/// nothing an agent above it may not (unless the host
/// [widens](Self::widen_permissions) it), and answers the call with its
/// output. Its pauses for a person bubble to the root run.
///
/// ```
/// use iris_agent::{Agent, ChildAgent};
/// use iris_runtime::{ToolExecutor, ToolRegistry};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let researcher = Agent::builder(ToolExecutor::builder(ToolRegistry::new()).build()?)
///     .name("researcher")
///     .instructions("Find facts and cite where they come from.")
///     .build()?;
/// let parent = Agent::builder(ToolExecutor::builder(ToolRegistry::new()).build()?)
///     .name("lead")
///     .child(
///         ChildAgent::new("researcher", "Finds facts on the web of docs we keep.", researcher)
///             .max_steps(8)
///             .max_tokens(20_000),
///     )
///     .build()?;
/// assert_eq!(parent.children().count(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct ChildAgent {
    name: String,
    description: String,
    agent: Arc<Agent>,
    model: Option<Arc<dyn Model>>,
    max_steps: Option<u32>,
    max_tokens: Option<u64>,
    deadline: Option<Duration>,
    input: Option<Value>,
    output: Option<crate::Output>,
    sees_history: bool,
    concurrency_safe: bool,
    reach: CeilingReach,
    preload: Vec<String>,
}

impl std::fmt::Debug for ChildAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildAgent")
            .field("name", &self.name)
            .field("agent", &self.agent.name())
            .field("own_model", &self.model.is_some())
            .field("max_steps", &self.max_steps)
            .field("max_tokens", &self.max_tokens)
            .field("deadline", &self.deadline)
            .field("concurrency_safe", &self.concurrency_safe)
            .finish_non_exhaustive()
    }
}

impl ChildAgent {
    /// Most model steps a child takes unless its declaration or its agent
    /// says.
    pub const DEFAULT_MAX_STEPS: u32 = 20;

    /// A child the parent model calls as `name`, choosing it by
    /// `description`, run by `agent` (its instructions, tools, policy,
    /// hooks and middleware). It asks the parent's model unless given one
    /// ([`ChildAgent::model`]), takes one `task` string, and answers with
    /// its final text.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        agent: impl Into<Arc<Agent>>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            agent: agent.into(),
            model: None,
            max_steps: None,
            max_tokens: None,
            deadline: None,
            input: None,
            output: None,
            sees_history: false,
            concurrency_safe: false,
            reach: CeilingReach::Whole,
            preload: Vec::new(),
        }
    }

    /// Skills the child starts with, active: their instructions are in its
    /// first request (after its task, as activation results), looked up
    /// among the child agent's skills and then the parent runner's. The
    /// parent's own activations are never passed on; only these.
    #[must_use]
    pub fn preload_skills<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.preload = names.into_iter().map(Into::into).collect();
        self
    }

    /// The skills it preloads.
    #[must_use]
    pub fn preloaded_skills(&self) -> &[String] {
        &self.preload
    }

    /// Asks `model` instead of the parent's.
    #[must_use]
    pub fn model(mut self, model: impl Model) -> Self {
        self.model = Some(Arc::new(model));
        self
    }

    /// Most model steps per delegation (its agent's step limit, or
    /// [`ChildAgent::DEFAULT_MAX_STEPS`], unless set); never more than the parent
    /// has left.
    #[must_use]
    pub fn max_steps(mut self, steps: u32) -> Self {
        self.max_steps = Some(steps);
        self
    }

    /// Most tokens per delegation; never more than the parent has left.
    #[must_use]
    pub fn max_tokens(mut self, tokens: u64) -> Self {
        self.max_tokens = Some(tokens);
        self
    }

    /// Longest a delegation may take, pauses for a person excluded; never
    /// past the parent's own deadline.
    #[must_use]
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Typed input: the parent model fills `schema` (a JSON Schema object),
    /// and the child reads it as JSON.
    #[must_use]
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input = Some(schema);
        self
    }

    /// Typed output: the child's final answer must be `output` (a Rust
    /// type, [`Output::of`](crate::Output::of), or a schema), sent with its
    /// provider's structured output and checked as a root's is; it reaches
    /// the parent as structured content. A child whose answers do not fit
    /// ends with an error result the parent model reads.
    #[must_use]
    pub fn output(mut self, output: crate::Output) -> Self {
        self.output = Some(output);
        self
    }

    /// The child starts with a copy of the parent's history before its
    /// task (by default it sees only its task).
    #[must_use]
    pub fn with_parent_history(mut self) -> Self {
        self.sees_history = true;
        self
    }

    /// Several delegations to this child in one step may run at once.
    #[must_use]
    pub fn concurrency_safe(mut self) -> Self {
        self.concurrency_safe = true;
        self
    }

    /// Lets the child do what its own policy allows even where the root's
    /// would ask: a host's choice, never the model's. Deny rules of every
    /// ancestor still hold (without this, a child's permissions are its own
    /// intersected with every ancestor's).
    #[must_use]
    pub fn widen_permissions(mut self) -> Self {
        self.reach = CeilingReach::DenialsOnly;
        self
    }

    /// The name the parent model calls.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the parent model reads to choose it.
    #[must_use]
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The agent that runs the delegation.
    #[must_use]
    pub fn agent(&self) -> &Arc<Agent> {
        &self.agent
    }

    pub(crate) fn own_model(&self) -> Option<&Arc<dyn Model>> {
        self.model.as_ref()
    }

    pub(crate) fn steps(&self) -> u32 {
        self.max_steps
            .or(self.agent.max_steps())
            .unwrap_or(Self::DEFAULT_MAX_STEPS)
    }

    pub(crate) fn tokens(&self) -> Option<u64> {
        self.max_tokens
    }

    pub(crate) fn time(&self) -> Option<Duration> {
        self.deadline
    }

    pub(crate) fn typed_output(&self) -> Option<&crate::Output> {
        self.output.as_ref()
    }

    pub(crate) fn sees_history(&self) -> bool {
        self.sees_history
    }

    pub(crate) fn is_concurrency_safe(&self) -> bool {
        self.concurrency_safe
    }

    pub(crate) fn reach(&self) -> CeilingReach {
        self.reach
    }

    /// Whether the input is the default `task` string.
    pub(crate) fn takes_task(&self) -> bool {
        self.input.is_none()
    }

    /// The input schema the parent model fills.
    pub(crate) fn parameters(&self) -> Value {
        self.input.clone().unwrap_or_else(|| {
            json!({
                "type": "object",
                "properties": {"task": {"type": "string", "description": TASK_DESCRIPTION}},
                "required": ["task"],
                "additionalProperties": false,
            })
        })
    }

    /// The child as a definition, for the parent's policy to judge by name
    /// (no capability: `RulePolicy`'s rule for other tools, or one for
    /// this name).
    pub(crate) fn definition(&self) -> Option<ToolDefinition> {
        let name = ToolName::new(self.name.clone()).ok()?;
        ToolDefinition::builder(name, self.description.as_str())
            .input_schema(self.parameters())
            .build()
            .ok()
    }

    /// The spec the parent model is offered.
    pub(crate) fn spec(&self) -> Option<ToolSpec> {
        Some(self.definition()?.spec().with_strict(self.takes_task()))
    }
}
