//! A run on the SQLite store whose process is killed at each point of a
//! step, then taken over by a second OS process: no call that finished runs
//! again, a write cut off mid-call is reported as interrupted (never run a
//! second time), an idempotent write deduplicated by its idempotency key
//! takes effect once, and where nothing was cut off the final history is
//! the uninterrupted run's.
//!
//! Each replica is this test binary started again with `IRIS_KILL_REPLICA`
//! set; it sends itself SIGKILL (no destructor, no flush: `kill -9`) at the
//! point it names.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "tests fail by panicking; replicas report on stdout"
)]

#[path = "durable/model.rs"]
mod model;
#[path = "durable/replica.rs"]
mod replica;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iris::agent::store::{Claimed, RunStatus, RunStore, StoreError, StoredRun};
use iris::agent::{
    Agent, AgentRunner, Answer, ChildAgent, Delegation, QuestionReply, RunContext, RunError,
    RunOutcome, RunState,
};
use iris::model::Message;
use iris::serde_json::json;
use iris::sqlite::SqliteStore;
use iris::testing::FnModel;
use iris::tool::BoxFuture;
use iris::{
    Rule, RulePolicy, RunId, ToolErrorKind, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock,
};
use model::{asking_then_calling, delegating_model, history_model};
use replica::{Charge, Price, SendReceipt, die_at, lines, result_of};

/// Where a replica dies.
const POINTS: [&str; 6] = [
    "after_answer",
    "after_claim",
    "in_charge",
    "after_body",
    "after_record",
    "after_step",
];

/// The calls every process's model makes for the person's request.
fn cashier() -> FnModel {
    history_model(cashier_calls())
}

/// Refund a payment: a write that may not run twice, which the lead of the
/// nested run lets run without asking.
#[iris::tool(write)]
fn refund(
    /// Cents to refund.
    cents: u64,
    #[ctx] cx: &iris::ToolContext,
) -> String {
    replica::append(&cx.workspace_root().join("refunds.txt"), &cents.to_string());
    die_at("in_refund", cx.workspace_root());
    format!("refunded {cents}")
}

/// The cashier's calls, then a refund of 300 under an id of this process's
/// own (as a provider's ids are), then the report.
fn charging_once_more() -> FnModel {
    FnModel::new(|request| {
        let steps = request
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count();
        Ok(match steps {
            0 => iris::model::ModelResponse {
                tool_calls: cashier_calls(),
                ..Default::default()
            },
            1 => iris::model::ModelResponse {
                tool_calls: vec![ToolUseBlock::new(
                    format!("more-{}", std::process::id()),
                    "refund",
                    json!({"cents": 300}),
                )],
                ..Default::default()
            },
            _ => iris::testing::calling_then_reporting(&[], request),
        })
    })
}

fn cashier_calls() -> Vec<ToolUseBlock> {
    vec![
        ToolUseBlock::new("c1", "price", json!({})),
        ToolUseBlock::new("c2", "send_receipt", json!({"to": "ann@example.com"})),
        ToolUseBlock::new("c3", "charge", json!({"cents": 1200})),
    ]
}

/// The SQLite store, with the replica's death at the store's points.
struct Killing {
    inner: SqliteStore,
    dir: PathBuf,
}

