#![doc = include_str!("../README.md")]
// On docs.rs each item gated by a feature shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod guide;

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

// The crates that nested argument types derive through.
pub use iris_core::{schemars, serde, serde_json};

/// The JSON Schemas of tools: made from argument types, and the parsing
/// that checks a call against them.
///
/// ```
/// #[derive(iris::serde::Deserialize, iris::schemars::JsonSchema)]
/// #[serde(crate = "iris::serde", deny_unknown_fields)]
/// #[schemars(crate = "iris::schemars")]
/// struct Refund {
///     /// The order to refund.
///     order: u32,
///     /// In cents; the whole order when left out.
///     cents: Option<u64>,
/// }
///
/// let schema = iris::schema::input_schema_for::<Refund>();
/// assert_eq!(schema["required"], iris::serde_json::json!(["order"]));
/// let wrong = iris::schema::parse_arguments::<Refund>(&iris::serde_json::json!({"order": "seven"}));
/// assert!(wrong.is_err_and(|e| e.to_string().contains("order")));   // the path of the fault
/// ```
pub use iris_core::schema;

/// Tool specs in each provider's wire shape, with a report of every change
/// made on the way.
///
/// ```
/// use iris::Tool;
///
/// /// Set a thermostat.
/// #[iris::tool(write)]
/// fn set_temperature(
///     /// Degrees Celsius.
///     #[schemars(range(min = 5, max = 30))]
///     celsius: u8,
///     /// Which room; every room when left out.
///     room: Option<String>,
/// ) -> String {
///     format!("{celsius} °C in {}", room.as_deref().unwrap_or("every room"))
/// }
///
/// let spec = SetTemperature.definition().spec().with_strict(true);
/// let openai = iris::provider::openai_chat(&spec);
/// // Strict mode requires every property: the optional one becomes nullable.
/// assert_eq!(openai.tool["function"]["parameters"]["required"], iris::serde_json::json!(["celsius", "room"]));
/// let anthropic = iris::provider::anthropic(&spec);
/// assert_eq!(anthropic.tool["name"], "set_temperature");
/// ```
pub use iris_core::provider;

/// Tool definitions and the provider-neutral specs made from them: names,
/// capabilities, exposure, result policies, origins.
///
/// ```
/// use iris::definition::{Capability, Exposure, ToolDefinition, ToolName};
///
/// let definition = ToolDefinition::builder(ToolName::new("lookup_order")?, "Look up an order by number.")
///     .input_schema(iris::serde_json::json!({
///         "type": "object",
///         "properties": {"number": {"type": "integer"}},
///         "required": ["number"]
///     }))
///     .capability(Capability::ReadOnly)
///     .exposure(Exposure::Deferred)
///     .build()?;
/// assert!(definition.capabilities().is_read_only());
/// assert_eq!(definition.spec().name().as_str(), "lookup_order");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub mod definition {
    pub use iris_core::{
        Capabilities, Capability, DefinitionError, Exposure, MAX_TOOL_NAME_LEN, ResultPolicy,
        ToolDefinition, ToolDefinitionBuilder, ToolName, ToolOrigin, ToolSpec, check_tool_name,
    };
}

/// What a result carries to the model: text and image blocks.
///
/// ```
/// use iris::content::sniff_media_type;
///
/// let png = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0];
/// assert_eq!(sniff_media_type(&png), Some("image/png"));
/// // A result with an image the model sees; a bad image is an error result.
/// let result = iris::ToolResult::image(b"not an image");
/// assert_eq!(result.error_kind(), Some(iris::ToolErrorKind::UnsupportedContent));
/// ```
pub mod content {
    pub use iris_core::{
        ContentBlock, IMAGE_MEDIA_TYPES, ImageBlock, ImageError, MAX_IMAGE_BYTES, sniff_media_type,
    };
}

