#![cfg_attr(docsrs, feature(doc_cfg))]
//! Iris runs on [Restate](https://restate.dev): an agent's run loop as a
//! durable workflow, so that runs outlive the process that drives them and
//! move between replicas on many machines.
//!
//! An [`AgentWorkflow`] serves one agent as a Restate workflow keyed by run
//! id, with three handlers:
//! - `run` (`{"task": ".."}`): the agent loop. Each model answer is one
//!   journal entry; the calls of a step that change something are claimed
//!   together in one entry when the first of them reaches its body, and
//!   their results kept together in one after the step's last call, so a
//!   step is three entries however many writes it makes; the run's state
//!   is the workflow's state at each step boundary. When the
//!   endpoint dies, Restate replays the invocation on another replica: the
//!   kept answers and results come back without running again, a call cut
//!   off inside its body is reported to the model as interrupted (never run
//!   twice), and calls of read-only and idempotent tools run again. The
//!   answer is a [`RunReport`].
//! - `decide` (`{"call_id": "..", "decision": ..}`): a person's decision on
//!   a waiting call, from any replica or a plain HTTP call to Restate's
//!   ingress. It is checked against the request that waits (an approval
//!   names its `approval_id`, which binds the run, the call, the tool and
//!   the arguments' hash) and handed to the run as a durable promise.
//! - `status`: where the run stands and what waits ([`RunView`]).
//!
//! The loop is the one [`AgentRunner`] runs in process and on a run store:
//! the engine is a choice at construction ([`AgentRunner::on_engine`]).
//!
//! ```no_run
//! # async fn run(runner: iris_agent::AgentRunner) -> std::io::Result<()> {
//! use iris_restate::{AgentWorkflow, restate_sdk};
//!
//! let workflow = AgentWorkflow::new(runner, "/srv/workspace");
//! let endpoint = restate_sdk::endpoint::Endpoint::builder().bind(workflow).build();
//! let listener = tokio::net::TcpListener::bind("0.0.0.0:9080").await?;
//! iris_restate::serve(endpoint, listener, std::future::pending()).await;
//! # Ok(())
//! # }
//! ```
//!
//! [`serve`] rather than the SDK's own `HttpServer`: it turns off Nagle's
//! algorithm on each connection, without which many journal entries wait
//! up to 40 ms for a delayed acknowledgement.
//!
//! Then register the endpoint with Restate (`restate deployments register
//! http://host:9080`) and start runs through its ingress:
//! `POST /{agent}/{run_id}/run/send` with `{"task": ".."}`.

mod engine;
mod handlers;
mod keys;
mod serve;
mod service;
mod wire;

use std::path::PathBuf;
use std::time::Duration;

pub use engine::RestateFailure;
pub use restate_sdk;
pub use serve::serve;
pub use wire::{Decide, Ended, RunReport, RunView, StartRun};

#[cfg(doc)]
use iris_agent::AgentRunner;

/// One agent served as a Restate workflow, bound to an endpoint and
/// served with [`serve`].
pub struct AgentWorkflow {
    name: String,
    runner: iris_agent::AgentRunner,
    workspace: PathBuf,
    retry: Option<Retry>,
}

/// How soon Restate tries an invocation again after its endpoint failed.
#[derive(Debug, Clone, Copy)]
struct Retry {
    initial: Duration,
    max: Duration,
}

impl std::fmt::Debug for AgentWorkflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentWorkflow")
            .field("name", &self.name)
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

impl AgentWorkflow {
    /// `runner`'s agent and model as a workflow named after the agent (its
    /// name with every character Restate does not take in a service name
    /// replaced by `_`), with the file tools rooted at `workspace`. The
    /// runner's store, if any, is not used: Restate keeps the runs.
    pub fn new(runner: iris_agent::AgentRunner, workspace: impl Into<PathBuf>) -> Self {
        Self {
            name: service::name_for(runner.agent().name()),
            runner,
            workspace: workspace.into(),
            retry: None,
        }
    }

    /// Serves the workflow under `name` instead.
    ///
    /// # Errors
    /// [`NameError`] when Restate would not take `name`: it must start
    /// with a letter (or `_` and a letter or digit) and hold only letters,
    /// digits, `_`, `-` and `.`.
    pub fn named(mut self, name: impl Into<String>) -> Result<Self, NameError> {
        let name = name.into();
        if !service::is_valid_name(&name) {
            return Err(NameError { name });
        }
        self.name = name;
        Ok(self)
    }

    /// Asks Restate to try a run again `initial` after its endpoint failed
    /// (a crash, a replica that went away), doubling up to `max`; by default
    /// the server's own policy.
    #[must_use]
    pub fn retry_after(mut self, initial: Duration, max: Duration) -> Self {
        self.retry = Some(Retry { initial, max });
        self
    }

    /// The name Restate knows the workflow by.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A workflow name Restate would not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{name}` cannot name a Restate service: use letters, digits, `_`, `-` and `.`, starting with a letter"
)]
pub struct NameError {
    /// The name.
    pub name: String,
}
