#![doc = include_str!("../README.md")]
// On docs.rs each item gated by a feature shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The front door: what a tool author and a host write on day one. Every
// other name lives in the module of its concept below, the same way for
// every wing.
pub use iris_core::{
    Json, Next, Patch, RunId, State, Tool, ToolCall, ToolContext, ToolError, ToolErrorKind,
    ToolResult, ToolUseBlock,
};
#[cfg(feature = "runtime")]
pub use iris_runtime::{
    ApprovalDecision, Rule, RulePolicy, RuntimeError, ToolExecutor, ToolOutcome, ToolRegistry,
};

// Schemas and their provider projections, and the crates that nested
// argument types derive through.
pub use iris_core::{provider, schema, schemars, serde, serde_json};

/// Tool definitions and the provider-neutral specs made from them: names,
/// capabilities, exposure, result policies, origins.
pub mod definition {
    pub use iris_core::{
        Capabilities, Capability, DefinitionError, Exposure, MAX_TOOL_NAME_LEN, ResultPolicy,
        ToolDefinition, ToolDefinitionBuilder, ToolName, ToolOrigin, ToolSpec, check_tool_name,
    };
}

/// What a result carries to the model: text and image blocks.
pub mod content {
    pub use iris_core::{
        ContentBlock, IMAGE_MEDIA_TYPES, ImageBlock, ImageError, MAX_IMAGE_BYTES, sniff_media_type,
    };
}

/// Tools written by hand and what `#[tool]` writes for you: the object-safe
/// [`DynTool`](tool::DynTool), bodies, argument errors, return conversions,
/// context extractors, toolboxes and runtime-made tools.
pub mod tool {
    pub use iris_core::{
        Admit, Admitted, ArgumentError, ArgumentFault, BoxFuture, CallShape, DynTool, DynamicTool,
        FromToolContext, IntoToolResult, ParsedArgs, StopFlag, ToolBody, ToolContextBuilder,
        Toolbox,
    };
    // The body a middleware stack ends in: public because `Next` names it,
    // kept out of the docs.
    #[doc(hidden)]
    pub use iris_core::InnerStack;
}

/// Middleware: the trait `#[iris::middleware]` implements, and its errors.
pub mod middleware {
    pub use iris_core::{IntoMiddlewareResult, Middleware, MiddlewareError};
    #[cfg(feature = "runtime")]
    pub use iris_runtime::factories::MiddlewareFactory;
}

/// The registry beyond its owner: a registry shared while it changes, and
/// filtered read-only views.
#[cfg(feature = "runtime")]
pub mod registry {
    pub use iris_runtime::{SharedRegistry, ToolRegistryView, WeakSharedRegistry};
}

/// The executor's builder, limits and cancellation.
#[cfg(feature = "runtime")]
pub mod executor {
    pub use iris_runtime::CancellationToken;
    pub use iris_runtime::executor::{
        CallPlan, DEFAULT_APPROVAL_TTL, DEFAULT_MAX_PENDING_APPROVALS,
        DEFAULT_MAX_PENDING_APPROVALS_PER_RUN, DEFAULT_STOP_GRACE, ExecutorConfig, PlannedHook,
        ToolExecutorBuilder,
    };
}

/// Permission policies and the pause for a person: what a policy sees, what
/// it answers, and the approval request a host presents.
#[cfg(feature = "runtime")]
pub mod permissions {
    pub use iris_runtime::{
        ApprovalDecision, ApprovalRequest, CeilingReach, Permission, PermissionPolicy,
        PermissionRequest, PolicyCeiling, Rule, RulePolicy, arguments_hash,
    };
}

/// Hooks at fixed events: `tool.before` (may deny), `tool.after` (may add
/// feedback), `run.started` and `run.finished`; from code, factories or
/// commands.
#[cfg(feature = "runtime")]
pub mod hooks {
    pub use iris_runtime::factories::HookFactory;
    pub use iris_runtime::hooks::{
        DEFAULT_HOOK_TIMEOUT, HookCode, HookResultView, IntoHook, IntoHookAnswer,
        MAX_HOOK_STDERR_BYTES, MAX_HOOK_STDOUT_BYTES,
    };
    pub use iris_runtime::{
        AfterAnswer, AfterHook, BeforeAnswer, BeforeHook, CommandHook, Hook, HookEvent,
        HookFailure, HookInput, HookRegistration, InheritedGuards, RunHook, TreeGuards,
    };
}

