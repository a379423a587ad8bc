//! Runs that outlive their process, on the SQLite store (and the same
//! rules on the in-memory one): a run that waits is approved and finished
//! by another OS process; a replica that finds another driving a run is
//! told so; a run whose process died between the model's answer and its
//! results is taken over without running a write twice.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "tests fail by panicking; the second process reports on stdout"
)]

#[path = "durable/model.rs"]
#[allow(
    dead_code,
    reason = "the runs here delegate to no child agent, so they need no lead"
)]
mod model;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use iris::agent::store::{Claimed, MemoryStore, RunStatus, RunStore, StoreError};
use iris::agent::{Agent, AgentRunner, RunContext, RunError, RunOutcome};
use iris::model::Message;
use iris::serde_json::json;
use iris::sqlite::SqliteStore;
use iris::testing::FnModel;
use iris::{ApprovalDecision, RunId, ToolExecutor, ToolRegistry, ToolUseBlock};
use model::history_model;

/// The process-wide count of `charge` bodies that ran.
static CHARGES: AtomicUsize = AtomicUsize::new(0);
static LOOKUPS: AtomicUsize = AtomicUsize::new(0);

/// Charge a card: a write, so it waits for approval and never runs twice.
#[iris::tool(write)]
fn charge(
    /// Cents to charge.
    cents: u64,
    #[ctx] cx: &iris::ToolContext,
) -> Result<String, std::io::Error> {
    use std::io::Write as _;
    CHARGES.fetch_add(1, Ordering::SeqCst);
    // The side effect other processes can count: one line per charge.
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(cx.workspace_root().join("charges.txt"))?;
    writeln!(file, "{cents}")?;
    Ok(format!("charged {cents}"))
}

/// Look up a price: read-only, so safe to run again.
#[iris::tool(read_only)]
fn price() -> u64 {
    LOOKUPS.fetch_add(1, Ordering::SeqCst);
    1200
}

/// A SQLite store in a file of `dir`.
fn sqlite_in(dir: &Path) -> Arc<dyn RunStore> {
    SqliteStore::open(dir.join("runs.db")).unwrap().into()
}

/// The calls every process's model makes for the person's request.
fn cashier() -> FnModel {
    history_model(vec![
        ToolUseBlock::new("c1", "price", json!({})),
        ToolUseBlock::new("c2", "charge", json!({"cents": 1200})),
    ])
}

fn runner(store: impl Into<Arc<dyn RunStore>>, holder: &str) -> AgentRunner {
    let mut registry = ToolRegistry::new();
    registry.register(Charge).unwrap();
    registry.register(Price).unwrap();
    let agent = Agent::builder(ToolExecutor::builder(registry).build().unwrap())
        .name("cashier")
        .build()
        .unwrap();
    AgentRunner::new(agent, cashier())
        .with_store(store)
        .with_holder(holder)
}

fn charges(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("charges.txt")).map_or(0, |text| text.lines().count())
}

/// The second process of `another_process_approves_and_finishes`: run when
/// the test binary is started with `IRIS_DURABLE_REPLICA` set.
async fn replica_b(db: &str, dir: &str, run_id: &str) {
    let runner = runner(SqliteStore::open(db).unwrap(), "replica-b");
    let run_id = RunId::new(run_id);
    let stored = runner
        .store()
        .unwrap()
        .load(&run_id)
        .await
        .unwrap()
        .unwrap();
    for request in stored.state.approvals() {
        runner
            .decide(
                &run_id,
                &request.call_id,
                ApprovalDecision::approve(request),
            )
            .await
            .unwrap();
    }
    let outcome = runner
        .resume_stored(&RunContext::new(dir, run_id))
        .await
        .unwrap();
    let RunOutcome::Finished { text, .. } = outcome else {
        panic!("replica B finishes the run: {outcome:?}");
    };
    println!("REPLICA_B_ANSWER={text}");
}

