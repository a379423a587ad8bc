//! The behaviour tests of the `iris` package, one module per area, built
//! as one test binary: linking one binary instead of one per file saves
//! most of the time `cargo test` spends building them.
//!
//! `bounded_state` and `definition_alloc` count heap allocations with a
//! global allocator, so each keeps a binary of its own.
#![allow(
    clippy::expect_used,
    clippy::needless_pass_by_value,
    clippy::panic,
    clippy::unused_async,
    clippy::unwrap_used,
    dead_code,
    reason = "tests fail loudly (unwrap, expect, panic), and tools written for them take what `#[tool]` hands them"
)]

mod files;
mod support;

mod artifact_escapes;
mod artifacts;
mod discovery;
mod discovery_ranking;
mod dyn_tool;
mod examples;
mod executor_config;
mod fs_confinement;
mod fs_edit;
mod fs_lost_updates;
mod fs_messages;
mod hooks_under_attack;
/// Tools expanded next to names that shadow what generated code uses.
pub mod hygiene;
mod journal_steps;
mod patch_args;
mod runtime_approval;
mod runtime_approval_binding;
mod runtime_command_hooks;
mod runtime_concurrency;
mod runtime_errors;
mod runtime_observers_registry;
mod runtime_pipeline;
mod runtime_stop;
mod tool_macro;
mod toolbox;