/// Observers of committed events, and progress reports of running tools.
#[cfg(feature = "runtime")]
pub mod observe {
    pub use iris_runtime::{
        HookOutcome, ObserverStats, ProgressListener, RunEvent, RunEventObserver, ToolProgress,
    };
}

/// The run ledger: the one owner of what lives as long as a run.
#[cfg(feature = "runtime")]
pub use iris_runtime::ledger;

/// Calls claimed and recorded as they run, for runs that outlive their
/// process, and the [`IdempotencyKey`](journal::IdempotencyKey) each call of
/// such a run gets.
#[cfg(feature = "runtime")]
pub use iris_runtime::journal;

/// Oversized results saved whole and previewed, and published files.
#[cfg(feature = "runtime")]
pub mod artifacts {
    pub use iris_core::ArtifactRef;
    pub use iris_runtime::artifacts::{
        Artifact, ArtifactStore, DEFAULT_ARTIFACT_DIR, DEFAULT_MAX_RESULT_CHARS, HANDLE_PREFIX,
        Identity, PreviewPolicy, apply_result_policy, is_handle, scope,
    };
    #[cfg(feature = "object-store")]
    pub use iris_runtime::artifacts::{MAX_REMOTE_ARTIFACT_BYTES, REMOTE_TIMEOUT, object_store};
}

/// The built-in file tools `read_file`, `write_file` and `edit_file`, and
/// the file service they share.
#[cfg(feature = "runtime")]
pub use iris_tools::fs;

/// Tools whose body is an external program, as agent files define them
/// (`tools.command`).
#[cfg(feature = "runtime")]
pub use iris_tools::command;

/// Harnesses for fuzzing every parser: each takes bytes and panics when a
/// property its parser must keep does not hold. Not a public API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod __fuzz {
    pub use iris_agent::fuzzing::agent_files;
    pub use iris_core::fuzzing::{points_inside, schema_projections, tool_arguments};
    pub use iris_mcp::fuzzing::{mcp_client, mcp_messages};
    pub use iris_model::fuzzing::sse_stream;
    pub use iris_runtime::fuzzing::hook_answers;

    /// MCP messages both ways (to the server, and a server's answers to
    /// the client), and the event streams the model adapters read.
    pub fn mcp_streams(data: &[u8]) {
        sse_stream(data);
        mcp_messages(data);
        mcp_client(data);
    }
}

/// What generated code reaches for. Not a public API: anything here may
/// change in any release.
#[doc(hidden)]
pub mod __private {
    pub use iris_core::__private::*;
    #[cfg(feature = "runtime")]
    pub use iris_runtime::__private::*;
    // `#[hook_factory]` and `#[middleware_factory]` enter the link-time
    // catalog only in a build that reads agent files.
    #[cfg(feature = "assembly")]
    pub use iris_agent::assembly::__private::*;
    #[cfg(all(feature = "runtime", not(feature = "assembly")))]
    pub use iris_runtime::{
        __iris_no_catalog_factory as catalog_hook_factory,
        __iris_no_catalog_factory as catalog_middleware_factory,
    };
}

