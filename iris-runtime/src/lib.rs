//! The Iris runtime: the registry that owns tools, and the executor that
//! takes a model's tool calls through resolution, one parse, permission
//! (pausing for a person when asked), hooks, middleware, the side-effect
//! gate and the body, and hands back one structured outcome per call.
//!
//! Around it: [`artifacts`] (oversized results saved whole and previewed,
//! published copies), [`fs`] (the built-in `read_file`, `write_file` and
//! `edit_file`, confined to the workspace, with read-before-edit; feature
//! `fs-tools`), and [`discovery`] (deferred tools behind `tool_search`, a
//! local ranker, budgeted disclosure, and the remote Decision backend under
//! feature `decision`).
//!
//! Most users depend on the `iris` facade, which re-exports this crate as
//! `iris::runtime` and its main types at the top level.

pub mod artifacts;
#[cfg(feature = "assembly")]
pub mod assembly;
#[cfg(feature = "discovery")]
pub mod discovery;
#[cfg(any(feature = "assembly", feature = "mcp"))]
mod duration;
mod error;
pub mod executor;
#[cfg(feature = "fs-tools")]
pub mod fs;
pub mod hooks;
pub mod ledger;
#[cfg(feature = "mcp")]
pub mod mcp;
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

pub use artifacts::ArtifactStore;
pub use error::RuntimeError;
pub use executor::permissions::{
    ApprovalDecision, ApprovalRequest, Permission, PermissionPolicy, PermissionRequest, Rule,
    RulePolicy, arguments_hash,
};
pub use executor::{ExecutorConfig, ToolExecutor, ToolExecutorBuilder, ToolOutcome};
pub use hooks::{
    AfterAnswer, AfterHook, BeforeAnswer, BeforeHook, CommandHook, Hook, HookEvent, HookFactories,
    HookFailure, HookInput, HookRegistration, RunHook,
};
pub use observers::{ObserverStats, RunEvent, RunEventObserver};
pub use progress::{ProgressListener, ToolProgress};
pub use registry::{SharedRegistry, ToolRegistry, ToolRegistryView};
pub use tokio_util::sync::CancellationToken;
