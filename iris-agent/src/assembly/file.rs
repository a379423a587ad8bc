//! The agent file's shape: what each key holds, as serde reads it and as
//! its JSON Schema (for editors) describes it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use serde_saphyr::Spanned;

use iris_model::{ModelConfig, ModelProvider, ServerProfile};
use iris_runtime::Rule;
pub use iris_runtime::config::Seconds;
use iris_runtime::hooks::HookEvent;

/// A name or path as written, with where it was written.
pub(crate) type Named = Spanned<String>;

/// An agent: its tools, hooks, middleware, permissions and limits.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Iris agent")]
pub(super) struct AgentFile {
    /// The agent's name, for logs and run events.
    pub name: String,
    /// The system instructions, written here.
    #[serde(default)]
    pub instructions: Option<String>,
    /// Or a file holding them, relative to this file.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub instructions_file: Option<Named>,
    /// The model the runner asks.
    #[serde(default)]
    pub model: Option<ModelSection>,
    /// The tools the agent has.
    #[serde(default)]
    pub tools: ToolsSection,
    /// Hooks, run in the order listed.
    #[serde(default)]
    pub hooks: Vec<HookSection>,
    /// Middleware around each call.
    #[serde(default)]
    pub middleware: MiddlewareSection,
    /// Which calls run, ask a person first, or are refused.
    #[serde(default)]
    pub permissions: PermissionsSection,
    /// Bounds on runs and calls.
    #[serde(default)]
    pub limits: LimitsSection,
    /// The remote Decision backend of `tool_search`.
    #[serde(default)]
    pub decision: Option<DecisionSection>,
    /// What each model request discloses.
    #[serde(default)]
    pub context_policy: ContextPolicySection,
    /// Child agents the model may hand sub-tasks to, each offered as a
    /// tool of its name.
    #[serde(default)]
    pub agents: Vec<ChildSection>,
    /// Agent Skills the model may activate: folders with a `SKILL.md`,
    /// found under the roots named here.
    #[serde(default)]
    #[schemars(with = "Option<SkillsSection>")]
    pub skills: Option<Spanned<SkillsSection>>,
    /// Who may call the agent's tools when it is served over HTTP (`iris
    /// serve --http`, feature `mcp`): trusted token issuers, this server's
    /// audience, and rules granting tools by scope and claim (anything no
    /// rule grants is refused).
    #[serde(default)]
    #[cfg_attr(
        feature = "mcp",
        schemars(with = "Option<iris_mcp::gateway::GatewayAuth>")
    )]
    #[cfg_attr(not(feature = "mcp"), schemars(with = "Option<Value>"))]
    pub auth: Option<Spanned<Value>>,
    /// Where the agent's traces go (OpenTelemetry GenAI spans), and whether
    /// they record content.
    #[serde(default)]
    pub telemetry: Option<TelemetrySection>,
    /// What the agent's final answer must be: a JSON value of a schema,
    /// sent with the provider's structured output and checked; an answer
    /// that does not fit goes back to the model with its faults.
    #[serde(default)]
    #[schemars(with = "Option<OutputSection>")]
    pub output: Option<Spanned<OutputSection>>,
    /// What a run may spend, its child agents' spend included: a model
    /// request the budget has no room for is not sent, and the run ends
    /// naming the bound.
    #[serde(default)]
    #[schemars(with = "Option<BudgetSection>")]
    pub budget: Option<Spanned<BudgetSection>>,
}

/// What a run may spend; each bound left out is unbounded.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct BudgetSection {
    /// Tokens read and written together.
    #[serde(default)]
    pub tokens: Option<u64>,
    /// Tokens read (prompts, cached ones included).
    #[serde(default)]
    pub input_tokens: Option<u64>,
    /// Tokens written.
    #[serde(default)]
    pub output_tokens: Option<u64>,
    /// US dollars, at the prices of `prices` (a model without a price is
    /// not sent a request under this bound).
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub usd: Option<f64>,
    /// Model requests.
    #[serde(default)]
    pub requests: Option<u32>,
    /// Tool calls.
    #[serde(default)]
    pub tool_calls: Option<u32>,
    /// Seconds of active work, summed over the run's pauses.
    #[serde(default)]
    pub active_seconds: Option<u64>,
    /// Prices in US dollars per million tokens, by model name (`*` for any
    /// other): Iris ships none, so a team writes the ones it pays.
    #[serde(default)]
    pub prices: std::collections::BTreeMap<String, PriceSection>,
}