impl RunStore for Killing {
    fn create<'a>(
        &'a self,
        state: &'a RunState,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        self.inner.create(state, holder, lease)
    }

    fn load<'a>(&'a self, run: &'a RunId) -> BoxFuture<'a, Result<Option<StoredRun>, StoreError>> {
        self.inner.load(run)
    }

    fn acquire<'a>(
        &'a self,
        run: &'a RunId,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<StoredRun, StoreError>> {
        self.inner.acquire(run, holder, lease)
    }

    fn save<'a>(
        &'a self,
        state: &'a RunState,
        status: RunStatus,
        holder: &'a str,
        expected: u64,
        lease: Duration,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let version = self
                .inner
                .save(state, status, holder, expected, lease)
                .await?;
            if status == RunStatus::Running {
                match state.messages.last() {
                    Some(Message::Assistant { tool_calls, .. }) if !tool_calls.is_empty() => {
                        die_at("after_answer", &self.dir);
                    }
                    Some(Message::Tool { .. }) => die_at("after_step", &self.dir),
                    _ => {}
                }
            }
            Ok(version)
        })
    }

    fn claim_call<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<Claimed, StoreError>> {
        Box::pin(async move {
            let claimed = self.inner.claim_call(run, call_id, holder).await?;
            // `c3` of the run, or of its child (`t1/c3`).
            if call_id.ends_with("c3") && claimed == Claimed::New {
                die_at("after_claim", &self.dir);
            }
            Ok(claimed)
        })
    }

    fn record_call<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        result: &'a ToolResult,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            die_at("after_body", &self.dir);
            self.inner.record_call(run, call_id, result).await?;
            die_at("after_record", &self.dir);
            Ok(())
        })
    }

    fn keeps_children(&self) -> bool {
        self.inner.keeps_children()
    }

    fn keep_child<'a>(
        &'a self,
        run: &'a RunId,
        state: &'a RunState,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.inner.keep_child(run, state, holder).await?;
            match state.messages.last() {
                Some(Message::Assistant { tool_calls, .. }) if !tool_calls.is_empty() => {
                    die_at("child_after_answer", &self.dir);
                }
                Some(Message::Tool { .. }) => die_at("child_after_step", &self.dir),
                _ => {}
            }
            Ok(())
        })
    }

    fn kept_child<'a>(
        &'a self,
        run: &'a RunId,
        child: &'a RunId,
    ) -> BoxFuture<'a, Result<Option<RunState>, StoreError>> {
        self.inner.kept_child(run, child)
    }

    fn decide<'a>(
        &'a self,
        run: &'a RunId,
        item_id: &'a str,
        reply: &'a iris::agent::Reply,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.decide(run, item_id, reply)
    }

    fn waiting(&self, limit: usize) -> BoxFuture<'_, Result<Vec<RunId>, StoreError>> {
        self.inner.waiting(limit)
    }

    fn remove<'a>(&'a self, run: &'a RunId) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.remove(run)
    }
}

/// One replica: starts the run, or takes it over once the dead replica's
/// lease ran out; prints the final history.
async fn replica(db: &Path, dir: &Path) {
    let mut registry = ToolRegistry::new();
    registry.register(Charge).unwrap();
    registry.register(SendReceipt).unwrap();
    registry.register(Price).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()
        .unwrap();
    let agent = Agent::builder(executor).name("cashier").build().unwrap();
    let store = Killing {
        inner: SqliteStore::open(db).unwrap(),
        dir: dir.to_path_buf(),
    };
    let runner = AgentRunner::new(agent, cashier())
        .with_store(Arc::new(store) as Arc<dyn RunStore>)
        .with_holder(format!("replica-{}", std::process::id()))
        .with_lease(Duration::from_millis(300))
        // Counted, never reached: a take-over goes on from the spend kept.
        .with_budget(iris::agent::Budget::new().requests(50).tool_calls(50));
    let cx = RunContext::new(dir, RunId::new("order-7"));
    let stored = runner.store().unwrap().load(&RunId::new("order-7")).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let outcome = loop {
        let attempt = if stored.as_ref().unwrap().is_none() {
            runner
                .run("Charge order 7 and send the receipt.", &cx)
                .await
        } else {
            runner.resume_stored(&cx).await
        };
        match attempt {
            Err(RunError::Store(StoreError::Held { .. })) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => break other.unwrap(),
        }
    };
    let RunOutcome::Finished { state, .. } = outcome else {
        panic!("the run finishes: {outcome:?}");
    };
    println!(
        "HISTORY={}",
        iris::serde_json::to_string(&state.messages).unwrap()
    );
    println!(
        "SPENT={}",
        iris::serde_json::to_string(&(state.spent.requests, state.spent.tool_calls)).unwrap()
    );
}

/// The requests and tool calls a replica's finished run counted.
fn spent(printed: &str) -> (u32, u32) {
    let line = printed
        .lines()
        .find_map(|line| line.strip_prefix("SPENT="))
        .unwrap_or_else(|| panic!("the replica printed its spend: {printed}"));
    iris::serde_json::from_str(line).unwrap()
}

/// What the till at the bottom of a nested run does.
#[derive(Clone, Copy)]
enum Till {
    /// The cashier's calls, then its report.
    Cashier,
    /// A question to the person first.
    Asking,
    /// After the cashier's step, one more charge under an id the process
    /// makes up.
    ChargingMore,
}