/// Tools written by hand and what `#[tool]` writes for you: the object-safe
/// [`DynTool`](tool::DynTool), bodies, argument errors, return conversions,
/// context extractors, toolboxes and runtime-made tools.
///
/// A tool made at run time from a definition and a closure (what MCP
/// servers' tools and command tools are):
///
/// ```
/// use iris::definition::{ToolDefinition, ToolName};
/// use iris::tool::DynamicTool;
/// use iris::{ToolRegistry, ToolResult};
///
/// let definition = ToolDefinition::builder(ToolName::new("echo")?, "Say the text back.").build()?;
/// let echo = DynamicTool::new(definition, |input, _cx| async move {
///     ToolResult::text(input["text"].as_str().unwrap_or_default())
/// });
/// let mut registry = ToolRegistry::new();
/// registry.register(echo)?;
/// assert!(registry.resolve("echo").is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
///
/// ```
/// use iris::middleware::MiddlewareError;
/// use iris::{Next, RunId, ToolCall, ToolContext, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock};
///
/// /// Return the square of an integer.
/// #[iris::tool(read_only)]
/// fn square(value: i64) -> i64 { value * value }
///
/// /// Refuses negative values before the body runs.
/// #[iris::middleware]
/// async fn no_negatives(call: ToolCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
///     if call.arguments()["value"].as_i64().is_some_and(|v| v < 0) {
///         return Ok(ToolResult::error(iris::ToolErrorKind::InvalidArguments, "give a value of 0 or more"));
///     }
///     next.run(call).await
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut registry = ToolRegistry::new();
/// registry.register(Square)?;
/// let executor = ToolExecutor::builder(registry).middleware(NoNegatives).build()?;
/// let cx = ToolContext::builder(".", RunId::new("run-1")).build();
/// let call = ToolUseBlock::new("c1", "square", iris::serde_json::json!({"value": -2}));
/// let outcome = executor.execute_one(call, &cx).await;
/// assert!(outcome.result().is_some_and(|r| r.is_error()));
/// # Ok(()) }
/// ```
pub mod middleware {
    pub use iris_core::{IntoMiddlewareResult, Middleware, MiddlewareError};
    #[cfg(feature = "runtime")]
    pub use iris_runtime::factories::MiddlewareFactory;
}

/// The registry beyond its owner: a registry shared while it changes, and
/// filtered read-only views.
#[cfg(feature = "runtime")]
///
/// ```
/// use iris::registry::SharedRegistry;
/// use iris::ToolRegistry;
///
/// /// Return the square of an integer.
/// #[iris::tool(read_only)]
/// fn square(value: i64) -> i64 { value * value }
///
/// let shared = SharedRegistry::new(ToolRegistry::new());
/// let before = shared.snapshot();                       // readers keep what they took
/// shared.update(|registry| registry.register(Square).map(drop))?; // swapped in at once
/// assert!(before.resolve("square").is_none());
/// assert!(shared.snapshot().resolve("square").is_some());
/// # Ok::<(), iris::RuntimeError>(())
/// ```
pub mod registry {
    pub use iris_runtime::{SharedRegistry, ToolRegistryView, WeakSharedRegistry};
}