/// One model's price, in US dollars per million tokens.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct PriceSection {
    /// Per million tokens read.
    #[schemars(range(min = 0))]
    pub input: f64,
    /// Per million tokens read from a prompt cache (the input price when
    /// left out).
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub cached_input: Option<f64>,
    /// Per million tokens written.
    #[schemars(range(min = 0))]
    pub output: f64,
}

/// What an agent's final answer must be.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct OutputSection {
    /// The name providers show the model (`output` when left out).
    #[serde(default)]
    pub name: Option<String>,
    /// The JSON Schema of the answer, written here.
    #[serde(default)]
    pub schema: Option<Value>,
    /// Or a file holding it (JSON, or YAML), relative to this file and
    /// inside its folder.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub schema_file: Option<Named>,
    /// An answer that does not fit goes back to the model at most this
    /// many times (2 when left out); then the run ends without an output.
    #[serde(default)]
    pub retries: Option<u32>,
}

/// Where an agent's traces go.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct TelemetrySection {
    /// The collector's OTLP/HTTP address, such as `http://127.0.0.1:4318`
    /// (`iris run --otlp` overrides it).
    #[serde(default)]
    pub otlp: Option<String>,
    /// The `service.name` the traces carry (`iris` when left out).
    #[serde(default)]
    pub service_name: Option<String>,
    /// Record messages, instructions, tool definitions, arguments and
    /// results in the spans (each cut at 8 KiB). Off by default: they may
    /// hold what a trace store must not.
    #[serde(default)]
    pub capture_content: bool,
}

/// Where an agent's skills are found, and which are offered.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SkillsSection {
    /// Folders skills are found under. A path relative to this file is
    /// the project's (its skills win over the user's); one starting with
    /// `~/` is the user's. Default: `.agents/skills` beside this file and
    /// `~/.agents/skills`.
    #[serde(default)]
    pub roots: Option<Vec<String>>,
    /// Only these skills are offered (default: every one found); a name
    /// not found is a problem of this file.
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    /// Read skills leniently (default, for skills written for other
    /// clients: loaded with warnings where the format allows) or, with
    /// `false`, strictly (any problem of a skill is a problem of this
    /// file).
    #[serde(default = "yes")]
    pub lenient: bool,
    /// The catalog's budget, in tokens (about four characters each):
    /// past it descriptions are shortened, then skills left out.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub catalog_tokens: Option<usize>,
    /// Let an active skill's `allowed-tools` pre-approve calls of the
    /// tools it names (plain names only) that the permissions would ask
    /// about; a denied call stays denied. Off unless set.
    #[serde(default)]
    pub honour_allowed_tools: bool,
}

/// A child agent: another agent file, whose agent the model calls as a
/// tool of this name. Its start is judged by this file's `permissions`
/// under that name, and it may never do more than this agent allows
/// (unless `widen_permissions`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ChildSection {
    /// The name the model calls (letters, digits, `_` and `-`, at most 64).
    #[schemars(with = "String")]
    pub name: Named,
    /// What the model reads to choose it.
    pub description: String,
    /// The child's own agent file (instructions, tools, permissions, hooks,
    /// middleware, model, limits), relative to this file and inside its
    /// folder. Without a `model` it asks this agent's model.
    #[schemars(with = "String")]
    pub file: Named,
    /// Most model steps per delegation (the child file's `limits.max_steps`
    /// otherwise); never more than this run has left.
    #[serde(default)]
    pub max_steps: Option<u32>,
    /// Most tokens per delegation; never more than this run has left.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// Longest a delegation may run, such as `120s` (pauses for a person
    /// excluded).
    #[serde(default)]
    pub deadline: Option<Seconds>,
    /// Several delegations to it in one step may run at once.
    #[serde(default)]
    pub concurrency_safe: bool,
    /// It starts with a copy of this run's history before its task.
    #[serde(default)]
    pub parent_history: bool,
    /// It may do what its own permissions allow where this agent's would
    /// ask (deny rules of every agent above it still hold). The file's
    /// author decides this, never the model.
    #[serde(default)]
    pub widen_permissions: bool,
    /// Skills the child starts with, active (their instructions in its
    /// first request): its own skills, or this agent's. This agent's
    /// activations are never passed on otherwise.
    #[serde(default)]
    pub skills: Vec<String>,
}