/// The lead of the nested runs: it asks before writes (or allows them,
/// with `lead_writes`) and hands the task down `depth` levels of child
/// agents (each `t1` of the one above), the last of them the till, `till`
/// says doing what, with the cashier's tools.
fn nested_runner_with(
    db: &Path,
    dir: &Path,
    depth: u32,
    lead_writes: Rule,
    till: Till,
) -> AgentRunner {
    let mut registry = ToolRegistry::new();
    registry.register(Charge).unwrap();
    registry.register(SendReceipt).unwrap();
    registry.register(Price).unwrap();
    registry.register(Refund).unwrap();
    let till_agent = Agent::builder(
        ToolExecutor::builder(registry)
            .policy(RulePolicy::new().write(Rule::Allow))
            .build()
            .unwrap(),
    )
    .name("till")
    .build()
    .unwrap();
    let till_model = match till {
        Till::Cashier => cashier(),
        Till::Asking => asking_then_calling(cashier_calls()),
        Till::ChargingMore => charging_once_more(),
    };
    let mut below = ChildAgent::new("till", "Charges orders.", till_agent).model(till_model);
    for _ in 1..depth {
        let middle = Agent::builder(
            ToolExecutor::builder(ToolRegistry::new())
                .policy(RulePolicy::new().other(Rule::Allow).write(Rule::Allow))
                .build()
                .unwrap(),
        )
        .name("till")
        .child(below)
        .build()
        .unwrap();
        below = ChildAgent::new("till", "Charges orders.", middle).model(delegating_model());
    }
    let lead = Agent::builder(
        ToolExecutor::builder(ToolRegistry::new())
            .policy(match till {
                // Only the charge waits for a person; the refund runs.
                Till::ChargingMore => RulePolicy::new()
                    .other(Rule::Allow)
                    .write(Rule::Allow)
                    .tool(
                        iris::definition::ToolName::new("charge").unwrap(),
                        Rule::Ask,
                    ),
                _ => RulePolicy::new().other(Rule::Allow).write(lead_writes),
            })
            .build()
            .unwrap(),
    )
    .name("lead")
    .child(below)
    .build()
    .unwrap();
    let store = Killing {
        inner: SqliteStore::open(db).unwrap(),
        dir: dir.to_path_buf(),
    };
    AgentRunner::new(lead, delegating_model())
        .with_questions(iris::agent::Questions::new())
        .with_delegation(Delegation::new().max_depth(depth))
        .with_store(Arc::new(store) as Arc<dyn RunStore>)
        .with_holder(format!("replica-{}", std::process::id()))
        .with_lease(Duration::from_millis(300))
}