/// The executor's builder, limits and cancellation.
#[cfg(feature = "runtime")]
///
/// What a call would meet, decided as the executor decides it, with nothing run:
///
/// ```
/// use iris::permissions::Permission;
/// use iris::{Rule, RulePolicy, RunId, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};
///
/// /// Record a note.
/// #[iris::tool(write)]
/// fn note(text: String) -> String { text }
///
/// let mut registry = ToolRegistry::new();
/// registry.register(Note)?;
/// let executor = ToolExecutor::builder(registry)
///     .policy(RulePolicy::new().write(Rule::Ask))
///     .build()?;
/// let cx = ToolContext::builder(".", RunId::new("run-1")).build();
/// let call = ToolUseBlock::new("c1", "note", iris::serde_json::json!({"text": "hi"}));
/// let plan = executor.plan(call, &cx).map_err(|refused| refused.text_content())?;
/// assert!(matches!(plan.permission, Permission::Ask { .. }));
/// assert!(plan.hooks.is_empty() && plan.middleware.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
///
/// ```
/// use iris::permissions::{Permission, PermissionPolicy, PermissionRequest};
/// use iris::{Rule, RulePolicy, RunId, Tool};
///
/// /// Delete a file.
/// #[iris::tool(write)]
/// fn delete_file(path: String) -> String { path }
///
/// let policy = RulePolicy::new()
///     .write(Rule::Allow)
///     .tool(iris::definition::ToolName::new("delete_file")?, Rule::Deny);
/// let run = RunId::new("run-1");
/// let arguments = iris::serde_json::json!({"path": "notes.txt"});
/// let request = PermissionRequest {
///     definition: DeleteFile.definition(),
///     arguments: &arguments,
///     read_only: false,
///     run_id: &run,
/// };
/// assert!(matches!(policy.check(&request), Permission::Deny { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
///
/// ```
/// use iris::hooks::{AfterAnswer, BeforeAnswer, HookInput, HookRegistration};
/// use iris::{RunId, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};
///
/// /// Return the square of an integer.
/// #[iris::tool(read_only)]
/// fn square(value: i64) -> i64 { value * value }
///
/// async fn no_big_numbers(input: &HookInput) -> BeforeAnswer {
///     match input.arguments.as_ref().and_then(|a| a["value"].as_i64()) {
///         Some(value) if value > 1_000 => BeforeAnswer::deny("keep the value at 1,000 or less"),
///         _ => BeforeAnswer::Allow,
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut registry = ToolRegistry::new();
/// registry.register(Square)?;
/// let executor = ToolExecutor::builder(registry)
///     .hook(HookRegistration::before("no-big-numbers", no_big_numbers).for_tools(["square"]))
///     .hook(HookRegistration::after("units", |_: &HookInput| AfterAnswer::feedback("No units.")))
///     .build()?;
/// let cx = ToolContext::builder(".", RunId::new("run-1")).build();
/// let call = |value: i64| ToolUseBlock::new("c", "square", iris::serde_json::json!({ "value": value }));
/// let big = executor.execute_one(call(5_000), &cx).await;
/// assert!(big.result().is_some_and(|r| r.is_error()));
/// let small = executor.execute_one(call(3), &cx).await;
/// assert!(small.result().is_some_and(|r| r.text_content().contains("No units.")));
/// # Ok(()) }
/// ```
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
///
/// ```
/// use std::sync::{Arc, Mutex};
///
/// use iris::observe::{RunEvent, RunEventObserver};
/// use iris::{RunId, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};
///
/// /// Return the square of an integer.
/// #[iris::tool(read_only)]
/// fn square(value: i64) -> i64 { value * value }
///
/// /// Counts the calls that finished.
/// #[derive(Clone, Default)]
/// struct Finished(Arc<Mutex<usize>>);
///
/// impl RunEventObserver for Finished {
///     fn on_event(&self, event: &RunEvent) {
///         if matches!(event, RunEvent::ToolFinished { .. }) {
///             *self.0.lock().unwrap() += 1;
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let finished = Finished::default();
/// let mut registry = ToolRegistry::new();
/// registry.register(Square)?;
/// let executor = ToolExecutor::builder(registry).observer(finished.clone()).build()?;
/// let cx = ToolContext::builder(".", RunId::new("run-1")).build();
/// executor.execute_one(ToolUseBlock::new("c1", "square", iris::serde_json::json!({"value": 2})), &cx).await;
/// executor.finish_run(&cx).await;   // observers have seen every event of the run by now
/// assert_eq!(executor.observer_stats()[0].dropped, 0);
/// # Ok(()) }
/// ```
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
///
/// ```
/// use iris::RunId;
/// use iris::journal::IdempotencyKey;
///
/// // The same (run, call id) gives the same key in every process, so a
/// // service a tool calls can drop a repeat after a takeover.
/// let key = IdempotencyKey::of(&RunId::new("order-7"), "call_3");
/// assert_eq!(key, IdempotencyKey::of(&RunId::new("order-7"), "call_3"));
/// assert_ne!(key, IdempotencyKey::of(&RunId::new("order-8"), "call_3"));
/// ```
#[cfg(feature = "runtime")]
pub use iris_runtime::journal;