/// The model: which API, which model, where, and the key's variable.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ModelSection {
    /// The wire API.
    pub provider: ModelProvider,
    /// The model's name at the provider.
    pub model: String,
    /// Another endpoint speaking the same API (a proxy, vLLM, Ollama).
    #[serde(default)]
    pub base_url: Option<String>,
    /// The environment variable holding the API key: its name ends in
    /// `_API_KEY`, and it must be set (with a `base_url` and none named,
    /// the provider's usual variable is sent when set, else no key).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub api_key_env: Option<Named>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Most tokens per answer.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Stream answers (server-sent events), so observers see the model's
    /// text as it arrives.
    #[serde(default)]
    pub stream: bool,
    /// The server behind an `openai_chat` endpoint, whose dialect requests
    /// follow: `openai` (the default), `llama_cpp`, `vllm`, `ollama` or
    /// `lm_studio`. The other providers' APIs have one dialect each, and
    /// their adapters do not read it.
    #[serde(default)]
    pub profile: Option<ServerProfile>,
}

impl ModelSection {
    /// The model layer's configuration this section describes.
    #[must_use]
    pub(super) fn config(&self) -> ModelConfig {
        let mut config = ModelConfig::new(self.provider, self.model.clone()).streaming(self.stream);
        config.base_url.clone_from(&self.base_url);
        config.api_key_env = self.api_key_env.as_ref().map(|v| v.value.clone());
        config.temperature = self.temperature;
        config.max_tokens = self.max_tokens;
        if let Some(profile) = self.profile {
            config.profile = profile;
        }
        config
    }
}

/// Which tools the agent has.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolsSection {
    /// Built-in tools by key: `file.read`, `file.write`, `file.edit`.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub builtin: Vec<Named>,
    /// `#[tool]` functions by name or module path (`square`,
    /// `my_crate::math::square`).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub functions: Vec<Named>,
    /// MCP servers whose tools the agent has (feature `mcp`); an agent
    /// file naming any is loaded with `Agent::connect`.
    #[serde(default)]
    #[cfg_attr(
        feature = "mcp",
        schemars(with = "Option<Vec<iris_mcp::client::McpServerConfig>>")
    )]
    #[cfg_attr(not(feature = "mcp"), schemars(with = "Option<Vec<Value>>"))]
    pub mcp: Option<Spanned<Vec<Value>>>,
    /// Tools whose body is a program: the arguments as JSON on its stdin,
    /// its stdout the result.
    #[serde(default)]
    pub command: Vec<CommandToolSection>,
    /// Tools kept out of requests until `tool_search` finds them, by
    /// model-facing name.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub deferred: Vec<Named>,
}

/// A tool whose body is a program, never run through a shell.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CommandToolSection {
    /// The name the model calls it by.
    #[schemars(with = "String")]
    pub name: Named,
    /// What it does and when to use it: what the model chooses by.
    pub description: String,
    /// The program and its arguments, such as `["python3", "tools/count.py"]`
    /// (a relative program path is taken from `cwd`).
    #[schemars(with = "Vec<String>")]
    pub command: Spanned<Vec<String>>,
    /// Its parameters by name, typed: `{path: {type: string, description:
    /// ...}}`. Or give `input_schema`.
    #[serde(default)]
    #[schemars(with = "Option<BTreeMap<String, ParameterSection>>")]
    pub parameters: Option<Spanned<BTreeMap<String, ParameterSection>>>,
    /// Its input as a JSON Schema object, instead of `parameters`.
    #[serde(default)]
    #[schemars(with = "Option<Value>")]
    pub input_schema: Option<Spanned<Value>>,
    /// Capability tags: `read_only`, `write`, `exec`, `network`,
    /// `idempotent`, `concurrency_safe`, `interactive`.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub capabilities: Vec<iris_core::Capability>,
    /// How stdout becomes the result: `auto` (JSON when it is JSON), `text`
    /// or `json`.
    #[serde(default)]
    pub output: iris_tools::command::CommandOutput,
    /// One call's deadline, such as `10s` (30 seconds when left out).
    #[serde(default)]
    pub timeout: Option<Seconds>,
    /// Extra environment variables; `${NAME}` takes a variable of the
    /// host's environment, which must be set.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>")]
    pub env: BTreeMap<String, Spanned<String>>,
    /// The working directory, relative to this file (this file's folder
    /// when left out).
    #[serde(default)]
    pub cwd: Option<String>,
}

/// One parameter of a command tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ParameterSection {
    /// Its JSON type.
    #[serde(rename = "type")]
    pub kind: ParameterKind,
    /// What it means: the model reads this.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether the model may leave it out.
    #[serde(default)]
    pub optional: bool,
    /// The only values it takes.
    #[serde(default, rename = "enum")]
    pub values: Option<Vec<Value>>,
    /// The type of each item (`type: array`), `string` when left out.
    #[serde(default)]
    pub items: Option<ParameterKind>,
}

/// The JSON types a parameter can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum ParameterKind {
    /// Text.
    String,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A list.
    Array,
    /// A JSON object.
    Object,
}