/// One replica of the nested run: starts it (the till's writes wait for
/// the lead's approval), records a person's word on every write by its
/// path (the charge denied when `deny`), and resumes it; or takes it over
/// once the dead replica's lease ran out. With `allow`, the lead allows
/// the till's writes and the run goes straight through. Prints the till's
/// final history.
async fn nested_replica(db: &Path, dir: &Path, depth: u32, decision: &str) {
    let (deny, allow) = (decision == "deny", decision == "allow");
    let lead_writes = if allow { Rule::Allow } else { Rule::Ask };
    let till = if decision == "more" {
        Till::ChargingMore
    } else {
        Till::Cashier
    };
    let runner = nested_runner_with(db, dir, depth, lead_writes, till);
    let run = RunId::new("order-7");
    let cx = RunContext::new(dir, run.clone());
    let stored = runner.store().unwrap().load(&run).await.unwrap();
    if allow && stored.is_none() {
        let outcome = runner
            .run("Charge order 7 and send the receipt.", &cx)
            .await
            .unwrap();
        print_till(&outcome);
        return;
    }
    if stored.is_none() {
        let outcome = runner
            .run("Charge order 7 and send the receipt.", &cx)
            .await
            .unwrap();
        let RunOutcome::Waiting(state) = outcome else {
            panic!("the till's writes wait: {outcome:?}");
        };
        for pending in state.pending() {
            assert_eq!(pending.agents.len(), depth as usize, "{}", pending.id);
            let request = pending.item.approval_request().expect("an approval");
            let decision = if deny && pending.id.ends_with("c3") {
                iris::ApprovalDecision::deny("not this order")
            } else {
                iris::ApprovalDecision::approve(request)
            };
            runner.decide(&run, &pending.id, decision).await.unwrap();
        }
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let outcome = loop {
        match runner.resume_stored(&cx).await {
            Err(RunError::Store(StoreError::Held { .. })) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // A write the till made after its approved step waits in turn:
            // approved, and the run goes on.
            Ok(RunOutcome::Waiting(state)) => {
                for pending in state.pending() {
                    let request = pending.item.approval_request().expect("an approval");
                    let decision = iris::ApprovalDecision::approve(request);
                    runner.decide(&run, &pending.id, decision).await.unwrap();
                }
            }
            other => break other.unwrap(),
        }
    };
    print_till(&outcome);
}

/// One replica of the run whose till asks a question: starts it and leaves
/// it waiting (printing `WAITING=` and the item's id), or, once a person's
/// answer is in the store, resumes it or takes it over once the dead
/// replica's lease ran out, printing the till's final history.
async fn question_replica(db: &Path, dir: &Path, depth: u32) {
    let runner = nested_runner_with(db, dir, depth, Rule::Allow, Till::Asking);
    let run = RunId::new("order-7");
    let cx = RunContext::new(dir, run.clone());
    if runner.store().unwrap().load(&run).await.unwrap().is_none() {
        let outcome = runner
            .run("Charge order 7 and send the receipt.", &cx)
            .await
            .unwrap();
        let RunOutcome::Waiting(state) = outcome else {
            panic!("the till's question waits: {outcome:?}");
        };
        let ids: Vec<String> = state.pending().into_iter().map(|p| p.id).collect();
        println!("WAITING={}", ids.join(","));
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let outcome = loop {
        match runner.resume_stored(&cx).await {
            Err(RunError::Store(StoreError::Held { .. })) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // A write the till made after its approved step waits in turn:
            // approved, and the run goes on.
            Ok(RunOutcome::Waiting(state)) => {
                for pending in state.pending() {
                    let request = pending.item.approval_request().expect("an approval");
                    let decision = iris::ApprovalDecision::approve(request);
                    runner.decide(&run, &pending.id, decision).await.unwrap();
                }
            }
            other => break other.unwrap(),
        }
    };
    print_till(&outcome);
}

/// Prints the history of the till at the bottom of a finished nested run.
fn print_till(outcome: &RunOutcome) {
    let RunOutcome::Finished { state, .. } = outcome else {
        panic!("the run finishes: {outcome:?}");
    };
    let mut till = &state.children[0].state;
    while let Some(below) = till.children.first() {
        till = &below.state;
    }
    println!(
        "HISTORY={}",
        iris::serde_json::to_string(&till.messages).unwrap()
    );
}

#[tokio::test]
async fn replica_entry() {
    // Only a replica started by the tests below does anything here.
    if let Ok(args) = std::env::var("IRIS_KILL_REPLICA") {
        let mut parts = args.split('\n');
        let (db, dir) = (parts.next().unwrap(), parts.next().unwrap());
        let mode = parts.next();
        if mode == Some("question") {
            let depth = parts.next().unwrap().parse().unwrap();
            question_replica(Path::new(db), Path::new(dir), depth).await;
        } else if mode == Some("nested") {
            let depth = parts.next().unwrap().parse().unwrap();
            let decision = parts.next().unwrap_or("approve");
            nested_replica(Path::new(db), Path::new(dir), depth, decision).await;
        } else {
            replica(Path::new(db), Path::new(dir)).await;
        }
    }
}

/// Starts a replica; returns how it ended, and what it printed.
fn start_replica(
    db: &Path,
    dir: &Path,
    kill_at: Option<&str>,
) -> (std::process::ExitStatus, String) {
    start_replica_as(db, dir, kill_at, "plain")
}

/// Starts a replica of the `plain` or the `nested` run.
fn start_replica_as(
    db: &Path,
    dir: &Path,
    kill_at: Option<&str>,
    mode: &str,
) -> (std::process::ExitStatus, String) {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args(["replica_entry", "--exact", "--nocapture"])
        .env(
            "IRIS_KILL_REPLICA",
            format!("{}\n{}\n{mode}", db.display(), dir.display()),
        )
        .env_remove("IRIS_KILL_AT");
    if let Some(point) = kill_at {
        command.env("IRIS_KILL_AT", point);
    }
    let output = command.output().unwrap();
    (
        output.status,
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// A replica of `mode` on the store in `dir`, killed at `point`, then one
/// that takes the run over and finishes it: what the second printed.
fn killed_then_taken_over(dir: &Path, point: &str, mode: &str) -> String {
    let db = dir.join("runs.db");
    let (ended, printed) = start_replica_as(&db, dir, Some(point), mode);
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&ended),
        Some(9),
        "{mode}: the first replica is killed at {point}: {printed}"
    );
    let (ended, printed) = start_replica_as(&db, dir, None, mode);
    assert!(
        ended.success(),
        "{mode}: the second replica finishes after {point}: {printed}"
    );
    printed
}

fn history(printed: &str) -> Vec<Message> {
    let line = printed
        .lines()
        .find_map(|line| line.strip_prefix("HISTORY="))
        .unwrap_or_else(|| panic!("the replica printed its history: {printed}"));
    iris::serde_json::from_str(line).unwrap()
}

#[tokio::test]
async fn a_run_killed_at_any_point_resumes_without_running_a_finished_call_again() {
    let clean = tempfile::tempdir().unwrap();
    let (ended, printed) = start_replica(&clean.path().join("runs.db"), clean.path(), None);
    assert!(ended.success(), "{printed}");
    let uninterrupted = history(&printed);
    let spent_once = spent(&printed);
    assert_eq!(lines(&clean.path().join("charges.txt")).len(), 1);

    for point in POINTS {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("runs.db");
        let (ended, printed) = start_replica(&db, dir.path(), Some(point));
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&ended),
            Some(9),
            "the first replica is killed at {point}: {printed}"
        );
        assert!(dir.path().join("killed").exists(), "{point}");
        let (ended, printed) = start_replica(&db, dir.path(), None);
        assert!(
            ended.success(),
            "the second replica finishes after {point}: {printed}"
        );
        let taken_over = history(&printed);
        // The budget's ledger is neither reset nor counted twice: a request
        // answered and lost in the crash is asked, and counted, once.
        assert_eq!(spent(&printed), spent_once, "{point}");

        let charges = lines(&dir.path().join("charges.txt")).len();
        let receipts = lines(&dir.path().join("receipts.txt")).len();
        assert_eq!(
            receipts, 1,
            "the idempotent write took effect once ({point})"
        );
        let charge = result_of(&taken_over, "c3");
        match point {
            // Cut off between its claim and its recorded result: the charge
            // may or may not have happened, and is not made again.
            "after_claim" | "in_charge" | "after_body" => {
                assert_eq!(
                    charge.error_kind(),
                    Some(ToolErrorKind::Interrupted),
                    "{point}: {}",
                    charge.text_content()
                );
                let expected = usize::from(point != "after_claim");
                assert_eq!(charges, expected, "the charge ran at most once ({point})");
            }
            // Nothing cut off: the run is the uninterrupted one.
            _ => {
                assert_eq!(charges, 1, "the charge ran exactly once ({point})");
                assert_eq!(taken_over, uninterrupted, "{point}");
            }
        }
        assert_eq!(
            result_of(&taken_over, "c2"),
            result_of(&uninterrupted, "c2"),
            "{point}"
        );
    }
}

