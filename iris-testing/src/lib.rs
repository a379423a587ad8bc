#![cfg_attr(docsrs, feature(doc_cfg))]
//! Test Iris agents and tools without a model or a network, and assert on
//! what happened.
//!
//! - [`ScriptedModel`]: answers each request with the next [`Turn`] of a
//!   script (text, calls, an error, with usage), keeps every request
//!   ([`RecordedRequest`]: what was offered and sent), and fails naming the
//!   turn when the script runs out. Streamed (the runner streams when an
//!   observer listens), each answer goes out in pieces cut where a seed
//!   says, as a provider's stream does, so a test with an observer runs the
//!   streaming path of the loop and of the observers.
//! - [`FnModel`]: a closure answers each request. [`AutoModel`]: calls every
//!   offered tool once with arguments made from its schema
//!   ([`arguments_for`]), a smoke test of a whole catalog.
//! - [`run_to_end`] drives a run, deciding each approval, and returns its
//!   [`Transcript`]: the model's steps, every call with its arguments and
//!   outcome, the approvals and their decisions. Its `assert_*` methods
//!   fail with a message that names what was expected and lists the calls
//!   made; [`Transcript::redacted`] is stable JSON for snapshots. With an
//!   [`EventLog`] among the executor's observers,
//!   [`Transcript::with_events`] adds the hooks that fired.
//! - [`ToolHarness`]: one tool at a time through the real executor, in a
//!   temporary workspace.
//! - With feature `cassettes` (the `iris` crate's `cassettes`),
//!   `CassetteServer` plays a provider's traffic back on loopback for the
//!   real adapters (strictly: a drifted request fails naming the first
//!   difference), or records it through to the provider;
//!   `block_real_model_requests` makes any request to another machine an
//!   error.
//! - [`conformance::check`] runs the scenarios every [`Model`] must pass
//!   (parallel calls, a refused call, the step limit, an approval, streamed
//!   and whole answers) against a host's own implementation.
//! - With feature `mcp`, `mcp::join` serves an executor over MCP in this
//!   process and connects a client to it, and `mcp::mock_server` makes a
//!   server from a list of tools: MCP tests without a process or a socket.
//!
//! ```
//! # use iris_testing::{ScriptedModel, Turn, run_to_end, approve_all};
//! # async fn demo(executor: iris_runtime::ToolExecutor) -> Result<(), Box<dyn std::error::Error>> {
//! use iris_agent::{Agent, AgentRunner, RunContext};
//! use serde_json::json;
//!
//! let model = ScriptedModel::new([
//!     Turn::call("read_file", json!({"path": "config.yaml"})),
//!     Turn::text("The log level is DEBUG."),
//! ]);
//! let agent = Agent::builder(executor).name("reader").build()?;
//! let runner = AgentRunner::new(agent, model);
//! let cx = RunContext::new(".", iris_core::RunId::new("run-1"));
//! let (_, transcript) = run_to_end(&runner, "What is the log level?", &cx, approve_all()).await?;
//! transcript
//!     .assert_called_with("read_file", &json!({"path": "config.yaml"}))
//!     .assert_answer_contains("DEBUG");
//! # Ok(()) }
//! ```

#[cfg(doc)]
use iris_model::Model;

mod assert;
mod auto;
#[cfg(feature = "cassettes")]
pub mod cassette;
mod chunks;
pub mod conformance;
mod drive;
mod events;
mod fn_model;
mod harness;
#[cfg(feature = "mcp")]
pub mod mcp;
mod request;
mod scripted;
pub mod store_contract;
mod transcript;

pub use assert::{Decided, DeniedBy, Trajectory, contains};
pub use auto::{AutoModel, arguments_for};
#[cfg(feature = "cassettes")]
pub use cassette::{Cassette, CassetteServer};
pub use drive::{answers, approve_all, decline_all, deny_all, run_answering, run_to_end};
pub use events::EventLog;
pub use fn_model::{FnModel, calling_then_reporting};
pub use harness::{HarnessError, ToolHarness};
pub use request::RecordedRequest;
pub use scripted::{ScriptedModel, Turn};
/// Makes every model request to another machine fail in this process, so
/// a test suite never reaches a real provider (or spends a key) by
/// mistake; cassettes and other loopback servers still answer.
#[cfg(feature = "cassettes")]
pub fn block_real_model_requests() {
    iris_model::http::block_remote_requests(true);
}

pub use transcript::{
    Approval, Asked, CallOutcome, CallRecord, ChildTranscript, HookFiring, Step, Transcript,
};
