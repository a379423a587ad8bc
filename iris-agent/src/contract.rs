//! Promises checked when the crate compiles: what a host shares between
//! tasks is `Send + Sync`, and a run's futures are `Send`, so a host can
//! hand them to `tokio::spawn`. A change that breaks one fails here, in
//! this crate, rather than in a host's code.

use iris_runtime::{ApprovalDecision, Reply, ToolExecutor};

use crate::{Agent, AgentRunner, RunContext, RunState, Skills};

#[expect(
    dead_code,
    reason = "never called: it holds the promises for the compiler to check"
)]
fn promises(runner: &AgentRunner, state: RunState, cx: &RunContext) {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>(_: T) {}
    send_sync::<AgentRunner>();
    send_sync::<Agent>();
    send_sync::<ToolExecutor>();
    send_sync::<Skills>();
    send(runner.run("a task", cx));
    send(runner.resume(state, Vec::<(String, Reply)>::new(), cx));
    send(runner.resume_stored(cx));
    send(runner.decide(cx.run_id(), "c1", ApprovalDecision::deny("no")));
}