/// A write inside a child agent at depth 1, 2 and 3, approved (or denied)
/// by its path while the run waited in the store, its process killed at
/// each point of the resumed write and the run taken over by a second
/// process: the write runs at most once, exactly once where its result was
/// recorded, and the till's history is then the uninterrupted one.
#[tokio::test]
async fn an_approved_write_inside_a_child_runs_once_across_a_kill() {
    for depth in 1..=3 {
        let mode = format!("nested\n{depth}\napprove");
        let clean = tempfile::tempdir().unwrap();
        let (ended, printed) =
            start_replica_as(&clean.path().join("runs.db"), clean.path(), None, &mode);
        assert!(ended.success(), "depth {depth}: {printed}");
        let uninterrupted = history(&printed);
        assert_eq!(lines(&clean.path().join("charges.txt")).len(), 1);

        let denied = tempfile::tempdir().unwrap();
        let (ended, printed) = start_replica_as(
            &denied.path().join("runs.db"),
            denied.path(),
            None,
            &format!("nested\n{depth}\ndeny"),
        );
        assert!(ended.success(), "depth {depth}: {printed}");
        assert_eq!(
            result_of(&history(&printed), "c3").error_kind(),
            Some(ToolErrorKind::PermissionDenied)
        );
        assert!(lines(&denied.path().join("charges.txt")).is_empty());

        for point in ["after_claim", "in_charge", "after_body", "after_record"] {
            let dir = tempfile::tempdir().unwrap();
            let till = history(&killed_then_taken_over(dir.path(), point, &mode));
            let charges = lines(&dir.path().join("charges.txt")).len();
            assert_eq!(
                lines(&dir.path().join("receipts.txt")).len(),
                1,
                "depth {depth}: the idempotent write took effect once ({point})"
            );
            let charge = result_of(&till, "c3");
            if point == "after_record" {
                assert_eq!(charges, 1, "depth {depth}: exactly once ({point})");
                assert_eq!(till, uninterrupted, "depth {depth}: {point}");
            } else {
                assert_eq!(
                    charge.error_kind(),
                    Some(ToolErrorKind::Interrupted),
                    "depth {depth}, {point}: {}",
                    charge.text_content()
                );
                let expected = usize::from(point != "after_claim");
                assert_eq!(charges, expected, "depth {depth}: at most once ({point})");
            }
        }
    }
}

