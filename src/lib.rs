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

// Each module below takes its docs (and their examples, run as doctests)
// from a Markdown file of `src/docs/`, named after it; the macros' docs are
// in `src/docs/macros/`.

// JSON Schemas from argument types, and calls checked against them.
#[doc = include_str!("docs/schema.md")]
pub use iris_core::schema;

// Tool specs in each provider's wire shape.
#[doc = include_str!("docs/provider.md")]
pub use iris_core::provider;

// Definitions and specs: names, capabilities, exposure, origins.
#[doc = include_str!("docs/definition.md")]
pub mod definition {
    pub use iris_core::{
        Capabilities, Capability, DefinitionError, Exposure, MAX_TOOL_NAME_LEN, ResultPolicy,
        ToolDefinition, ToolDefinitionBuilder, ToolName, ToolOrigin, ToolSpec, check_tool_name,
    };
}

// The text and image blocks a result carries.
#[doc = include_str!("docs/content.md")]
pub mod content {
    pub use iris_core::{
        ContentBlock, IMAGE_MEDIA_TYPES, ImageBlock, ImageError, MAX_IMAGE_BYTES, sniff_media_type,
    };
}

// Tools by hand: `DynTool`, bodies, argument errors, toolboxes.
#[doc = include_str!("docs/tool.md")]
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

// The middleware trait and its errors.
#[doc = include_str!("docs/middleware.md")]
pub mod middleware {
    pub use iris_core::{IntoMiddlewareResult, Middleware, MiddlewareError};
    #[cfg(feature = "runtime")]
    pub use iris_runtime::factories::MiddlewareFactory;
}

// A registry shared while it changes, and read-only views.
#[doc = include_str!("docs/registry.md")]
#[cfg(feature = "runtime")]
pub mod registry {
    pub use iris_runtime::{SharedRegistry, ToolRegistryView, WeakSharedRegistry};
}

// The executor's builder, limits, plans and cancellation.
#[doc = include_str!("docs/executor.md")]
#[cfg(feature = "runtime")]
pub mod executor {
    pub use iris_runtime::CancellationToken;
    pub use iris_runtime::executor::{
        CallPlan, DEFAULT_APPROVAL_TTL, DEFAULT_MAX_PENDING_APPROVALS,
        DEFAULT_MAX_PENDING_APPROVALS_PER_RUN, DEFAULT_STOP_GRACE, ExecutorConfig, PlannedHook,
        ToolExecutorBuilder,
    };
}

// Permission policies and the approval a person gives.
#[doc = include_str!("docs/permissions.md")]
#[cfg(feature = "runtime")]
pub mod permissions {
    pub use iris_runtime::{
        ApprovalDecision, ApprovalRequest, CeilingReach, Permission, PermissionPolicy,
        PermissionRequest, PolicyCeiling, Rule, RulePolicy, arguments_hash,
    };
}

// Hooks at fixed events, from code, factories or commands.
#[doc = include_str!("docs/hooks.md")]
#[cfg(feature = "runtime")]
pub mod hooks {
    pub use iris_runtime::factories::HookFactory;
    pub use iris_runtime::hooks::{
        AfterVerdict, DEFAULT_HOOK_TIMEOUT, Denial, HookCode, HookResultView, IntoHook,
        IntoHookAnswer, MAX_HOOK_STDERR_BYTES, MAX_HOOK_STDOUT_BYTES, ModelAfterAnswer,
        ModelBeforeAnswer, Steer, Steered,
    };
    pub use iris_runtime::{
        AfterAnswer, AfterHook, BeforeAnswer, BeforeHook, CommandHook, Hook, HookEvent,
        HookFailure, HookInput, HookRegistration, InheritedGuards, RunHook, TreeGuards,
    };
}

// Observers of committed events, and progress reports.
#[doc = include_str!("docs/observe.md")]
#[cfg(feature = "runtime")]
pub mod observe {
    pub use iris_runtime::{
        HookOutcome, ObserverStats, ProgressListener, RunEvent, RunEventObserver, ToolProgress,
    };
}

// What lives as long as a run.
#[doc = include_str!("docs/ledger.md")]
#[cfg(feature = "runtime")]
pub use iris_runtime::ledger;

// Calls claimed and recorded, for runs that outlive their process.
#[doc = include_str!("docs/journal.md")]
#[cfg(feature = "runtime")]
pub use iris_runtime::journal;

// Oversized results saved whole and previewed.
#[doc = include_str!("docs/artifacts.md")]
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

// The built-in file tools.
#[doc = include_str!("docs/fs.md")]
#[cfg(feature = "runtime")]
pub use iris_tools::fs;

// Tools whose body is an external program.
#[doc = include_str!("docs/command.md")]
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