/// Turns a function into an LLM tool.
///
/// ```
/// use iris::{State, ToolContext};
///
/// # struct Db;
/// # impl Db { fn lookup(&self, _: &str) -> Option<String> { None } }
/// /// Find a customer by e-mail address.
/// ///
/// /// Returns the customer's id, or an error when nobody has that address.
/// #[iris::tool(read_only, concurrency_safe, aliases = ["lookup_customer"], max_result_chars = 2000)]
/// async fn find_customer(
///     /// The e-mail address, compared case-insensitively.
///     email: String,
///     /// Also search archived customers.
///     #[serde(default)]
///     archived: bool,
///     #[ctx] cx: &ToolContext,
///     #[state] db: State<Db>,
/// ) -> Result<String, String> {
///     let _ = (archived, cx.run_id());
///     db.lookup(&email).ok_or_else(|| format!("no customer with address {email}"))
/// }
/// ```
///
/// # Keys
///
/// | key | value | effect |
/// |---|---|---|
/// | `name` | string | the tool name (default: the function's name); must match `^[A-Za-z0-9_-]{1,64}$` |
/// | `description` | string | replaces the doc comment as the description |
/// | `aliases` | `["a", ...]` | other names that resolve to this tool |
/// | `read_only` | flag | only reads; allowed by default permission policies (a tool without any tag asks for approval under them: it is not known to be read-only) |
/// | `write` | flag | changes state; cannot be combined with `read_only` |
/// | `exec` | flag | runs programs; cannot be combined with `read_only` |
/// | `network` | flag | talks to the network |
/// | `interactive` | flag | needs a person |
/// | `concurrency_safe` | flag | may run next to other calls |
/// | `deferred` | flag | offered only after `tool_search` finds it |
/// | `max_result_chars` | positive integer | longer results are previewed and saved whole |
/// | `crate` | string path | where `iris` is, when renamed (`crate = "::my_iris"`) |
///
/// Parameter markers: `#[ctx]` (a `&ToolContext`, or any `FromToolContext`
/// type), `#[state]` (a `State<T>` added with `ToolContextBuilder::state`),
/// `#[args]` (one struct that is the whole input). `#[serde(..)]`,
/// `#[schemars(..)]` and doc comments on parameters move to the generated
/// argument struct.
///
/// # What it writes
///
/// The function stays as written. Beside it, a unit struct named after the
/// function in `CamelCase` (`fn quote` -> `struct Quote`; next to a type of
/// that name, put the tools in a module of their own) implements [`Tool`]: a hidden argument struct
/// deriving `Deserialize` and `JsonSchema` (unknown fields denied), a
/// definition built once into a static, parsing with the JSON path of any
/// error, and a body that calls the function and converts its return value.
/// By hand, the same tool reads:
///
/// ```
/// use std::sync::OnceLock;
/// use iris::{Tool, ToolContext, ToolResult};
/// use iris::tool::{ArgumentError, ToolBody};
/// use iris::definition::{Capability, ToolDefinition, ToolName};
/// use iris::serde_json::Value;
///
/// fn square(value: i64) -> i64 { value * value }
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// #[serde(deny_unknown_fields)]
/// struct SquareArgs {
///     /// The integer to square.
///     value: i64,
/// }
///
/// struct Square;
///
/// impl Tool for Square {
///     type Args = SquareArgs;
///
///     fn definition(&self) -> &ToolDefinition {
///         static DEFINITION: OnceLock<ToolDefinition> = OnceLock::new();
///         DEFINITION.get_or_init(|| {
///             ToolDefinition::builder(ToolName::new("square").unwrap(), "Return the square of an integer.")
///                 .input_schema(iris::schema::input_schema_for::<SquareArgs>())
///                 .capability(Capability::ReadOnly)
///                 .build()
///                 .unwrap()
///         })
///     }
///
///     fn parse(&self, input: &Value) -> Result<SquareArgs, ArgumentError> {
///         iris::schema::parse_arguments(input)
///     }
///
///     fn call<'a>(&'a self, args: SquareArgs, _cx: &'a ToolContext) -> ToolBody<'a> {
///         ToolBody::Blocking(Box::new(move || ToolResult::json(square(args.value).into())))
///     }
/// }
/// # assert_eq!(Square.definition().input_schema()["required"][0], "value");
/// ```
///
/// # Compile errors
///
/// Unknown or repeated keys (with the closest key suggested), generic,
/// `unsafe`, `extern` or variadic functions, `self` receivers, patterns
/// instead of parameter names, borrowed or `impl Trait` parameters, argument
/// types without `Deserialize`/`JsonSchema`, return types that cannot become
/// a result, a missing description, names providers refuse, `read_only`
/// with `write` or `exec`, two `#[ctx]` parameters, `#[args]` beside other
/// arguments, and aliases repeating the name — each reported on the token
/// at fault, all at once.
#[cfg(feature = "macros")]
pub use iris_macros::tool;

/// Turns an async function into a [`Middleware`](middleware::Middleware) that wraps every tool call.
///
/// The function takes the call and `next`, and optionally the context in
/// between; it returns a `ToolResult` or a `Result<ToolResult, E>` with any
/// error type `E` (`MiddlewareError`, an error of your own, `Box<dyn Error + Send +
/// Sync>`); an `Err` becomes the call's error result, naming the middleware. `fn timing` becomes
/// `struct Timing`, registered with `ToolExecutorBuilder::middleware`.
///
/// ```
/// use iris::{Next, ToolCall, ToolContext, ToolResult};
/// use iris::middleware::MiddlewareError;
///
/// /// Adds how long the rest of the stack took to the result's stats.
/// #[iris::middleware]
/// async fn timing(call: ToolCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
///     let started = std::time::Instant::now();
///     let result = next.run(call).await?;
///     Ok(result.with_stat("wrapped_seconds", started.elapsed().as_secs_f64()))
/// }
///
/// /// Refuses calls outside office hours, without running the tool.
/// #[iris::middleware(name = "office_hours")]
/// async fn office_hours(call: ToolCall, cx: &ToolContext, next: Next<'_>) -> ToolResult {
///     if cx.extension::<Closed>().is_some() {
///         return ToolResult::error(iris::ToolErrorKind::PermissionDenied, "closed until 9:00");
///     }
///     next.run(call).await.unwrap_or_else(|e| ToolResult::error(iris::ToolErrorKind::Execution, e.to_string()))
/// }
/// # struct Closed;
/// ```
///
/// Keys: `name = "..."` (the name its errors carry), `crate = "..."`.
#[cfg(feature = "macros")]
pub use iris_macros::middleware;