impl ParameterKind {
    /// The JSON Schema `type`.
    #[must_use]
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
            Self::Array => "array",
            Self::Object => "object",
        }
    }
}

/// One hook.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct HookSection {
    /// A name for logs and results.
    pub name: String,
    /// When it runs.
    pub event: HookEvent,
    /// Only calls of these tools, by model-facing name (`write_file`);
    /// all tools when left out. Run events take no filter.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub tools: Vec<Named>,
    /// What runs.
    #[schemars(with = "HandlerSection")]
    pub handler: Spanned<HandlerSection>,
    /// The hook's deadline, such as `5s` (30 seconds when left out).
    #[serde(default)]
    pub timeout: Option<Seconds>,
    /// A `tool.before`, `model.before` or `model.after` guard over the
    /// whole tree: it also judges the calls (or model turns) of every child
    /// agent below this one (`agents`), at any depth.
    #[serde(default)]
    pub tree_wide: bool,
}

/// What a hook runs: a factory's hook, or a command.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct HandlerSection {
    /// `factory` or `command`.
    #[serde(rename = "type")]
    pub kind: HandlerKind,
    /// The hook factory's name or module path (`type: factory`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub factory: Option<Named>,
    /// The factory's options (`type: factory`).
    #[serde(default)]
    #[schemars(with = "Option<Value>")]
    pub options: Option<Spanned<Value>>,
    /// The program and its arguments (`type: command`).
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// Extra environment variables of the command; `${NAME}` takes a
    /// variable of the host's environment, which must be set.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>")]
    pub env: BTreeMap<String, Spanned<String>>,
    /// The command's working directory, relative to this file.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The hook's deadline, said here instead of in the hook's `timeout`
    /// (one of the two; a command is killed at it).
    #[serde(default)]
    pub timeout: Option<Seconds>,
}

/// The kinds of hook handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum HandlerKind {
    /// A `#[hook_factory]` function's hook.
    Factory,
    /// A program that reads the event as JSON and writes its answer.
    Command,
}

/// Middleware, outermost first.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct MiddlewareSection {
    /// Middleware around every tool call.
    #[serde(default)]
    pub tools: Vec<MiddlewareEntry>,
}

/// One middleware, from a factory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct MiddlewareEntry {
    /// The middleware factory's name or module path.
    #[schemars(with = "String")]
    pub factory: Named,
    /// Its options.
    #[serde(default)]
    #[schemars(with = "Option<Value>")]
    pub options: Option<Spanned<Value>>,
}

/// Rules by capability, and per tool.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct PermissionsSection {
    /// Calls that only read (`allow` when left out).
    #[serde(default)]
    pub read_only: Option<Rule>,
    /// Calls that write (`ask` when left out).
    #[serde(default)]
    pub write: Option<Rule>,
    /// Calls that run programs (`ask` when left out).
    #[serde(default)]
    pub exec: Option<Rule>,
    /// Anything else (`ask` when left out).
    #[serde(default)]
    pub other: Option<Rule>,
    /// Per tool, by model-facing name; these come first.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, Rule>")]
    pub tools: BTreeMap<String, Spanned<Rule>>,
}

/// Bounds on runs and calls.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct LimitsSection {
    /// Most model steps in one run.
    #[serde(default)]
    pub max_steps: Option<u32>,
    /// Most calls running at once.
    #[serde(default)]
    pub max_concurrency: Option<usize>,
    /// Deadline of one call, such as `300s`.
    #[serde(default)]
    pub timeout: Option<Seconds>,
    /// Longest result the model reads whole; longer ones are saved as
    /// artifacts with a preview.
    #[serde(default)]
    pub max_result_chars: Option<usize>,
}

/// Where the Decision backend's configuration is.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DecisionSection {
    /// A `decision.yaml`, relative to this file.
    #[schemars(with = "String")]
    pub path: Named,
}

/// What each model request discloses.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ContextPolicySection {
    /// Whether the policy applies at all.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Whether deferred tools are kept out until `tool_search` finds them
    /// (needs `tool_search`, which is added when some tool is deferred).
    #[serde(default = "yes")]
    pub deferred_tools: bool,
    /// Characters of tool results one request may carry: past it, older
    /// results of read-only tools are sent as short previews, and the
    /// `read_history` tool (added then) gives them back. Off when left out.
    #[serde(default)]
    pub results_budget: Option<usize>,
}

impl Default for ContextPolicySection {
    fn default() -> Self {
        Self {
            enabled: true,
            deferred_tools: true,
            results_budget: None,
        }
    }
}

fn yes() -> bool {
    true
}
