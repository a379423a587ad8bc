//! The contract every run store keeps, checked against a store a host
//! makes: for a store of its own (Postgres, Redis, a cloud table) what the
//! two stores Iris ships are checked with, so that the durable guarantees
//! (one process drives a run, a write happens once, a decision is bound to
//! what waits) hold on it too.
//!
//! The host gives a function that makes a fresh, empty store with the
//! given [`Retention`]. Each rule makes one and drives real runs through
//! it: an agent with `price` (read-only) and `charge` (a write that waits
//! for approval), whose model asks for both.
//!
//! - a run id is created once;
//! - a decision is taken only for a call that waits;
//! - a write names the version it read and holds the lease: an older
//!   version or another holder is a conflict;
//! - a pause waits for its decision, in any process, and the decided run
//!   finishes without running a denied write;
//! - claims: a call is claimed once, a second claim learns it never
//!   recorded a result, then the result once recorded; a write of the
//!   state ends the step's claims; no claim without the lease;
//! - retention: finished runs are forgotten after their time, waiting
//!   ones only when nobody wrote them for the idle time;
//! - a removed run is gone.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use std::sync::Arc;
//!
//! use iris_agent::store::{MemoryStore, RunStore};
//!
//! let report = iris_testing::store_contract::check(&|retention| {
//!     Arc::new(MemoryStore::new().with_retention(retention)) as Arc<dyn RunStore>
//! })
//! .await;
//! report.assert_conformant();
//! # }
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use iris_agent::store::{Claimed, Retention, RunStatus, RunStore, StoreError};
use iris_agent::{Agent, AgentRunner, RunContext, RunError, RunOutcome};
use iris_core::{
    Capability, DynamicTool, RunId, ToolDefinition, ToolName, ToolResult, ToolUseBlock,
};
use iris_runtime::{ApprovalDecision, ToolExecutor, ToolRegistry};
use serde_json::json;

use crate::FnModel;
use crate::conformance::ConformanceReport;

/// What a host gives: a fresh, empty store keeping runs by `Retention`.
pub type MakeStore<'a> = &'a (dyn Fn(Retention) -> Arc<dyn RunStore> + Sync);

/// The rules, by name, in the order they are checked.
pub const RULES: [&str; 7] = [
    "a run id is created once",
    "decisions only for waiting calls",
    "writes name their version and hold the lease",
    "a pause waits for its decision",
    "claims",
    "retention",
    "removal",
];

/// Checks every rule against stores `make` makes; the report names each
/// rule that did not hold, with what went wrong.
pub async fn check(make: MakeStore<'_>) -> ConformanceReport {
    let mut report = ConformanceReport::default();
    for name in RULES {
        let outcome = match name {
            "a run id is created once" => created_once(make).await,
            "decisions only for waiting calls" => decisions_only_for_waiting(make).await,
            "writes name their version and hold the lease" => versioned_writes(make).await,
            "a pause waits for its decision" => pause_waits(make).await,
            "claims" => claims(make).await,
            "retention" => retention(make).await,
            _ => removal(make).await,
        };
        match outcome {
            Ok(()) => report.passed.push(name),
            Err(why) => report.failed.push((name, why)),
        }
    }
    report
}

/// A cashier: its model looks the price up and charges it, then says what
/// the results said; `charges` counts the charges that ran.
struct Cashier {
    runner: AgentRunner,
    charges: Arc<AtomicUsize>,
}

fn cashier(store: &Arc<dyn RunStore>, holder: &str) -> Result<Cashier, String> {
    let definition = |name: &'static str, description: &'static str, capability: Capability| {
        ToolDefinition::builder(ToolName::new(name).map_err(|e| e.to_string())?, description)
            .input_schema(json!({"type": "object", "properties": {}}))
            .capability(capability)
            .build()
            .map_err(|e| e.to_string())
    };
    let charges = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&charges);
    let mut registry = ToolRegistry::new();
    registry
        .register(DynamicTool::new(
            definition("price", "Look the price up.", Capability::ReadOnly)?,
            |_, _| async { ToolResult::text("1200") },
        ))
        .map_err(|e| e.to_string())?;
    registry
        .register(DynamicTool::new(
            definition("charge", "Charge the card.", Capability::Write)?,
            move |_, _| {
                counted.fetch_add(1, Ordering::SeqCst);
                async { ToolResult::text("charged 1200") }
            },
        ))
        .map_err(|e| e.to_string())?;
    let executor = ToolExecutor::builder(registry)
        .build()
        .map_err(|e| e.to_string())?;
    let agent = Agent::builder(executor)
        .name("cashier")
        .build()
        .map_err(|e| e.to_string())?;
    let model = FnModel::calling_then_reporting(vec![
        ToolUseBlock::new("c1", "price", json!({})),
        ToolUseBlock::new("c2", "charge", json!({})),
    ]);
    let runner = AgentRunner::new(agent, model)
        .with_store(Arc::clone(store))
        .with_holder(holder);
    Ok(Cashier { runner, charges })
}