/// Oversized results saved whole and previewed, and published files.
///
/// ```
/// use std::io::Read as _;
///
/// use iris::artifacts::ArtifactStore;
///
/// let workspace = tempfile::tempdir()?;
/// let store = ArtifactStore::in_workspace(workspace.path());
/// let saved = store.save(b"a long report", Some("text/plain"), Some("report.txt"))?;
/// let mut text = String::new();
/// store.open(&saved.handle)?.read_to_string(&mut text)?;   // checked against its address
/// assert_eq!(text, "a long report");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
///
/// ```
/// # #[cfg(unix)]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use iris::command::CommandTool;
/// use iris::definition::{Capability, ToolDefinition, ToolName};
/// use iris::{RunId, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};
///
/// // The arguments reach the program as one JSON object on stdin, never through a shell.
/// let definition = ToolDefinition::builder(ToolName::new("word_count")?, "Count the words of a text.")
///     .input_schema(iris::serde_json::json!({
///         "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]
///     }))
///     .capability(Capability::ReadOnly)
///     .build()?;
/// let tool = CommandTool::new(definition, vec!["wc".into(), "-w".into()])?;
/// let mut registry = ToolRegistry::new();
/// registry.register(tool)?;
/// let executor = ToolExecutor::builder(registry).build()?;
/// let cx = ToolContext::builder(".", RunId::new("run-1")).build();
/// let call = ToolUseBlock::new("c1", "word_count", iris::serde_json::json!({"text": "one two three"}));
/// let outcome = executor.execute_one(call, &cx).await;
/// assert!(outcome.result().is_some_and(|r| !r.is_error()));
/// # Ok(()) }
/// # #[cfg(not(unix))]
/// # fn main() {}
/// ```
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
///
/// ```
/// # #[cfg(feature = "assembly")]
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::path::Path;
///
/// use iris::assembly::Assembly;
///
/// /// Return the square of an integer.
/// #[iris::tool(read_only)]
/// fn square(value: i64) -> i64 { value * value }
///
/// // Names listed by hand here; `Assembly::from_catalog()` finds every linked `#[tool]`.
/// let names = Assembly::builder().tool(Square).build();
/// let agent = names.parse("name: calculator\ntools: { functions: [square] }\n", Path::new("agent.yaml"))?;
/// assert_eq!(agent.name(), "calculator");
/// let wrong = names.parse("name: calculator\ntools: { functions: [sqare] }\n", Path::new("agent.yaml")).unwrap_err();
/// assert!(wrong.to_string().contains("agent.yaml:2:"));   // file, line and column, then the key
/// assert!(wrong.to_string().contains("did you mean `square`?"));
/// # Ok(()) }
/// # #[cfg(not(feature = "assembly"))]
/// # fn main() {}
/// ```
#[cfg(feature = "assembly")]
pub use iris_agent::assembly;

/// Agents and the run loop (feature `runner`): an agent built in code or
/// from a file, driven by a model, paused for approvals and resumed from
/// saved state; see [`agent::Agent::builder`] and [`agent::AgentRunner`].
///
/// ```
/// # #[cfg(feature = "testing")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use iris::agent::{Agent, AgentRunner, RunContext, RunOutcome};
/// use iris::testing::{ScriptedModel, Turn};
/// use iris::{RunId, ToolExecutor, ToolRegistry};
///
/// /// Return the square of an integer.
/// #[iris::tool(read_only)]
/// fn square(value: i64) -> i64 { value * value }
///
/// let mut registry = ToolRegistry::new();
/// registry.register(Square)?;
/// let agent = Agent::builder(ToolExecutor::builder(registry).build()?)
///     .name("calculator")
///     .instructions("Answer with the tools you have.")
///     .build()?;
/// // A scripted model stands in for a real one (`AgentRunner::from_config` picks the adapter an agent names).
/// let model = ScriptedModel::new([
///     Turn::call("square", iris::serde_json::json!({"value": 12})),
///     Turn::text("12 squared is 144."),
/// ]);
/// let runner = AgentRunner::new(agent, model);
/// let outcome = runner.run("What is 12 squared?", &RunContext::new(".", RunId::new("run-1"))).await?;
/// assert!(matches!(outcome, RunOutcome::Finished { ref text, .. } if text.contains("144")));
/// # Ok(()) }
/// # #[cfg(not(feature = "testing"))]
/// # fn main() {}
/// ```
#[cfg(feature = "runner")]
// A module, not `pub use iris_agent as agent`: the compiler names a crate re-exported
// whole by its own name (`iris::iris_agent::X` in every error), a module's items by
// the module's path (`iris::agent::X`).
pub mod agent {
    #[doc(inline)]
    pub use iris_agent::*;
}

/// Runs kept in SQLite (feature `sqlite`): one file that every process of
/// a machine shares, so a run that waits is resumed by any of them and a
/// run whose process died is taken over; see [`sqlite::SqliteStore`] and
/// [`agent::AgentRunner::with_store`].
#[cfg(feature = "sqlite")]
// A module, as `agent` is, so that errors say `iris::sqlite::X`.
pub mod sqlite {
    #[doc(inline)]
    pub use iris_sqlite::*;
}