#[tokio::test]
async fn another_process_approves_and_finishes() {
    if let Ok(args) = std::env::var("IRIS_DURABLE_REPLICA") {
        let args: Vec<&str> = args.split('\n').collect();
        replica_b(args[0], args[1], args[2]).await;
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let run_id = RunId::new("cross-process");
    let a = runner(SqliteStore::open(&db).unwrap(), "replica-a");
    let cx = RunContext::new(dir.path(), run_id.clone());
    let outcome = a.run("Charge the order.", &cx).await.unwrap();
    let RunOutcome::Waiting(state) = outcome else {
        panic!("the charge waits for approval: {outcome:?}");
    };
    assert_eq!(state.waiting.len(), 1);
    assert_eq!(charges(dir.path()), 0);
    drop(a);

    // Replica B: this test binary again, as another OS process.
    let replica = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "another_process_approves_and_finishes",
            "--exact",
            "--nocapture",
        ])
        .env(
            "IRIS_DURABLE_REPLICA",
            format!("{}\n{}\n{}", db.display(), dir.path().display(), run_id),
        )
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&replica.stdout);
    assert!(
        replica.status.success(),
        "replica B failed: {printed}\n{}",
        String::from_utf8_lossy(&replica.stderr)
    );
    assert!(
        printed.contains("REPLICA_B_ANSWER=1200 | charged 1200"),
        "{printed}"
    );
    assert_eq!(charges(dir.path()), 1, "the charge happened once");

    // The run is finished for everyone: replica A cannot drive it again.
    let a = runner(SqliteStore::open(&db).unwrap(), "replica-a");
    let err = a.resume_stored(&cx).await.unwrap_err();
    assert!(
        matches!(err, RunError::Store(StoreError::Finished { .. })),
        "{err}"
    );
    assert_eq!(charges(dir.path()), 1);
}

/// Two replicas race to resume the same waiting run: one drives it, the
/// other is told who does.
async fn one_replica_drives(store_a: Arc<dyn RunStore>, store_b: Arc<dyn RunStore>) {
    let dir = tempfile::tempdir().unwrap();
    let run_id = RunId::new("raced");
    let cx = RunContext::new(dir.path(), run_id.clone());
    let a = runner(Arc::clone(&store_a), "replica-a");
    let RunOutcome::Waiting(state) = a.run("Charge the order.", &cx).await.unwrap() else {
        panic!("waits");
    };
    // A holds the run now, as a replica in the middle of a step would.
    let held = store_a
        .acquire(&run_id, "replica-a", Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(held.status, RunStatus::Waiting);
    let b = runner(store_b, "replica-b");
    b.decide(
        &run_id,
        "c2",
        ApprovalDecision::approve(state.approvals().next().expect("a call waits for approval")),
    )
    .await
    .unwrap();
    let err = b.resume_stored(&cx).await.unwrap_err();
    let RunError::Store(StoreError::Held { holder, .. }) = &err else {
        panic!("B is told another replica drives the run: {err}");
    };
    assert_eq!(holder, "replica-a");
    assert!(err.to_string().contains("replica-a"), "{err}");
    assert_eq!(charges(dir.path()), 0, "B ran nothing");
    // A drives it to the end with B's recorded decision.
    let outcome = a.resume_stored(&cx).await.unwrap();
    assert!(
        matches!(outcome, RunOutcome::Finished { .. }),
        "{outcome:?}"
    );
    assert_eq!(charges(dir.path()), 1);
}

#[tokio::test]
async fn racing_replicas_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    one_replica_drives(
        SqliteStore::open(&db).unwrap().into(),
        SqliteStore::open(&db).unwrap().into(),
    )
    .await;
}

#[tokio::test]
async fn racing_replicas_in_memory() {
    let store: Arc<dyn RunStore> = Arc::new(MemoryStore::new());
    one_replica_drives(Arc::clone(&store), store).await;
}