/// A run of `cashier` started in a fresh folder, waiting on its charge.
async fn waiting_run(cashier: &Cashier, run: &str) -> Result<RunContext, String> {
    let cx = RunContext::new(std::env::temp_dir(), RunId::new(run));
    match cashier.runner.run("Charge the order.", &cx).await {
        Ok(RunOutcome::Waiting(_)) => Ok(cx),
        Ok(other) => Err(format!(
            "the charge should wait for approval; the run ended {}",
            crate::Transcript::of(&other).ended
        )),
        Err(e) => Err(format!("the run failed: {e}")),
    }
}

fn store_error<T: std::fmt::Debug>(
    outcome: Result<T, StoreError>,
    what: &str,
) -> Result<StoreError, String> {
    match outcome {
        Err(error) => Ok(error),
        Ok(value) => Err(format!("{what} should be refused; it gave {value:?}")),
    }
}

/// The state `store` keeps for `run`, which must be there.
async fn stored_state(
    store: &Arc<dyn RunStore>,
    run: &RunId,
) -> Result<iris_agent::RunState, String> {
    Ok(store
        .load(run)
        .await
        .map_err(failed("loading the run"))?
        .ok_or_else(|| format!("the run `{run}` should be stored"))?
        .state)
}

fn failed<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("{what} failed: {e}")
}

async fn created_once(make: MakeStore<'_>) -> Result<(), String> {
    let store = make(Retention::default());
    let a = cashier(&store, "replica-a")?;
    let cx = waiting_run(&a, "once").await?;
    let waiting = store
        .waiting(10)
        .await
        .map_err(failed("listing waiting runs"))?;
    if waiting != [cx.run_id().clone()] {
        return Err(format!(
            "the store should list the waiting run; it lists {waiting:?}"
        ));
    }
    match a.runner.run("Again.", &cx).await {
        Err(RunError::Store(StoreError::Exists { .. })) => Ok(()),
        Err(other) => Err(format!(
            "a second start should be `StoreError::Exists`; it was {other}"
        )),
        Ok(_) => Err("a second start of the same run id should be refused".to_owned()),
    }
}

async fn decisions_only_for_waiting(make: MakeStore<'_>) -> Result<(), String> {
    let store = make(Retention::default());
    let a = cashier(&store, "replica-a")?;
    let cx = waiting_run(&a, "decisions").await?;
    // `c1` (the price) ran; only `c2` (the charge) waits.
    let refused = store_error(
        store
            .decide(cx.run_id(), "c1", &ApprovalDecision::deny("no").into())
            .await,
        "a decision for a call that does not wait",
    )?;
    if !matches!(refused, StoreError::NotWaiting { .. }) {
        return Err(format!(
            "it should be `StoreError::NotWaiting`; it was {refused}"
        ));
    }
    Ok(())
}

async fn versioned_writes(make: MakeStore<'_>) -> Result<(), String> {
    let store = make(Retention::default());
    let a = cashier(&store, "replica-a")?;
    let cx = waiting_run(&a, "versions").await?;
    let run = cx.run_id();
    let state = stored_state(&store, run).await?;
    let taken = store
        .acquire(run, "replica-a", Duration::from_secs(60))
        .await
        .map_err(failed("taking the lease"))?;
    let save = |holder: &'static str, version: u64| {
        store.save(&state, RunStatus::Waiting, holder, version, Duration::ZERO)
    };
    let older = store_error(
        save("replica-a", taken.version.saturating_sub(1)).await,
        "a write naming an older version",
    )?;
    if !matches!(older, StoreError::Conflict { .. }) {
        return Err(format!(
            "an older version should be a conflict; it was {older}"
        ));
    }
    let foreign = store_error(
        save("replica-b", taken.version).await,
        "a write by a process that does not hold the lease",
    )?;
    if !matches!(foreign, StoreError::Conflict { .. }) {
        return Err(format!(
            "another holder's write should be a conflict; it was {foreign}"
        ));
    }
    save("replica-a", taken.version)
        .await
        .map_err(failed("the lease holder's write of the version it read"))?;
    Ok(())
}

async fn pause_waits(make: MakeStore<'_>) -> Result<(), String> {
    let store = make(Retention::default());
    let a = cashier(&store, "replica-a")?;
    let cx = waiting_run(&a, "paused").await?;
    let run = cx.run_id();
    match a.runner.resume_stored(&cx).await {
        Err(RunError::MissingDecision { .. }) => {}
        Err(other) => {
            return Err(format!(
                "a resume without a decision should be `RunError::MissingDecision`; it was {other}"
            ));
        }
        Ok(_) => return Err("a resume without a decision should keep waiting".to_owned()),
    }
    let status = store
        .load(run)
        .await
        .map_err(failed("loading the run"))?
        .map(|stored| stored.status);
    if status != Some(RunStatus::Waiting) {
        return Err(format!("the run should still wait; it is {status:?}"));
    }
    // Another process decides and finishes it.
    let b = cashier(&store, "replica-b")?;
    b.runner
        .decide(run, "c2", ApprovalDecision::deny("over budget"))
        .await
        .map_err(failed("recording the decision"))?;
    match b.runner.resume_stored(&cx).await {
        Ok(RunOutcome::Finished { text, .. }) if text.contains("over budget") => {}
        Ok(other) => {
            return Err(format!(
                "the decided run should finish with the denial in its answer; it ended {}",
                crate::Transcript::of(&other).ended
            ));
        }
        Err(e) => return Err(format!("the resume failed: {e}")),
    }
    let charged = a.charges.load(Ordering::SeqCst) + b.charges.load(Ordering::SeqCst);
    if charged != 0 {
        return Err(format!("a denied charge ran {charged} time(s)"));
    }
    Ok(())
}