/// A child agent whose own tool writes, at depth 1, 2 and 3, its process
/// killed at each point of the run (before the child kept any step, after
/// it kept its answer, inside and around its write, after its step) and the
/// run taken over by a second process: the child goes on from its last
/// kept step. A write is reported interrupted only when it was cut off
/// between its claim and its recorded result; the calls it recorded are
/// not run again; where nothing was cut off, the till's history is the
/// uninterrupted one.
#[tokio::test]
async fn a_child_cut_off_by_a_crash_goes_on_from_its_last_kept_step() {
    for depth in 1..=3 {
        let mode = format!("nested\n{depth}\nallow");
        let clean = tempfile::tempdir().unwrap();
        let (ended, printed) =
            start_replica_as(&clean.path().join("runs.db"), clean.path(), None, &mode);
        assert!(ended.success(), "depth {depth}: {printed}");
        let uninterrupted = history(&printed);
        assert_eq!(lines(&clean.path().join("charges.txt")).len(), 1);

        for point in [
            "after_answer",
            "child_after_answer",
            "after_claim",
            "in_charge",
            "after_body",
            "after_record",
            "child_after_step",
        ] {
            let dir = tempfile::tempdir().unwrap();
            let till = history(&killed_then_taken_over(dir.path(), point, &mode));
            let charges = lines(&dir.path().join("charges.txt")).len();
            assert_eq!(
                lines(&dir.path().join("receipts.txt")).len(),
                1,
                "depth {depth}: the idempotent write took effect once ({point})"
            );
            let charge = result_of(&till, "c3");
            if matches!(point, "after_claim" | "in_charge" | "after_body") {
                assert_eq!(
                    charge.error_kind(),
                    Some(ToolErrorKind::Interrupted),
                    "depth {depth}, {point}: {}",
                    charge.text_content()
                );
                let expected = usize::from(point != "after_claim");
                assert_eq!(charges, expected, "depth {depth}: at most once ({point})");
                assert_eq!(
                    result_of(&till, "c1"),
                    result_of(&uninterrupted, "c1"),
                    "depth {depth}: {point}"
                );
            } else {
                assert_eq!(charges, 1, "depth {depth}: exactly once ({point})");
                assert_eq!(till, uninterrupted, "depth {depth}: {point}");
            }
        }
    }
}