/// Two charges in one step: each waits for its own decision.
fn two_charges(store: Arc<dyn RunStore>) -> AgentRunner {
    let mut registry = ToolRegistry::new();
    registry.register(Charge).unwrap();
    let agent = Agent::builder(ToolExecutor::builder(registry).build().unwrap())
        .name("cashier")
        .build()
        .unwrap();
    let model = history_model(vec![
        ToolUseBlock::new("c1", "charge", json!({"cents": 1200})),
        ToolUseBlock::new("c2", "charge", json!({"cents": 300})),
    ]);
    AgentRunner::new(agent, model)
        .with_store(store)
        .with_holder("worker")
}

/// A worker that resumes whatever waits, polling while a person decides
/// one call at a time: a resume runs the calls that have their decision and
/// leaves the rest waiting, with nothing lost; a resume that finds no
/// decision at all runs nothing and keeps the run as it was; the run
/// finishes with both, each charged once.
async fn early_resumes_keep_decisions(store: Arc<dyn RunStore>) {
    let dir = tempfile::tempdir().unwrap();
    let run_id = RunId::new("polled");
    let cx = RunContext::new(dir.path(), run_id.clone());
    let worker = two_charges(Arc::clone(&store));
    let RunOutcome::Waiting(state) = worker.run("Charge both.", &cx).await.unwrap() else {
        panic!("waits");
    };
    let approve = |i: usize| ApprovalDecision::Approve {
        approval_id: state
            .approvals()
            .nth(i)
            .expect("a call waits for approval")
            .approval_id
            .clone(),
    };
    worker.decide(&run_id, "c1", approve(0)).await.unwrap();
    let outcome = worker.resume_stored(&cx).await.unwrap();
    let RunOutcome::Waiting(partial) = outcome else {
        panic!("c2 still waits: {outcome:?}");
    };
    assert_eq!(partial.waiting.len(), 1);
    assert_eq!(partial.waiting[0].id(), "c2");
    assert_eq!(partial.finished.len(), 1, "c1 ran and is kept");
    assert_eq!(charges(dir.path()), 1);
    // Polling with nothing decided runs nothing and wears nothing away.
    for _ in 0..2 {
        let err = worker.resume_stored(&cx).await.unwrap_err();
        assert!(
            matches!(&err, RunError::MissingDecision { call_id } if call_id == "c2"),
            "{err}"
        );
        let kept = store.load(&run_id).await.unwrap().unwrap();
        assert_eq!(kept.status, RunStatus::Waiting);
        assert_eq!(kept.state, partial);
    }
    worker.decide(&run_id, "c2", approve(1)).await.unwrap();
    let outcome = worker.resume_stored(&cx).await.unwrap();
    let RunOutcome::Finished { text, .. } = outcome else {
        panic!("finishes: {outcome:?}");
    };
    assert_eq!(text, "charged 1200 | charged 300");
    assert_eq!(charges(dir.path()), 2);
}

#[tokio::test]
async fn early_resumes_keep_decisions_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    early_resumes_keep_decisions(sqlite_in(dir.path())).await;
}

#[tokio::test]
async fn early_resumes_keep_decisions_in_memory() {
    early_resumes_keep_decisions(Arc::new(MemoryStore::new())).await;
}

/// The store the `lease_holder` tool reads.
static PEEKED_STORE: std::sync::OnceLock<Arc<dyn RunStore>> = std::sync::OnceLock::new();

/// Who holds the lease of the run this call belongs to, and for how long
/// from now, in seconds.
#[iris::tool(read_only)]
async fn lease_holder(#[ctx] cx: &iris::ToolContext) -> String {
    let stored = PEEKED_STORE
        .get()
        .unwrap()
        .load(cx.run_id())
        .await
        .unwrap()
        .unwrap();
    let lease = stored.lease.unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let left = (u128::from(lease.until_ms).saturating_sub(now)) / 1000;
    format!("{} for {left}s", lease.holder)
}

/// The store the `refund` tool decides in.
static REFUND_STORE: std::sync::OnceLock<Arc<dyn RunStore>> = std::sync::OnceLock::new();

