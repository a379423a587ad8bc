//! The test suite's checks that need heavy crates, one module per area,
//! built as one binary. `discovery_decision` sets an environment variable
//! and keeps a binary of its own.
#![allow(
    clippy::expect_used,
    clippy::needless_pass_by_value,
    clippy::panic,
    clippy::too_many_lines,
    clippy::unwrap_used,
    dead_code,
    reason = "tests fail loudly (unwrap, expect, panic), and tools written for them take what `#[tool]` hands them"
)]
#[path = "../../files/mod.rs"]
mod files;
/// The pinned peers, installed on first use (one copy for every module).
#[path = "../../support/installed.rs"]
mod installed;
/// A loopback HTTP server for the model adapters' tests.
#[path = "loopback.rs"]
mod loopback;
#[path = "../../support/mod.rs"]
mod support;

mod agent_code;
mod agent_schema_props;
mod artifacts_object_store;
mod assembly;
mod budgets;
mod cassettes;
mod children;
mod command_tools;
mod conformance;
mod discovery_encoder;
mod error_paths;
mod file_fence;
mod fs_edit_props;
mod fuzz_seeds;
mod hostile_inputs;
mod image_results;
mod model_anthropic;
mod model_dialects;
mod model_gemini;
mod model_hooks;
mod model_hostile;
mod model_image_turns;
mod model_openai;
mod model_streams;
mod openai_wire;
mod questions;
mod run_control_trust;
mod runner;
mod schema;
mod shop;
mod skill_runs;
mod skills;
mod strict_inputs;
mod testing_kit;
mod typed_output;