/// The `iris` command line's commands (feature `cli`), to mount over what a
/// host really runs: `iris::cli::main(agent)` in a `src/bin/` gives `list`,
/// `schema`, `search`, `call`, `serve`, `run`, `check`, `lint`, `eval`,
/// `lock`, `diff`, `doctor` and `completions` over the host's agent (its
/// tools, policy, hooks and middleware), and agent files assembled with the
/// host's [`agent::assembly::Assembly`] (toolbox services, its own hooks and
/// middleware) through [`cli::Host`].
#[cfg(feature = "cli")]
// A module, as `agent` is, so that errors say `iris::cli::X`.
pub mod cli {
    #[doc(inline)]
    pub use iris_cli::*;
}

/// The testing kit (feature `testing`, for dev-dependencies): scripted
/// and automatic models, run transcripts with assertions, and a harness
/// that runs one tool through the executor; see [`testing::ScriptedModel`]
/// and [`testing::run_to_end`].
#[cfg(feature = "testing")]
// A module, as `agent` is, so that errors say `iris::testing::X`.
pub mod testing {
    #[doc(inline)]
    pub use iris_testing::*;
}

/// Runs on Restate (feature `restate`): an agent served as a durable
/// workflow keyed by run id, so that runs move between replicas on many
/// machines and approvals arrive from any of them; see
/// [`restate::AgentWorkflow`].
#[cfg(feature = "restate")]
// A module, as `agent` is, so that errors say `iris::restate::X`.
pub mod restate {
    #[doc(inline)]
    pub use iris_restate::*;
}

/// The model layer: the provider-neutral request and response, the
/// [`Model`](model::Model) trait a host implements for its own model, the
/// [`ModelConfig`](model::ModelConfig) that names one, and the HTTP adapters
/// (features `openai`, `anthropic` and `gemini`).
///
/// A host's own model is a type implementing [`Model`](model::Model):
///
/// ```
/// use iris::model::{Model, ModelError, ModelRequest, ModelResponse};
/// use iris::tool::BoxFuture;
///
/// /// Answers every step with the number of tools it was offered.
/// struct Counter;
///
/// impl Model for Counter {
///     fn complete<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
///         let text = format!("{} tool(s) offered", request.tools.len());
///         Box::pin(async move { Ok(ModelResponse { text: Some(text), ..ModelResponse::default() }) })
///     }
/// }
/// # let _ = Counter;
/// ```
#[cfg(feature = "runtime")]
// A module, as `agent` is, so that errors say `iris::model::X`.
pub mod model {
    #[doc(inline)]
    pub use iris_model::*;
}

/// Deferred discovery: `tool_search`, the local ranker, budgeted
/// disclosure, the Decision backend (feature `decision`), and a sentence
/// encoder that ranks by meaning beside words (feature `encoder`; see
/// [`DiscoveryBuilder::encoder`](discovery::DiscoveryBuilder::encoder)).
#[cfg(feature = "runtime")]
pub mod discovery {
    #[cfg(feature = "decision")]
    pub use iris_tools::discovery::decision;
    pub use iris_tools::discovery::{
        CANDIDATES_PER_INTENT, CHARS_PER_TOKEN, Candidate, DEFAULT_BUDGET_TOKENS, DisclosurePolicy,
        Discovery, DiscoveryBuilder, DiscoveryError, ENCODER_LOAD_HEAD_RATIO,
        ENCODER_LOAD_MAX_TOOLS, ENCODER_LOAD_MIN_SIMILARITY, ENCODER_SELECT_MIN_LEAD,
        ENCODER_SELECT_MIN_SIMILARITY, ENCODER_WORD_WEIGHT, EncodeError, Explanation, IntentAnswer,
        LOAD_HEAD_RATIO, LOAD_MAX_TOOLS, LOAD_MIN_COVERAGE, LOAD_SEARCH_SHARE, LocalRanker,
        MAX_INTENT_CHARS, MAX_INTENTS, RankedCandidate, Ranking, SELECT_MIN_CONFIDENCE,
        SELECT_MIN_COVERAGE, SearchAnswer, SearchBackend, SearchFailure, SearchIndex, SearchScope,
        SelectionRule, TOOL_SEARCH, TermGain, TermSource, TextEncoder, ToolRequest, ToolSearch,
        ToolVectors, candidate_of, schema_tokens, tool_search,
    };