async fn claims(make: MakeStore<'_>) -> Result<(), String> {
    let store = make(Retention::default());
    let b = cashier(&store, "replica-b")?;
    let cx = waiting_run(&b, "claims").await?;
    let run = cx.run_id();
    let unleased = store_error(
        store.claim_call(run, "x", "replica-b").await,
        "a claim without the lease",
    )?;
    if !matches!(unleased, StoreError::Conflict { .. }) {
        return Err(format!(
            "a claim without the lease should be a conflict; it was {unleased}"
        ));
    }
    let taken = store
        .acquire(run, "replica-b", Duration::from_secs(60))
        .await
        .map_err(failed("taking the lease"))?;
    let claim = || store.claim_call(run, "x", "replica-b");
    let first = claim().await.map_err(failed("the first claim"))?;
    if first != Claimed::New {
        return Err(format!("a first claim should be new; it was {first:?}"));
    }
    let again = claim().await.map_err(failed("a second claim"))?;
    if again != Claimed::Unfinished {
        return Err(format!(
            "a second claim before a result should learn it is unfinished; it was {again:?}"
        ));
    }
    let result = ToolResult::text("done");
    store
        .record_call(run, "x", &result)
        .await
        .map_err(failed("recording the result"))?;
    let ran = claim().await.map_err(failed("a claim after the result"))?;
    if ran != Claimed::Ran(result) {
        return Err(format!(
            "a claim after the result should return it; it was {ran:?}"
        ));
    }
    // A write of the state holds the step's results: claims end with it.
    let state = stored_state(&store, run).await?;
    store
        .save(
            &state,
            RunStatus::Waiting,
            "replica-b",
            taken.version,
            Duration::ZERO,
        )
        .await
        .map_err(failed("writing the state"))?;
    store
        .acquire(run, "replica-b", Duration::from_secs(60))
        .await
        .map_err(failed("taking the lease again"))?;
    let after = claim().await.map_err(failed("a claim after the write"))?;
    if after != Claimed::New {
        return Err(format!(
            "a write of the state should end the step's claims; a claim then was {after:?}"
        ));
    }
    Ok(())
}

async fn retention(make: MakeStore<'_>) -> Result<(), String> {
    let briefly = Retention {
        finished: Duration::ZERO,
        idle: Duration::from_secs(3600),
        sweep_every: Duration::ZERO,
    };
    let store = make(briefly);
    let a = cashier(&store, "replica-a")?;
    let waiting = waiting_run(&a, "waits").await?;
    let finished = waiting_run(&a, "finished").await?;
    a.runner
        .decide(finished.run_id(), "c2", ApprovalDecision::deny("no"))
        .await
        .map_err(failed("recording the decision"))?;
    a.runner
        .resume_stored(&finished)
        .await
        .map_err(failed("finishing the run"))?;
    let present = |store: Arc<dyn RunStore>, run: RunId| async move {
        store
            .load(&run)
            .await
            .map(|stored| stored.is_some())
            .map_err(|e| format!("loading `{run}` failed: {e}"))
    };
    // The next run created sweeps: the finished run goes, the waiting one stays.
    waiting_run(&a, "third").await?;
    if present(Arc::clone(&store), finished.run_id().clone()).await? {
        return Err(
            "a finished run past its retention should be forgotten when a run is created"
                .to_owned(),
        );
    }
    if !present(Arc::clone(&store), waiting.run_id().clone()).await? {
        return Err("a waiting run within its idle time should be kept".to_owned());
    }
    let forget = Retention {
        finished: Duration::ZERO,
        idle: Duration::ZERO,
        sweep_every: Duration::ZERO,
    };
    let store = make(forget);
    let b = cashier(&store, "replica-b")?;
    let idle = waiting_run(&b, "idle").await?;
    waiting_run(&b, "next").await?;
    if present(store, idle.run_id().clone()).await? {
        return Err("a pause nobody wrote within the idle time should be forgotten".to_owned());
    }
    Ok(())
}

async fn removal(make: MakeStore<'_>) -> Result<(), String> {
    let store = make(Retention::default());
    let a = cashier(&store, "replica-a")?;
    let cx = waiting_run(&a, "removed").await?;
    store
        .remove(cx.run_id())
        .await
        .map_err(failed("removing the run"))?;
    let left = store
        .load(cx.run_id())
        .await
        .map_err(failed("loading the run"))?;
    if left.is_some() {
        return Err("a removed run should be gone".to_owned());
    }
    Ok(())
}
