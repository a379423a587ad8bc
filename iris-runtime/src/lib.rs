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
//! copies) and [`config`] (configuration files read bounded, with line and
//! column in every error).
//!
//! The wings sit in crates above this one, and this crate cannot name them:
//! the model layer (`iris-sdk-model`) beside it, the built-in file tools and
//! discovery (`iris-sdk-tools`), MCP (`iris-sdk-mcp`) and the agent
//! (`iris-sdk-agent`). Most users depend on the `iris` facade, which
//! re-exports each part as a module of its own (`iris::hooks`,
//! `iris::agent`, `iris::mcp`, ...) and keeps the day-one names at its root.

pub mod artifacts;
mod beneath;
pub mod config;
mod digest;
mod echo;
mod error;
pub mod executor;
pub mod factories;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod hooks;
pub mod journal;
pub mod ledger;
#[cfg(unix)]
mod nonblocking;
pub mod observers;
// The program runner behind command hooks and command tools, shared with
// the built-in tools crate. Not a public API.
#[doc(hidden)]
pub mod process;
mod progress;
pub mod question;
mod registry;
pub mod telemetry;
mod temp_file;

pub use artifacts::ArtifactStore;
pub use digest::arguments_hash;
pub use error::RuntimeError;
pub use executor::permissions::{
    ApprovalDecision, ApprovalRequest, CeilingReach, Permission, PermissionPolicy,
    PermissionRequest, PolicyCeiling, Rule, RulePolicy, waiting_words,
};
pub use executor::{ExecutorConfig, ToolExecutor, ToolExecutorBuilder, ToolOutcome};
pub use hooks::{
    AfterAnswer, AfterHook, BeforeAnswer, BeforeHook, CommandHook, Hook, HookEvent, HookFailure,
    HookInput, HookOutcome, HookRegistration, InheritedGuards, RunHook, TreeGuards,
};
pub use observers::{ObserverStats, RunEvent, RunEventObserver};
pub use progress::{ProgressListener, ToolProgress};
pub use question::{QuestionReply, QuestionRequest, Reply};
pub use registry::{SharedRegistry, ToolRegistry, ToolRegistryView, WeakSharedRegistry};
pub use tokio_util::sync::CancellationToken;

/// What `#[hook_factory]` and `#[middleware_factory]` expansions call. Not a
/// public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::factories::{
        HookFactory, MiddlewareFactory, arc_middleware, options_schema, parse_options,
        parse_options_struct,
    };
    pub use crate::hooks::Hook;
}

/// What the Iris crates above this one share with it (the built-in tools,
/// MCP, the agent). Not a public API: anything here may change in any
/// release.
#[doc(hidden)]
pub mod __wings {
    pub use crate::__iris_debug_as_display as debug_as_display;
    pub use crate::beneath::{BeneathError, HardLinks, open_beneath, open_in};
    pub use crate::digest::hex;
    pub use crate::echo::{ECHO_CHARS, for_person, hides, shorten, shorten_to};
    pub use crate::executor::pending::CapWaitingPerRun;
    #[cfg(unix)]
    pub use crate::nonblocking::clear_nonblocking;
    pub use crate::temp_file::{
        FileStamp, TEMP_SUFFIX, create_temp, rename_into_place, temp_name, temp_owner,
    };
}