/// Turns the `#[tool]` methods of an `impl` block into tools, each bound to
/// an `Arc` of the service: what a service with a database pool, a client or
/// a cache is written as.
///
/// ```
/// use std::sync::Arc;
/// use std::collections::HashMap;
///
/// use iris::ToolRegistry;
///
/// struct Billing {
///     invoices: HashMap<String, u64>,
/// }
///
/// #[iris::toolbox]
/// impl Billing {
///     /// Look up an invoice's amount, in cents.
///     #[tool(read_only, concurrency_safe)]
///     async fn invoice_amount(
///         &self,
///         /// The invoice id, such as `INV-1`.
///         id: String,
///     ) -> Result<u64, String> {
///         self.invoices.get(&id).copied().ok_or_else(|| format!("no invoice `{id}`"))
///     }
///
///     /// Not a tool: methods without `#[tool]` stay plain methods.
///     fn total(&self) -> u64 {
///         self.invoices.values().sum()
///     }
/// }
///
/// let billing = Arc::new(Billing { invoices: HashMap::from([("INV-1".into(), 1200)]) });
/// let mut registry = ToolRegistry::new();
/// registry.register_toolbox(Arc::clone(&billing))?;
/// assert!(registry.resolve("invoice_amount").is_some());
/// assert_eq!(billing.total(), 1200);
/// # Ok::<(), iris::RuntimeError>(())
/// ```
///
/// A `#[tool]` method takes `&self` (never `&mut self`: calls of one service
/// may run at the same time) and has the same keys, doc comments,
/// parameters (`#[ctx]`, `#[state]`, `#[args]`) and checks as a free
/// `#[tool]` function. The block must be the type's own, non-generic
/// `impl`. Key: `crate = "..."`.
#[cfg(feature = "macros")]
pub use iris_macros::toolbox;

/// Agents assembled from a YAML file (feature `assembly`); see
/// [`agent::Agent::from_path`].
#[cfg(feature = "assembly")]
pub use iris_agent::assembly;

/// Agents and the run loop (feature `runner`): an agent built in code or
/// from a file, driven by a model, paused for approvals and resumed from
/// saved state; see [`agent::Agent::builder`] and [`agent::AgentRunner`].
#[cfg(feature = "runner")]
// A crate re-exported whole renders as a module of its own.
#[doc(inline)]
pub use iris_agent as agent;

/// Runs kept in SQLite (feature `sqlite`): one file that every process of
/// a machine shares, so a run that waits is resumed by any of them and a
/// run whose process died is taken over; see [`sqlite::SqliteStore`] and
/// [`agent::AgentRunner::with_store`].
#[cfg(feature = "sqlite")]
// A crate re-exported whole renders as a module of its own.
#[doc(inline)]
pub use iris_sqlite as sqlite;

/// The `iris` command line's commands (feature `cli`), to mount over what a
/// host really runs: `iris::cli::main(agent)` in a `src/bin/` gives `list`,
/// `schema`, `search`, `call`, `serve`, `run`, `check`, `lint`, `eval`,
/// `lock`, `diff`, `doctor` and `completions` over the host's agent (its
/// tools, policy, hooks and middleware), and agent files assembled with the
/// host's [`agent::assembly::Assembly`] (toolbox services, its own hooks and
/// middleware) through [`cli::Host`].
#[cfg(feature = "cli")]
// A crate re-exported whole renders as a module of its own.
#[doc(inline)]
pub use iris_cli as cli;

/// The testing kit (feature `testing`, for dev-dependencies): scripted
/// and automatic models, run transcripts with assertions, and a harness
/// that runs one tool through the executor; see [`testing::ScriptedModel`]
/// and [`testing::run_to_end`].
#[cfg(feature = "testing")]
// A crate re-exported whole renders as a module of its own.
#[doc(inline)]
pub use iris_testing as testing;