/// A write whose body tries to change the decision it runs under (call
/// `c1`): the store must refuse while the run is under way.
#[iris::tool(write)]
async fn refund(#[ctx] cx: &iris::ToolContext) -> String {
    let late = REFUND_STORE
        .get()
        .unwrap()
        .decide(
            cx.run_id(),
            "c1",
            &ApprovalDecision::deny("changed my mind").into(),
        )
        .await;
    match late {
        Ok(()) => "refunded; a late decision was taken".to_owned(),
        Err(err) => format!("refunded; a late decision was refused: {err}"),
    }
}

#[tokio::test]
async fn no_decision_is_taken_while_the_decided_call_runs() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_in(dir.path());
    assert!(
        REFUND_STORE.set(Arc::clone(&store)).is_ok(),
        "one test sets it"
    );
    let mut registry = ToolRegistry::new();
    registry.register(Refund).unwrap();
    let agent = Agent::builder(ToolExecutor::builder(registry).build().unwrap())
        .name("refunds")
        .build()
        .unwrap();
    let model = history_model(vec![ToolUseBlock::new("c1", "refund", json!({}))]);
    let runner = AgentRunner::new(agent, model)
        .with_store(Arc::clone(&store))
        .with_holder("worker");
    let run_id = RunId::new("refund-midway");
    let cx = RunContext::new(dir.path(), run_id.clone());
    let RunOutcome::Waiting(state) = runner.run("Refund it.", &cx).await.unwrap() else {
        panic!("waits");
    };
    let approval_id = state
        .approvals()
        .next()
        .expect("a call waits for approval")
        .approval_id
        .clone();
    runner
        .decide(&run_id, "c1", ApprovalDecision::Approve { approval_id })
        .await
        .unwrap();
    let RunOutcome::Finished { text, .. } = runner.resume_stored(&cx).await.unwrap() else {
        panic!("finishes");
    };
    assert!(
        text.starts_with("refunded; a late decision was refused")
            && text.contains("the run is running"),
        "{text}"
    );
}