/// A question a child agent asks, at depth 1, 2 and 3: the process that
/// asked it exits, a person answers into the store while no process drives
/// the run, and the process that resumes it is killed at each point of the
/// child's write and taken over by another. The answer reaches the till
/// once, the write runs at most once (exactly once where its result was
/// recorded), and nothing that had not started is reported interrupted.
#[tokio::test]
async fn a_question_inside_a_child_is_answered_while_no_process_drives_the_run() {
    for depth in 1..=3 {
        let mode = format!("question\n{depth}");
        for point in [
            None,
            Some("child_after_answer"),
            Some("after_claim"),
            Some("in_charge"),
            Some("after_record"),
            Some("child_after_step"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let db = dir.path().join("runs.db");
            let (ended, printed) = start_replica_as(&db, dir.path(), None, &mode);
            assert!(ended.success(), "depth {depth}: {printed}");
            let waiting = printed
                .lines()
                .find_map(|line| line.strip_prefix("WAITING="))
                .unwrap_or_else(|| panic!("depth {depth}: the run waits: {printed}"))
                .to_owned();
            let expected_id = format!("{}q1", "t1/".repeat(depth as usize));
            assert_eq!(waiting, expected_id, "depth {depth}");

            // Nobody drives the run: the answer goes into the store.
            let store = SqliteStore::open(&db).unwrap();
            let stored = store.load(&RunId::new("order-7")).await.unwrap().unwrap();
            let pending = stored.state.pending();
            let request = pending[0].item.question_request().unwrap();
            let answer = QuestionReply::answer(request, vec![Answer::choose("amex")]);
            store
                .decide(&RunId::new("order-7"), &waiting, &answer.into())
                .await
                .unwrap();

            if let Some(point) = point {
                let till = history(&killed_then_taken_over(dir.path(), point, &mode));
                check_answered_till(&till, &dir, depth, point);
            } else {
                let (ended, printed) = start_replica_as(&db, dir.path(), None, &mode);
                assert!(ended.success(), "depth {depth}: {printed}");
                check_answered_till(&history(&printed), &dir, depth, "no kill");
            }
        }
    }
}

/// The till of a question run after it ended: the answer reached it once,
/// and its write ran as the kill `point` allows.
fn check_answered_till(till: &[Message], dir: &tempfile::TempDir, depth: u32, point: &str) {
    let answered = result_of(till, "q1");
    assert!(
        answered.text_content().contains("amex"),
        "depth {depth}, {point}: {}",
        answered.text_content()
    );
    let charges = lines(&dir.path().join("charges.txt")).len();
    assert_eq!(
        lines(&dir.path().join("receipts.txt")).len(),
        1,
        "depth {depth}: the idempotent write took effect once ({point})"
    );
    let charge = result_of(till, "c3");
    if matches!(point, "after_claim" | "in_charge") {
        assert_eq!(
            charge.error_kind(),
            Some(ToolErrorKind::Interrupted),
            "depth {depth}, {point}: {}",
            charge.text_content()
        );
        assert_eq!(
            charges,
            usize::from(point == "in_charge"),
            "depth {depth}: {point}"
        );
    } else {
        assert_eq!(
            charge.as_error(),
            None,
            "depth {depth}, {point}: {}",
            charge.text_content()
        );
        assert_eq!(charges, 1, "depth {depth}: exactly once ({point})");
    }
    for call in ["c1", "c2"] {
        assert_eq!(
            result_of(till, call).as_error(),
            None,
            "depth {depth}, {point}: {call}"
        );
    }
}

/// A child resumed after a person's approval goes on to a step of its own
/// (a refund of 300 under an id the process makes up, as a provider's
/// are) and is killed inside that refund: the process that takes the run
/// over goes on from the child's last kept step, not from its pause again,
/// so the model is not asked again for that step and the refund is
/// reported interrupted, never made twice.
#[tokio::test]
async fn a_resumed_child_cut_off_goes_on_from_its_last_step_not_its_pause() {
    for depth in 1..=2 {
        let mode = format!("nested\n{depth}\nmore");
        let dir = tempfile::tempdir().unwrap();
        let till = history(&killed_then_taken_over(dir.path(), "in_refund", &mode));
        assert_eq!(
            lines(&dir.path().join("charges.txt")),
            ["1200"],
            "depth {depth}"
        );
        assert_eq!(
            lines(&dir.path().join("refunds.txt")),
            ["300"],
            "depth {depth}: the refund made once"
        );
        let refund = till
            .iter()
            .find_map(|m| match m {
                Message::Tool {
                    call_id, result, ..
                } if call_id.starts_with("more-") => Some(result),
                _ => None,
            })
            .expect("the refund has a result");
        assert_eq!(
            refund.error_kind(),
            Some(ToolErrorKind::Interrupted),
            "depth {depth}: {}",
            refund.text_content()
        );
    }
}