    /// A sentence encoder run in process (feature `encoder`): a BERT model
    /// such as all-MiniLM-L6-v2, loaded from a folder or (feature
    /// `encoder-hub`) fetched once from the Hugging Face hub, for
    /// [`DiscoveryBuilder::encoder`](super::discovery::DiscoveryBuilder::encoder).
    ///
    /// ```no_run
    /// use std::sync::Arc;
    ///
    /// use iris::ToolRegistry;
    /// use iris::discovery::encoder::SentenceEncoder;
    /// use iris::discovery::{Discovery, ToolSearch};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let encoder = Arc::new(SentenceEncoder::from_folder("models/all-MiniLM-L6-v2")?);
    /// let mut registry = ToolRegistry::new();
    /// registry.register(ToolSearch)?;
    /// // ... eager and deferred tools ...
    /// let discovery = Discovery::builder(Arc::new(registry)).encoder(encoder).build()?;
    /// # let _ = discovery;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "encoder")]
    pub mod encoder {
        pub use iris_encoder::{EncoderError, SentenceEncoder};
    }
}

/// Traces in the OpenTelemetry GenAI conventions: the attribute names Iris's
/// `invoke_agent`, `chat` and `execute_tool` spans carry, the switch that
/// records content in them, and (feature `otlp`) `Otlp`,
/// which exports them to a collector.
///
/// ```
/// use iris::telemetry::{OPERATION_NAME, capture_content};
///
/// // The spans go through `tracing`: any subscriber sees them, an OTLP
/// // exporter (`Otlp`, feature `otlp`) sends them to a collector.
/// assert_eq!(OPERATION_NAME, "gen_ai.operation.name");
/// capture_content(false);   // messages and arguments stay out of spans (the default)
/// ```
#[cfg(feature = "runtime")]
pub mod telemetry {
    // The attribute names and the content switch; the span plumbing the
    // Iris crates share stays theirs.
    pub use iris_runtime::telemetry::{
        AGENT_ID, AGENT_NAME, CAPTURE_CONTENT_VAR, CONVERSATION_ID, ERROR_TYPE, INPUT_MESSAGES,
        MAX_CONTENT_CHARS, OPERATION_NAME, OUTPUT_MESSAGES, PROVIDER_NAME, REQUEST_MAX_TOKENS,
        REQUEST_MODEL, REQUEST_TEMPERATURE, RESPONSE_FINISH_REASONS, RESPONSE_MODEL,
        SEMCONV_VERSION, SERVER_ADDRESS, SERVER_PORT, SYSTEM_INSTRUCTIONS, TOOL_CALL_ARGUMENTS,
        TOOL_CALL_ID, TOOL_CALL_RESULT, TOOL_DEFINITIONS, TOOL_NAME, TOOL_TYPE,
        USAGE_CACHE_READ_INPUT_TOKENS, USAGE_INPUT_TOKENS, USAGE_OUTPUT_TOKENS,
        USAGE_REASONING_OUTPUT_TOKENS, capture_content, capturing_content,
    };
    #[cfg(feature = "otlp")]
    pub use iris_telemetry::{Otlp, TelemetryError, TelemetryGuard};
}

/// MCP (feature `mcp`): the tools of MCP servers as Iris tools, and Iris
/// tools served over MCP; see [`mcp::McpClient`] and [`mcp::serve`].
///
/// ```
/// # #[cfg(feature = "testing")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use iris::{ToolExecutor, ToolRegistry};
///
/// /// Return the square of an integer.
/// #[iris::tool(read_only)]
/// fn square(value: i64) -> i64 { value * value }
///
/// // An executor served over MCP in this process, and a client of it: the
/// // server's tools come back as Iris tools named `server__tool`.
/// let mut served = ToolRegistry::new();
/// served.register(Square)?;
/// let client = iris::testing::mcp::join(ToolExecutor::builder(served).build()?, "math").await?;
/// let mut registry = ToolRegistry::new();
/// client.register_into(&mut registry)?;
/// assert!(registry.resolve("math__square").is_some());
/// # Ok(()) }
/// # #[cfg(not(feature = "testing"))]
/// # fn main() {}
/// ```
#[cfg(feature = "mcp")]
// A module, as `agent` is, so that errors say `iris::mcp::X`.
pub mod mcp {
    #[doc(inline)]
    pub use iris_mcp::*;
}

/// Agent Skills (feature `skills`): `SKILL.md` folders read strictly or
/// leniently and found under configured roots; see
/// [`skills::read_skill`] and [`skills::SkillRoots`].
#[cfg(feature = "skills")]
// A module, as `agent` is, so that errors say `iris::skills::X`.
pub mod skills {
    #[doc(inline)]
    pub use iris_skills::*;
}

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