/// A process that died while it resumed: it had written the run as under
/// way and claimed the approved call, and `recorded` says whether the body
/// finished and its result was kept. The process that takes the run over
/// never reports the call as denied, never runs it a second time, and says
/// "interrupted" when no result was kept.
async fn a_resume_cut_off(store: Arc<dyn RunStore>, recorded: bool) -> (String, usize) {
    let dir = tempfile::tempdir().unwrap();
    let run_id = RunId::new("cut-off");
    let cx = RunContext::new(dir.path(), run_id.clone());
    let first = runner(Arc::clone(&store), "first");
    let RunOutcome::Waiting(state) = first.run("Charge the order.", &cx).await.unwrap() else {
        panic!("waits");
    };
    let approval_id = state
        .approvals()
        .next()
        .expect("a call waits for approval")
        .approval_id
        .clone();
    first
        .decide(&run_id, "c2", ApprovalDecision::Approve { approval_id })
        .await
        .unwrap();
    // What the dying process did before it died.
    let held = store
        .acquire(&run_id, "dying", Duration::from_millis(1))
        .await
        .unwrap();
    let mut under_way = held.state.clone();
    under_way.seal = None;
    store
        .save(
            &under_way,
            RunStatus::Running,
            "dying",
            held.version,
            Duration::from_millis(1),
        )
        .await
        .unwrap();
    assert_eq!(
        store.claim_call(&run_id, "c2", "dying").await.unwrap(),
        Claimed::New
    );
    if recorded {
        std::fs::write(dir.path().join("charges.txt"), "1200\n").unwrap();
        let result = iris::ToolResult::text("charged 1200");
        store.record_call(&run_id, "c2", &result).await.unwrap();
    }
    // A decision now is refused: the run is under way.
    assert!(
        store
            .decide(&run_id, "c2", &ApprovalDecision::deny("too late").into())
            .await
            .is_err()
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    let second = runner(Arc::clone(&store), "second");
    let RunOutcome::Finished { text, .. } = second.resume_stored(&cx).await.unwrap() else {
        panic!("finishes");
    };
    (text, charges(dir.path()))
}

#[tokio::test]
async fn a_resume_cut_off_is_taken_over_without_a_second_charge() {
    for (name, store) in [
        ("memory", Arc::new(MemoryStore::new()) as Arc<dyn RunStore>),
        (
            "sqlite",
            sqlite_in(tempfile::tempdir().unwrap().keep().as_path()),
        ),
    ] {
        let (text, charged) = a_resume_cut_off(Arc::clone(&store), true).await;
        assert_eq!(text, "1200 | charged 1200", "{name}");
        assert_eq!(charged, 1, "{name}: the body ran once");
        store.remove(&RunId::new("cut-off")).await.unwrap();
        let (text, charged) = a_resume_cut_off(store, false).await;
        assert!(
            text.starts_with("1200 | ")
                && text.contains("stopped before its outcome was recorded")
                && !text.contains("denied"),
            "{name}: {text}"
        );
        assert_eq!(charged, 0, "{name}: never run a second time");
    }
}

#[tokio::test]
async fn the_lease_is_as_asked_before_or_after_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_in(dir.path());
    let _ = PEEKED_STORE.set(Arc::clone(&store));
    let agent = || {
        let mut registry = ToolRegistry::new();
        registry.register(LeaseHolder).unwrap();
        Agent::builder(ToolExecutor::builder(registry).build().unwrap())
            .name("peeker")
            .build()
            .unwrap()
    };
    let model = || history_model(vec![ToolUseBlock::new("p", "lease_holder", json!({}))]);
    let before = AgentRunner::new(agent(), model())
        .with_holder("named-first")
        .with_lease(Duration::from_secs(90))
        .with_store(Arc::clone(&store));
    let after = AgentRunner::new(agent(), model())
        .with_store(Arc::clone(&store))
        .with_holder("named-after")
        .with_lease(Duration::from_secs(90));
    for (runner, name) in [(before, "named-first"), (after, "named-after")] {
        let cx = RunContext::new(dir.path(), RunId::new(name));
        let RunOutcome::Finished { text, .. } = runner.run("Who drives?", &cx).await.unwrap()
        else {
            panic!("finishes");
        };
        let (holder, left) = text.split_once(" for ").unwrap();
        assert_eq!(holder, name);
        let left: u64 = left.trim_end_matches('s').parse().unwrap();
        assert!(
            (80..=90).contains(&left),
            "a 90 s lease, not the default: {left}"
        );
    }
}

/// The contract every run store keeps (`iris::testing::store_contract`),
/// on both stores Iris ships.
#[tokio::test]
async fn the_store_contract_holds_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let n = std::sync::atomic::AtomicUsize::new(0);
    iris::testing::store_contract::check(&|retention| {
        let file = dir
            .path()
            .join(format!("runs-{}.db", n.fetch_add(1, Ordering::Relaxed)));
        SqliteStore::open(file)
            .unwrap()
            .with_retention(retention)
            .into()
    })
    .await
    .assert_conformant();
}

#[tokio::test]
async fn the_store_contract_holds_in_memory() {
    iris::testing::store_contract::check(&|retention| {
        Arc::new(MemoryStore::new().with_retention(retention)) as Arc<dyn RunStore>
    })
    .await
    .assert_conformant();
}