/// Runs on Restate (feature `restate`): an agent served as a durable
/// workflow keyed by run id, so that runs move between replicas on many
/// machines and approvals arrive from any of them; see
/// [`restate::AgentWorkflow`].
#[cfg(feature = "restate")]
// A crate re-exported whole renders as a module of its own.
#[doc(inline)]
pub use iris_restate as restate;

/// The model layer: the provider-neutral request and response, the
/// [`Model`](model::Model) trait a host implements for its own model, the
/// [`ModelConfig`](model::ModelConfig) that names one, and the HTTP adapters
/// (features `openai`, `anthropic` and `gemini`).
#[cfg(feature = "runtime")]
// A crate re-exported whole renders as a module of its own.
#[doc(inline)]
pub use iris_model as model;

/// Deferred discovery: `tool_search`, the local ranker, budgeted
/// disclosure, and the Decision backend (feature `decision`).
#[cfg(feature = "runtime")]
pub use iris_tools::discovery;

/// Traces in the OpenTelemetry GenAI conventions: the attribute names Iris's
/// `invoke_agent`, `chat` and `execute_tool` spans carry, the switch that
/// records content in them, and (feature `otlp`) `Otlp`,
/// which exports them to a collector.
#[cfg(feature = "runtime")]
pub mod telemetry {
    pub use iris_runtime::telemetry::*;
    #[cfg(feature = "otlp")]
    pub use iris_telemetry::{Otlp, TelemetryError, TelemetryGuard};
}

/// MCP (feature `mcp`): the tools of MCP servers as Iris tools, and Iris
/// tools served over MCP; see [`mcp::McpClient`] and [`mcp::serve`].
#[cfg(feature = "mcp")]
// A crate re-exported whole renders as a module of its own.
#[doc(inline)]
pub use iris_mcp as mcp;

/// Agent Skills (feature `skills`): `SKILL.md` folders read strictly or
/// leniently and found under configured roots; see
/// [`skills::read_skill`] and [`skills::SkillRoots`].
#[cfg(feature = "skills")]
// A crate re-exported whole renders as a module of its own.
#[doc(inline)]
pub use iris_skills as skills;

/// Turns a function into a hook factory: configuration (an agent file, or
/// a host's own settings) builds hooks from it by name and options.
///
/// The function is called once, with the options given; its parameters (or
/// one `#[args]` struct) make the options, parsed like a tool's arguments
/// (unknown options refused, doc comments in the schema). It returns the
/// [`Hook`](hooks::Hook) it makes. `fn create_feedback` becomes `struct
/// CreateFeedback`, which implements [`HookFactory`](hooks::HookFactory);
/// with feature `assembly` it is also in the link-time catalog under
/// `create_feedback` and its module path, so agent files name it.
///
/// ```
/// use iris::hooks::{AfterAnswer, Hook, HookInput};
///
/// /// Adds a sentence after a tool's result.
/// #[iris::hook_factory]
/// fn create_feedback(
///     /// The sentence to add.
///     text: String,
/// ) -> Hook {
///     Hook::after(move |_input: &HookInput| AfterAnswer::Feedback(text.clone()))
/// }
///
/// use iris::hooks::HookFactory as _;
/// let hook = CreateFeedback.build(&serde_json::json!({"text": "Checked."}));
/// assert!(hook.is_ok());
/// let wrong = CreateFeedback.build(&serde_json::json!({"txt": "Checked."})).unwrap_err();
/// assert!(wrong.message().contains("unknown field `txt`"));
/// ```
///
/// Keys: `name = "..."` (the name configuration uses), `crate = "..."`.
#[cfg(all(feature = "macros", feature = "runtime"))]
pub use iris_macros::hook_factory;

/// Turns a function into a middleware factory that configuration names, as
/// [`hook_factory`] does for hooks: it returns the
/// middleware it makes (a type implementing [`Middleware`](middleware::Middleware), such as one
/// `#[iris::middleware]` wrote).
///
/// ```
/// use iris::{Next, ToolCall, ToolResult};
/// use iris::middleware::MiddlewareError;
///
/// /// Adds how long the rest of the stack took to the result's stats.
/// #[iris::middleware]
/// async fn timing(call: ToolCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
///     let started = std::time::Instant::now();
///     let result = next.run(call).await?;
///     Ok(result.with_stat("wrapped_seconds", started.elapsed().as_secs_f64()))
/// }
///
/// /// Times every call.
/// #[iris::middleware_factory]
/// fn create_timing() -> Timing {
///     Timing
/// }
/// ```
#[cfg(all(feature = "macros", feature = "runtime"))]
pub use iris_macros::middleware_factory;
