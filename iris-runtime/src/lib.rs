#![cfg_attr(docsrs, feature(doc_cfg))]
//! The Iris runtime: the registry that owns tools, and the executor that
//! takes a model's tool calls through resolution, one parse, permission
//! (pausing for a person when asked), hooks, middleware, the side-effect
//! gate and the body, and hands back one structured outcome per call.
//!
//! Around it: [`hooks`] (`tool.before`, `tool.after` and run events, from
//! code, factories or commands), [`observers`], [`ledger`] (the one owner
//! of what lives as long as a run, with one bound and one idle timeout),
//! [`artifacts`] (oversized results saved whole and previewed, published
//! copies), `fs` (the built-in `read_file`, `write_file` and `edit_file`,
//! confined to the workspace, with read-before-edit; feature `fs-tools`),
//! `discovery` (deferred tools behind `tool_search`, a local ranker,
//! budgeted disclosure, and the remote Decision backend under feature
//! `decision`), `runner` (agents built in code, the run loop and the model
//! layer with its adapters; features `runner`, `openai`, `anthropic`),
//! `assembly` (agents from YAML files; feature `assembly`) and `mcp` (MCP
//! both ways; feature `mcp`).
//!
//! Most users depend on the `iris` facade, which re-exports each part as a
//! module of its own (`iris::hooks`, `iris::agent`, `iris::mcp`, ...) and
//! keeps the day-one names at its root.

pub mod artifacts;
#[cfg(feature = "assembly")]
pub mod assembly;
#[cfg(feature = "discovery")]
pub mod discovery;
#[cfg(any(feature = "assembly", feature = "mcp"))]
mod duration;
mod echo;
mod error;
pub mod executor;
pub mod factories;
#[cfg(feature = "fs-tools")]
pub mod fs;
pub mod hooks;
pub mod ledger;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod model;
#[cfg(unix)]
mod nonblocking;
pub mod observers;
mod progress;
mod registry;
#[cfg(feature = "runner")]
pub mod runner;
mod temp_name;
#[cfg(any(
    feature = "decision",
    feature = "openai",
    feature = "anthropic",
    feature = "mcp"
))]
mod tls;
#[cfg(any(feature = "assembly", feature = "decision"))]
mod yaml;

pub use artifacts::ArtifactStore;
pub use error::RuntimeError;
pub use executor::permissions::{
    ApprovalDecision, ApprovalRequest, Permission, PermissionPolicy, PermissionRequest, Rule,
    RulePolicy, arguments_hash,
};
pub use executor::{ExecutorConfig, ToolExecutor, ToolExecutorBuilder, ToolOutcome};
pub use hooks::{
    AfterAnswer, AfterHook, BeforeAnswer, BeforeHook, CommandHook, Hook, HookEvent, HookFailure,
    HookInput, HookRegistration, RunHook,
};
pub use observers::{ObserverStats, RunEvent, RunEventObserver};
pub use progress::{ProgressListener, ToolProgress};
pub use registry::{SharedRegistry, ToolRegistry, ToolRegistryView};
pub use tokio_util::sync::CancellationToken;

/// What `#[hook_factory]` and `#[middleware_factory]` expansions call. Not a
/// public API.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "assembly")]
    pub use crate::assembly::__private::*;
    pub use crate::factories::{
        HookFactory, MiddlewareFactory, arc_middleware, options_schema, parse_options,
        parse_options_struct,
    };
    pub use crate::hooks::Hook;
    #[cfg(not(feature = "assembly"))]
    pub use crate::{
        __iris_no_catalog_factory as catalog_hook_factory,
        __iris_no_catalog_factory as catalog_middleware_factory,
    };
}