/// One operation on a store, by one of two holders.
#[derive(Debug, Clone)]
enum Op {
    Create {
        run: u8,
        holder: u8,
    },
    Acquire {
        run: u8,
        holder: u8,
        expired: bool,
    },
    Save {
        run: u8,
        holder: u8,
        stale: bool,
        status: u8,
    },
    Decide {
        run: u8,
        call: u8,
    },
    Claim {
        run: u8,
        holder: u8,
        call: u8,
    },
    Record {
        run: u8,
        call: u8,
    },
    Remove {
        run: u8,
    },
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    let run = 0..2_u8;
    let holder = 0..2_u8;
    let call = 0..3_u8;
    prop_oneof![
        (run.clone(), holder.clone()).prop_map(|(run, holder)| Op::Create { run, holder }),
        (run.clone(), holder.clone(), any::<bool>()).prop_map(|(run, holder, expired)| {
            Op::Acquire {
                run,
                holder,
                expired,
            }
        }),
        (run.clone(), holder.clone(), any::<bool>(), 0..3_u8).prop_map(
            |(run, holder, stale, status)| Op::Save {
                run,
                holder,
                stale,
                status
            }
        ),
        (run.clone(), call.clone()).prop_map(|(run, call)| Op::Decide { run, call }),
        (run.clone(), holder, call.clone()).prop_map(|(run, holder, call)| Op::Claim {
            run,
            holder,
            call
        }),
        (run.clone(), call).prop_map(|(run, call)| Op::Record { run, call }),
        run.prop_map(|run| Op::Remove { run }),
    ]
}

/// A state of run `run` waiting on calls `c0`..`c2`, as the executor
/// paused them.
async fn waiting_state(run: &RunId) -> iris::agent::RunState {
    let mut registry = ToolRegistry::new();
    registry.register(Charge).unwrap();
    let executor = ToolExecutor::builder(registry).build().unwrap();
    let cx = iris::ToolContext::builder(".", run.clone()).build();
    let calls: Vec<ToolUseBlock> = (0..3)
        .map(|i| ToolUseBlock::new(format!("c{i}"), "charge", json!({"cents": i})))
        .collect();
    let mut waiting = Vec::new();
    for call in &calls {
        let iris::ToolOutcome::Waiting(request) = executor.execute_one(call.clone(), &cx).await
        else {
            panic!("a write waits");
        };
        waiting.push(iris::agent::WaitingItem::approval(
            run,
            call.clone(),
            request.tool,
            request.reason,
        ));
    }
    iris::agent::RunState {
        version: iris::agent::RUN_STATE_VERSION,
        agent: "cashier".to_owned(),
        run_id: run.clone(),
        step: 1,
        messages: vec![Message::Assistant {
            text: None,
            tool_calls: calls,
        }],
        finished: Vec::new(),
        waiting,
        disclosed: Vec::new(),
        skills: Vec::new(),
        usage: iris::model::Usage::default(),
        children: Vec::new(),
        output: None,
        output_faults: 0,
        spent: iris::agent::Spent::default(),
        seal: None,
    }
}