// `#[tool]`: a function as a tool.
#[doc = include_str!("docs/macros/tool.md")]
#[cfg(feature = "macros")]
pub use iris_macros::tool;

// `#[middleware]`: an async function wrapping every call.
#[doc = include_str!("docs/macros/middleware.md")]
#[cfg(feature = "macros")]
pub use iris_macros::middleware;

// `#[toolbox]`: a service's methods as tools.
#[doc = include_str!("docs/macros/toolbox.md")]
#[cfg(feature = "macros")]
pub use iris_macros::toolbox;

// Agents assembled from a YAML file.
#[doc = include_str!("docs/assembly.md")]
#[cfg(feature = "assembly")]
pub use iris_agent::assembly;

// Agents and the run loop.
#[doc = include_str!("docs/agent.md")]
#[cfg(feature = "runner")]
// A module, not `pub use iris_agent as agent`: the compiler names a crate re-exported
// whole by its own name (`iris::iris_agent::X` in every error), a module's items by
// the module's path (`iris::agent::X`).
pub mod agent {
    #[doc(inline)]
    pub use iris_agent::*;
}

// Runs kept in SQLite.
#[doc = include_str!("docs/sqlite.md")]
#[cfg(feature = "sqlite")]
// A module, as `agent` is, so that errors say `iris::sqlite::X`.
pub mod sqlite {
    #[doc(inline)]
    pub use iris_sqlite::*;
}

// The command line's commands, mounted over a host's agent.
#[doc = include_str!("docs/cli.md")]
#[cfg(feature = "cli")]
// A module, as `agent` is, so that errors say `iris::cli::X`.
pub mod cli {
    #[doc(inline)]
    pub use iris_cli::*;
}

// The testing kit.
#[doc = include_str!("docs/testing.md")]
#[cfg(feature = "testing")]
// A module, as `agent` is, so that errors say `iris::testing::X`.
pub mod testing {
    #[doc(inline)]
    pub use iris_testing::*;
}

// Runs on Restate.
#[doc = include_str!("docs/restate.md")]
#[cfg(feature = "restate")]
// A module, as `agent` is, so that errors say `iris::restate::X`.
pub mod restate {
    #[doc(inline)]
    pub use iris_restate::*;
}

// The model layer and its HTTP adapters.
#[doc = include_str!("docs/model.md")]
#[cfg(feature = "runtime")]
// A module, as `agent` is, so that errors say `iris::model::X`.
pub mod model {
    #[doc(inline)]
    pub use iris_model::*;
}

// Deferred discovery: `tool_search`, rankers, disclosure.
#[doc = include_str!("docs/discovery.md")]
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

    // A sentence encoder run in process.
    #[doc = include_str!("docs/discovery/encoder.md")]
    #[cfg(feature = "encoder")]
    pub mod encoder {
        pub use iris_encoder::{EncoderError, SentenceEncoder};
    }
}

// Traces in the OpenTelemetry GenAI conventions.
#[doc = include_str!("docs/telemetry.md")]
#[cfg(feature = "runtime")]
pub mod telemetry {
    // The conventions' version and the content switch. The attribute
    // names are the conventions' own (`gen_ai.request.model`, ...); the
    // span plumbing the Iris crates share stays theirs.
    pub use iris_runtime::telemetry::{
        CAPTURE_CONTENT_VAR, MAX_CONTENT_CHARS, SEMCONV_VERSION, capture_content, capturing_content,
    };
    #[cfg(feature = "otlp")]
    pub use iris_telemetry::{Otlp, TelemetryError, TelemetryGuard};
}

// MCP both ways, a module per role.
#[doc = include_str!("docs/mcp.md")]
#[cfg(feature = "mcp")]
// A module, as `agent` is, so that errors say `iris::mcp::client::X`; its
// role modules listed by name, so each name has one path.
pub mod mcp {
    #[doc(inline)]
    pub use iris_mcp::{McpError, client, gateway, server};
}

// Agent Skills.
#[doc = include_str!("docs/skills.md")]
#[cfg(feature = "skills")]
// A module, as `agent` is, so that errors say `iris::skills::X`.
pub mod skills {
    #[doc(inline)]
    pub use iris_skills::*;
}

// `#[hook_factory]`: a function configuration builds hooks from.
#[doc = include_str!("docs/macros/hook_factory.md")]
#[cfg(all(feature = "macros", feature = "runtime"))]
pub use iris_macros::hook_factory;

// `#[middleware_factory]`: the same for middleware.
#[doc = include_str!("docs/macros/middleware_factory.md")]
#[cfg(all(feature = "macros", feature = "runtime"))]
pub use iris_macros::middleware_factory;