/// What an operation answered, without what differs by store (versions
/// are compared through the loaded runs instead).
async fn apply(store: &dyn RunStore, op: &Op) -> String {
    let run = |r: u8| RunId::new(format!("run-{r}"));
    let holder = |h: u8| format!("holder-{h}");
    let lease = |expired: bool| {
        if expired {
            Duration::ZERO
        } else {
            Duration::from_secs(3600)
        }
    };
    let kind = |err: &StoreError| {
        format!("{err:?}")
            .split([' ', '{', '('])
            .next()
            .unwrap()
            .to_owned()
    };
    match op {
        Op::Create { run: r, holder: h } => {
            match store
                .create(&waiting_state(&run(*r)).await, &holder(*h), lease(false))
                .await
            {
                Ok(v) => format!("created {v}"),
                Err(e) => kind(&e),
            }
        }
        Op::Acquire {
            run: r,
            holder: h,
            expired,
        } => match store.acquire(&run(*r), &holder(*h), lease(*expired)).await {
            Ok(stored) => format!("acquired {}", stored.version),
            Err(e) => kind(&e),
        },
        Op::Save {
            run: r,
            holder: h,
            stale,
            status,
        } => {
            let loaded = store.load(&run(*r)).await.unwrap();
            let version = loaded.map_or(1, |s| s.version) - u64::from(*stale);
            let status =
                [RunStatus::Running, RunStatus::Waiting, RunStatus::Finished][usize::from(*status)];
            match store
                .save(
                    &waiting_state(&run(*r)).await,
                    status,
                    &holder(*h),
                    version,
                    lease(false),
                )
                .await
            {
                Ok(v) => format!("saved {v}"),
                Err(e) => kind(&e),
            }
        }
        Op::Decide { run: r, call } => match store
            .decide(
                &run(*r),
                &format!("c{call}"),
                &ApprovalDecision::deny("no").into(),
            )
            .await
        {
            Ok(()) => "decided".to_owned(),
            Err(e) => kind(&e),
        },
        Op::Claim {
            run: r,
            holder: h,
            call,
        } => {
            match store
                .claim_call(&run(*r), &format!("c{call}"), &holder(*h))
                .await
            {
                Ok(Claimed::Ran(result)) => format!("ran: {}", result.text_content()),
                Ok(claimed) => format!("{claimed:?}"),
                Err(e) => kind(&e),
            }
        }
        Op::Record { run: r, call } => {
            let result = iris::ToolResult::text(format!("result {call}"));
            match store
                .record_call(&run(*r), &format!("c{call}"), &result)
                .await
            {
                Ok(()) => "recorded".to_owned(),
                Err(e) => kind(&e),
            }
        }
        Op::Remove { run: r } => match store.remove(&run(*r)).await {
            Ok(()) => "removed".to_owned(),
            Err(e) => kind(&e),
        },
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..proptest::prelude::ProptestConfig::default() })]

    /// The SQLite store keeps the same rules as the in-memory one: every
    /// operation answers the same, and every run reads back the same
    /// (status, version, lease holder, decisions).
    #[test]
    fn the_stores_agree(ops in proptest::collection::vec(op(), 1..40)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let sqlite = SqliteStore::open(dir.path().join("runs.db")).unwrap();
            let memory = MemoryStore::new();
            for op in &ops {
                let (a, b) = (apply(&memory, op).await, apply(&sqlite, op).await);
                proptest::prop_assert_eq!(&a, &b, "{:?}", op);
                for r in 0..2 {
                    let run = RunId::new(format!("run-{r}"));
                    let view = |stored: Option<iris::agent::store::StoredRun>| {
                        stored.map(|s| (s.status, s.version, s.lease.map(|l| l.holder), s.decisions))
                    };
                    proptest::prop_assert_eq!(
                        view(memory.load(&run).await.unwrap()),
                        view(sqlite.load(&run).await.unwrap()),
                        "after {:?}", op
                    );
                }
            }
            Ok(())
        })?;
    }
}

#[tokio::test]
async fn the_in_memory_store_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn RunStore> = Arc::new(MemoryStore::new().with_max_runs(2));
    let a = runner(Arc::clone(&store), "replica-a");
    for i in 0..2 {
        a.run(
            "Charge.",
            &RunContext::new(dir.path(), RunId::new(format!("r{i}"))),
        )
        .await
        .unwrap();
    }
    let err = a
        .run("Charge.", &RunContext::new(dir.path(), RunId::new("r2")))
        .await
        .unwrap_err();
    assert!(
        matches!(err, RunError::Store(StoreError::Full { limit: 2, .. })),
        "{err}"
    );
    assert!(err.to_string().contains("none of them finished"), "{err}");
}

/// A store that keeps every rule but one: it never forgets a removed run.
struct NeverRemoves(MemoryStore);

impl RunStore for NeverRemoves {
    fn create<'a>(
        &'a self,
        state: &'a iris::agent::RunState,
        holder: &'a str,
        lease: Duration,
    ) -> iris::tool::BoxFuture<'a, Result<u64, StoreError>> {
        self.0.create(state, holder, lease)
    }
    fn load<'a>(
        &'a self,
        run: &'a RunId,
    ) -> iris::tool::BoxFuture<'a, Result<Option<iris::agent::store::StoredRun>, StoreError>> {
        self.0.load(run)
    }
    fn acquire<'a>(
        &'a self,
        run: &'a RunId,
        holder: &'a str,
        lease: Duration,
    ) -> iris::tool::BoxFuture<'a, Result<iris::agent::store::StoredRun, StoreError>> {
        self.0.acquire(run, holder, lease)
    }
    fn save<'a>(
        &'a self,
        state: &'a iris::agent::RunState,
        status: RunStatus,
        holder: &'a str,
        expected: u64,
        lease: Duration,
    ) -> iris::tool::BoxFuture<'a, Result<u64, StoreError>> {
        self.0.save(state, status, holder, expected, lease)
    }
    fn claim_call<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        holder: &'a str,
    ) -> iris::tool::BoxFuture<'a, Result<Claimed, StoreError>> {
        self.0.claim_call(run, call_id, holder)
    }
    fn record_call<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        result: &'a iris::ToolResult,
    ) -> iris::tool::BoxFuture<'a, Result<(), StoreError>> {
        self.0.record_call(run, call_id, result)
    }
    fn decide<'a>(
        &'a self,
        run: &'a RunId,
        item_id: &'a str,
        reply: &'a iris::agent::Reply,
    ) -> iris::tool::BoxFuture<'a, Result<(), StoreError>> {
        self.0.decide(run, item_id, reply)
    }
    fn waiting(&self, limit: usize) -> iris::tool::BoxFuture<'_, Result<Vec<RunId>, StoreError>> {
        self.0.waiting(limit)
    }
    fn remove<'a>(&'a self, _run: &'a RunId) -> iris::tool::BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }
}

/// The contract names the rule a store breaks, and only that one.
#[tokio::test]
async fn the_store_contract_names_the_rule_a_store_breaks() {
    let report = iris::testing::store_contract::check(&|retention| {
        Arc::new(NeverRemoves(MemoryStore::new().with_retention(retention))) as Arc<dyn RunStore>
    })
    .await;
    let failed: Vec<&str> = report.failed.iter().map(|(rule, _)| *rule).collect();
    assert_eq!(failed, ["removal"], "{report:?}");
    assert!(report.failed[0].1.contains("removed run"), "{report:?}");
    assert_eq!(
        report.passed.len(),
        iris::testing::store_contract::RULES.len() - 1
    );
}

/// A child's kept state, in both stores: written only by the lease holder,
/// replaced at each of the child's boundaries, read back as written, and
/// gone at the next write of the root's own state.
async fn children_states_are_kept_until_the_root_writes(store: Arc<dyn RunStore>) {
    let root = RunId::new("root-1");
    let state = waiting_state(&root).await;
    let version = store
        .create(&state, "holder-a", Duration::from_secs(60))
        .await
        .unwrap();
    assert!(store.keeps_children());
    let mut child = waiting_state(&RunId::new("root-1/t1")).await;
    store.keep_child(&root, &child, "holder-a").await.unwrap();
    child.step = 2;
    store.keep_child(&root, &child, "holder-a").await.unwrap();
    let refused = store.keep_child(&root, &child, "holder-b").await;
    assert!(
        refused.is_err(),
        "only the lease holder keeps a child's state"
    );
    let kept = store.kept_child(&root, &child.run_id).await.unwrap();
    assert_eq!(
        kept.map(|s| s.step),
        Some(2),
        "the last boundary replaces the one before"
    );
    assert!(
        store
            .kept_child(&root, &RunId::new("root-1/t2"))
            .await
            .unwrap()
            .is_none()
    );
    store
        .save(
            &state,
            RunStatus::Running,
            "holder-a",
            version,
            Duration::from_secs(60),
        )
        .await
        .unwrap();
    assert!(
        store
            .kept_child(&root, &child.run_id)
            .await
            .unwrap()
            .is_none(),
        "the root's write holds the child's outcome from then on"
    );
}

#[tokio::test]
async fn children_states_are_kept_until_the_root_writes_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("runs.db")).unwrap();
    children_states_are_kept_until_the_root_writes(Arc::new(store)).await;
}

#[tokio::test]
async fn children_states_are_kept_until_the_root_writes_in_memory() {
    children_states_are_kept_until_the_root_writes(Arc::new(MemoryStore::new())).await;
}
