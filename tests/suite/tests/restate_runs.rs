//! Runs on a real Restate server (the pinned npm build, on loopback ports
//! of the test's own): the agent loop as a workflow on an endpoint that is
//! killed with SIGKILL at each point of a step and replaced by another
//! process, an approval that arrives through the ingress after the replica
//! that paused died, and two clients racing to start the same run.
//!
//! Each replica is this test binary started again with
//! `IRIS_RESTATE_REPLICA` set: it serves the workflow until it is killed,
//! by the test or by itself at the point `IRIS_KILL_AT` names.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail by panicking"
)]

#[path = "../../support/hooks.rs"]
mod hooks;
#[path = "durable/model.rs"]
#[allow(
    dead_code,
    reason = "the replicas here die inside the model, so they use its answers only"
)]
mod model;
#[path = "durable/replica.rs"]
mod replica;
#[path = "restate/server.rs"]
mod server;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use iris::agent::{Agent, AgentRunner, ChildAgent, Questions};
use iris::model::Message;
use iris::restate::restate_sdk::endpoint::Endpoint;
use iris::restate::{AgentWorkflow, RunReport};
use iris::serde_json::{Value, json};
use iris::testing::FnModel;
use iris::{Rule, RulePolicy, ToolErrorKind, ToolExecutor, ToolRegistry, ToolUseBlock};
use model::delegating_model;
use replica::{Charge, Price, SendReceipt, die_at, lines, result_of};
use server::{RestateServer, free_port};

/// Where a replica dies: inside the first model call (nothing kept yet);
/// inside the read-only call (the answer kept); after the idempotent
/// write's effect; after the charge was claimed, before its effect; after
/// its effect, before its result was kept; inside the second model call
/// (every result of the step kept).
const POINTS: [&str; 6] = [
    "model_step_1",
    "in_price",
    "after_receipt",
    "before_charge",
    "in_charge",
    "model_step_2",
];

/// The history model, dying inside the step the replica was told to. Each
/// time it is asked it adds the step's number to `asked.txt`: a replay must
/// not ask it again for a step whose answer is kept.
fn cashier(dir: PathBuf) -> FnModel {
    let calls = vec![
        ToolUseBlock::new("c1", "price", json!({})),
        ToolUseBlock::new("c2", "send_receipt", json!({"to": "ann@example.com"})),
        ToolUseBlock::new("c3", "charge", json!({"cents": 1200})),
    ];
    FnModel::new(move |request| {
        asked_at(request, &dir);
        Ok(iris::testing::calling_then_reporting(&calls, request))
    })
}

/// Notes the step `request` asks for in `asked.txt`, and dies inside it
/// when the replica was told to; the step's number.
fn asked_at(request: &iris::testing::RecordedRequest, dir: &Path) -> usize {
    let step = 1 + request
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Assistant { .. }))
        .count();
    {
        use std::io::Write as _;
        let mut asked = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("asked.txt"))
            .unwrap();
        writeln!(asked, "{step}").unwrap();
    }
    die_at(&format!("model_step_{step}"), dir);
    step
}

/// What the typed cashier answers.
#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Receipt {
    /// What was charged, in cents.
    charged_cents: u64,
    /// Who the receipt went to.
    sent_to: String,
}

/// An answer of `text` alone.
fn text_answer(text: &str) -> iris::model::ModelResponse {
    iris::model::ModelResponse {
        text: Some(text.to_owned()),
        ..iris::model::ModelResponse::default()
    }
}

/// The cashier's calls, then a receipt missing a field, then the whole
/// receipt once told the fault: each step asked is noted in `asked.txt`,
/// and the replica dies inside the step `IRIS_KILL_AT` names.
fn typed_cashier(dir: PathBuf) -> FnModel {
    let calls = vec![
        ToolUseBlock::new("c1", "price", json!({})),
        ToolUseBlock::new("c2", "send_receipt", json!({"to": "ann@example.com"})),
        ToolUseBlock::new("c3", "charge", json!({"cents": 1200})),
    ];
    FnModel::new(move |request| {
        let step = asked_at(request, &dir);
        Ok(match step {
            1 => iris::testing::calling_then_reporting(&calls, request),
            2 => text_answer(r#"{"charged_cents": 1200}"#),
            _ => text_answer(r#"{"charged_cents": 1200, "sent_to": "ann@example.com"}"#),
        })
    })
}

/// The cashier's calls, then a rude answer, then one with the card
/// number; each step asked noted in `asked.txt`.
fn careless_cashier(dir: PathBuf) -> FnModel {
    let calls = vec![ToolUseBlock::new("c1", "charge", json!({"cents": 1200}))];
    FnModel::new(move |request| {
        let step = asked_at(request, &dir);
        Ok(match step {
            1 => iris::testing::calling_then_reporting(&calls, request),
            2 => text_answer("What a stupid question."),
            _ => text_answer("Your card 4111 1111 1111 1111 was charged 1200."),
        })
    })
}

/// The cashier with two `model.after` hooks: one sends a rude answer back,
/// one redacts card numbers; each answer judged is noted in `judged.txt`.
fn judged_cashier(dir: &Path) -> Agent {
    use iris::hooks::{HookInput, HookRegistration, ModelAfterAnswer};
    let noted = dir.join("judged.txt");
    let polite = HookRegistration::model_after("polite", move |input: &HookInput| {
        let text = input.answer.as_ref().unwrap()["text"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        {
            use std::io::Write as _;
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&noted)
                .unwrap();
            writeln!(file, "{}", text.len()).unwrap();
        }
        if text.contains("stupid") {
            ModelAfterAnswer::retry("Answer politely.")
        } else {
            ModelAfterAnswer::Accept
        }
    });
    let cards = hooks::redacting_cards("cards");
    let mut registry = ToolRegistry::new();
    registry.register(Charge).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Allow))
        .hook(polite)
        .hook(cards)
        .build()
        .unwrap();
    Agent::builder(executor).name("cashier").build().unwrap()
}

/// Three charges and a receipt in one step, then a report.
fn charging_model() -> FnModel {
    let calls = vec![
        ToolUseBlock::new("c1", "charge", json!({"cents": 100})),
        ToolUseBlock::new("c2", "charge", json!({"cents": 200})),
        ToolUseBlock::new("c3", "send_receipt", json!({"to": "ann@example.com"})),
        ToolUseBlock::new("c4", "charge", json!({"cents": 300})),
    ];
    FnModel::new(move |request| Ok(iris::testing::calling_then_reporting(&calls, request)))
}

/// How a replica serves the `cashier` workflow.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The cashier's writes run.
    Allow,
    /// The charge waits for a person's approval.
    Ask,
    /// A lead delegates the whole task down this many levels of child
    /// agents, the last of them the cashier.
    Nested(u32),
    /// One level, the lead asking before writes: the child's writes wait.
    NestedAsk,
    /// The cashier asks the person a question that expires unanswered.
    Question,
    /// One step of three charges and a receipt.
    Charges,
    /// A refund found through `tool_search`, then made.
    Discovery,
    /// One level, the child asking the person a question before its writes.
    NestedQuestion,
    /// The cashier answers a typed receipt, wrong once.
    Typed,
    /// The cashier's answers judged by `model.after` hooks: sent back
    /// once, then a card number redacted.
    Redacted,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Allow => "allow",
            Mode::Ask => "ask",
            Mode::Nested(1) => "nested",
            Mode::Nested(2) => "nested-2",
            Mode::Nested(_) => "nested-3",
            Mode::NestedAsk => "nested-ask",
            Mode::Question => "question",
            Mode::Charges => "charges",
            Mode::Discovery => "discovery",
            Mode::NestedQuestion => "nested-question",
            Mode::Typed => "typed",
            Mode::Redacted => "redacted",
        }
    }
}

/// The cashier: its tools, its policy, its dying model.
fn cashier_agent(ask: bool) -> Agent {
    let mut registry = ToolRegistry::new();
    registry.register(Charge).unwrap();
    registry.register(SendReceipt).unwrap();
    registry.register(Price).unwrap();
    let policy = if ask {
        RulePolicy::new().write(Rule::Allow).tool(
            iris::definition::ToolName::new("charge").unwrap(),
            Rule::Ask,
        )
    } else {
        RulePolicy::new().write(Rule::Allow)
    };
    let executor = ToolExecutor::builder(registry)
        .policy(policy)
        .build()
        .unwrap();
    Agent::builder(executor).name("cashier").build().unwrap()
}

/// Refund an order's payment: a write the model finds through
/// `tool_search`.
#[iris::tool(write, deferred)]
fn refund(
    /// Cents to refund.
    cents: u64,
    #[ctx] cx: &iris::ToolContext,
) -> String {
    replica::append(&cx.workspace_root().join("refunds.txt"), &cents.to_string());
    format!("refunded {cents}")
}

/// The cashier with a deferred refund and discovery over its tools.
fn refunding_agent() -> Agent {
    let mut registry = ToolRegistry::new();
    registry.register(Refund).unwrap();
    registry.register(Price).unwrap();
    registry.register(iris::discovery::ToolSearch).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()
        .unwrap();
    let discovery = iris::discovery::Discovery::builder(executor.shared_registry())
        .ledger(std::sync::Arc::clone(executor.ledger()))
        .build()
        .unwrap();
    Agent::builder(executor)
        .name("cashier")
        .discovery(discovery)
        .build()
        .unwrap()
}

/// Searches for a way to refund, refunds, then reports; dies inside the
/// step the replica was told to (`model_step_N`).
fn refunding_model(dir: PathBuf) -> FnModel {
    FnModel::new(move |request| {
        let step = 1 + request
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count();
        die_at(&format!("model_step_{step}"), &dir);
        let call = |id: &str, name: &str, input: Value| iris::model::ModelResponse {
            tool_calls: vec![ToolUseBlock::new(id, name, input)],
            ..Default::default()
        };
        Ok(match step {
            1 => call(
                "s1",
                "tool_search",
                json!({"intents": ["refund a payment for an order"]}),
            ),
            2 => call("r1", "refund", json!({"cents": 500})),
            _ => iris::model::ModelResponse {
                text: match request.messages.last() {
                    Some(Message::Tool { result, .. }) => Some(result.text_content()),
                    _ => None,
                },
                ..Default::default()
            },
        })
    })
}

/// Asks which card to charge, then says how the question ended.
fn asking_model() -> FnModel {
    FnModel::new(|request| {
        Ok(match request.messages.last() {
            Some(Message::Tool { result, .. }) => iris::model::ModelResponse {
                text: Some(format!(
                    "question {}",
                    result.data().map_or(Value::Null, |d| d["status"].clone())
                )),
                ..Default::default()
            },
            _ => iris::model::ModelResponse {
                tool_calls: vec![ToolUseBlock::new(
                    "q1",
                    "ask_question",
                    json!({"questions": [{
                        "question": "Which card?",
                        "header": "Card",
                        "options": ["visa", "amex"],
                        "multi_select": false
                    }]}),
                )],
                ..Default::default()
            },
        })
    })
}

/// One replica: the `cashier` workflow on `port`, until it is killed.
async fn replica(port: u16, dir: &Path, mode: Mode) {
    let runner = match mode {
        // Counted, never reached: a replay settles each kept answer once.
        Mode::Allow | Mode::Ask => {
            AgentRunner::new(cashier_agent(mode == Mode::Ask), cashier(dir.to_path_buf()))
                .with_budget(iris::agent::Budget::new().requests(50).tool_calls(50))
        }
        Mode::Charges => AgentRunner::new(cashier_agent(false), charging_model()),
        Mode::Typed => AgentRunner::new(cashier_agent(false), typed_cashier(dir.to_path_buf()))
            .with_output(iris::agent::Output::of::<Receipt>()),
        Mode::Redacted => {
            AgentRunner::new(judged_cashier(dir), careless_cashier(dir.to_path_buf()))
        }
        Mode::Discovery => AgentRunner::new(refunding_agent(), refunding_model(dir.to_path_buf())),
        Mode::NestedQuestion => {
            let till = ChildAgent::new("till", "Charges orders.", cashier_agent(false)).model(
                model::asking_then_calling(vec![
                    ToolUseBlock::new("c1", "price", json!({})),
                    ToolUseBlock::new("c2", "send_receipt", json!({"to": "ann@example.com"})),
                    ToolUseBlock::new("c3", "charge", json!({"cents": 1200})),
                ]),
            );
            let lead = Agent::builder(
                ToolExecutor::builder(ToolRegistry::new())
                    .policy(RulePolicy::new().other(Rule::Allow).write(Rule::Allow))
                    .build()
                    .unwrap(),
            )
            .name("cashier")
            .child(till)
            .build()
            .unwrap();
            AgentRunner::new(lead, delegating_model()).with_questions(Questions::new())
        }
        Mode::Question => AgentRunner::new(cashier_agent(false), asking_model())
            .with_questions(Questions::new().expiring_after(Duration::from_millis(500))),
        Mode::Nested(_) | Mode::NestedAsk => {
            let depth = match mode {
                Mode::Nested(depth) => depth,
                _ => 1,
            };
            // The workflow keeps its name; its agent delegates the task.
            let mut below = ChildAgent::new("till", "Charges orders.", cashier_agent(false))
                .model(cashier(dir.to_path_buf()));
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
                below =
                    ChildAgent::new("till", "Charges orders.", middle).model(delegating_model());
            }
            let writes = if mode == Mode::NestedAsk {
                Rule::Ask
            } else {
                Rule::Allow
            };
            let lead = Agent::builder(
                ToolExecutor::builder(ToolRegistry::new())
                    .policy(RulePolicy::new().other(Rule::Allow).write(writes))
                    .build()
                    .unwrap(),
            )
            .name("cashier")
            .child(below)
            .build()
            .unwrap();
            AgentRunner::new(lead, delegating_model())
                .with_delegation(iris::agent::Delegation::new().max_depth(depth))
        }
    };
    let workflow = AgentWorkflow::new(runner, dir)
        .retry_after(Duration::from_millis(100), Duration::from_millis(500));
    let endpoint = Endpoint::builder().bind(workflow).build();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    iris::restate::serve(endpoint, listener, std::future::pending()).await;
}

#[tokio::test]
async fn replica_entry() {
    // Only a replica started by the tests below does anything here.
    if let Ok(args) = std::env::var("IRIS_RESTATE_REPLICA") {
        let mut parts = args.split('\n');
        let port = parts.next().unwrap().parse().unwrap();
        let dir = PathBuf::from(parts.next().unwrap());
        let mode = match parts.next() {
            Some("ask") => Mode::Ask,
            Some("nested") => Mode::Nested(1),
            Some("nested-2") => Mode::Nested(2),
            Some("nested-3") => Mode::Nested(3),
            Some("nested-ask") => Mode::NestedAsk,
            Some("question") => Mode::Question,
            Some("charges") => Mode::Charges,
            Some("discovery") => Mode::Discovery,
            Some("nested-question") => Mode::NestedQuestion,
            Some("typed") => Mode::Typed,
            Some("redacted") => Mode::Redacted,
            _ => Mode::Allow,
        };
        replica(port, &dir, mode).await;
    }
}

/// A replica process, killed on drop.
struct Replica {
    child: Child,
}

impl Replica {
    async fn start(port: u16, dir: &Path, mode: Mode, kill_at: Option<&str>) -> Self {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["replica_entry", "--exact", "--nocapture"])
            .env(
                "IRIS_RESTATE_REPLICA",
                format!("{port}\n{}\n{}", dir.display(), mode.as_str()),
            )
            .env_remove("IRIS_KILL_AT")
            .stdout(std::process::Stdio::null());
        if let Some(point) = kill_at {
            command.env("IRIS_KILL_AT", point);
        }
        let replica = Self {
            child: command.spawn().unwrap(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                Instant::now() < deadline,
                "the replica did not listen in 30 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        replica
    }

    /// Waits for the replica to die by its own hand; how it died.
    async fn died(mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the replica did not die in 60 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap()),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = self.child.wait();
    }
}

/// Starts run `run` of the workflow; the ingress's answer.
async fn start(server: &RestateServer, run: &str) -> Value {
    let (status, answer) = server
        .post(
            &format!("/cashier/{run}/run/send"),
            Some(&json!({"task": "Charge order 7 and send the receipt."})),
        )
        .await;
    assert!(status < 300, "starting {run}: {status} {answer}");
    answer
}

/// Waits for run `run` to end; its report.
async fn report(server: &RestateServer, run: &str) -> RunReport {
    let (status, answer) = server
        .get(&format!("/restate/workflow/cashier/{run}/attach"))
        .await;
    assert_eq!(status, 200, "the run {run} ends: {answer}");
    iris::serde_json::from_value(answer).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_endpoint_is_replaced_and_no_finished_call_runs_again() {
    let server = RestateServer::start().await;
    let port = free_port();
    let uri = format!("http://127.0.0.1:{port}");

    let clean = tempfile::tempdir().unwrap();
    let replica = Replica::start(port, clean.path(), Mode::Allow, None).await;
    server.register(&uri).await;
    start(&server, "clean").await;
    let uninterrupted = report(&server, "clean").await;
    drop(replica);
    assert_eq!(lines(&clean.path().join("charges.txt")).len(), 1);
    assert_eq!(
        uninterrupted.text,
        "1200 | receipt sent to ann@example.com | charged 1200"
    );

    for point in POINTS {
        let dir = tempfile::tempdir().unwrap();
        let first = Replica::start(port, dir.path(), Mode::Allow, Some(point)).await;
        let run = format!("run-{point}");
        start(&server, &run).await;
        let ended = first.died().await;
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&ended),
            Some(9),
            "the first replica is killed at {point}"
        );
        let second = Replica::start(port, dir.path(), Mode::Allow, None).await;
        let report = report(&server, &run).await;
        drop(second);
        let history = &report.state.messages;

        let charges = lines(&dir.path().join("charges.txt")).len();
        let receipts = lines(&dir.path().join("receipts.txt")).len();
        // Asked once per step; a step the first replica died inside is
        // asked again, never one whose answer was kept.
        let asked = lines(&dir.path().join("asked.txt"));
        let mut expected = vec!["1", "2"];
        if let Some(step) = point.strip_prefix("model_step_") {
            let at = expected.iter().position(|s| *s == step).unwrap();
            expected.insert(at, step);
        }
        assert_eq!(asked, expected, "the model's asks ({point})");
        // The budget's ledger after a replay: each step's request and each
        // call counted once, as in the uninterrupted run.
        assert_eq!(
            (report.state.spent.requests, report.state.spent.tool_calls),
            (
                uninterrupted.state.spent.requests,
                uninterrupted.state.spent.tool_calls
            ),
            "{point}"
        );
        assert_eq!(report.state.spent.requests, 2, "{point}");
        assert_eq!(
            receipts, 1,
            "the idempotent write took effect once ({point})"
        );
        // A replay runs no call whose outcome was kept: the read runs again
        // only when it was cut off inside its body, the idempotent write
        // only when cut off before its outcome was kept.
        let prices = lines(&dir.path().join("prices.txt")).len();
        let receipt_calls = lines(&dir.path().join("receipt_calls.txt")).len();
        assert_eq!(
            (prices, receipt_calls),
            (
                1 + usize::from(point == "in_price"),
                1 + usize::from(point == "after_receipt")
            ),
            "the calls a replay ran again ({point})"
        );
        let charge = result_of(history, "c3");
        match point {
            // Cut off between its claim and its kept result: the charge may
            // or may not have happened, and is not made again.
            "before_charge" | "in_charge" => {
                assert_eq!(
                    charge.error_kind(),
                    Some(ToolErrorKind::Interrupted),
                    "{point}: {}",
                    charge.text_content()
                );
                let expected = usize::from(point == "in_charge");
                assert_eq!(charges, expected, "the charge ran at most once ({point})");
            }
            // Between journaled steps: exactly once, and the run is the
            // uninterrupted one.
            _ => {
                assert_eq!(charges, 1, "the charge ran exactly once ({point})");
                assert_eq!(history, &uninterrupted.state.messages, "{point}");
            }
        }
    }
}

/// Run `run` of a fresh server, its first replica (in `dir`, serving as
/// `mode`) killed at `point` and a second one taking it over: its report.
async fn killed_then_reported(dir: &Path, mode: Mode, point: &str, run: &str) -> RunReport {
    let server = RestateServer::start().await;
    let port = free_port();
    let first = Replica::start(port, dir, mode, Some(point)).await;
    server.register(&format!("http://127.0.0.1:{port}")).await;
    start(&server, run).await;
    let ended = first.died().await;
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&ended),
        Some(9),
        "the first replica is killed at {point}"
    );
    let second = Replica::start(port, dir, mode, None).await;
    let report = report(&server, run).await;
    drop(second);
    report
}

/// Polls `status` until the run waits; what waits.
async fn waiting(server: &RestateServer, run: &str) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, view) = server.post(&format!("/cashier/{run}/status"), None).await;
        assert_eq!(status, 200, "status of {run}: {view}");
        if view["status"] == "waiting" {
            return view["waiting"].as_array().unwrap().clone();
        }
        assert!(
            Instant::now() < deadline,
            "the run {run} never waited: {view}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_through_the_ingress_finishes_a_run_whose_replica_died() {
    let server = RestateServer::start().await;
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let first = Replica::start(port, dir.path(), Mode::Ask, None).await;
    server.register(&format!("http://127.0.0.1:{port}")).await;
    let (status, early) = server
        .post(
            "/cashier/order-9/decide",
            Some(&json!({"call_id": "c3", "decision": {"decision": "deny", "reason": "no"}})),
        )
        .await;
    assert_eq!(
        status, 409,
        "a run that has not started has nothing to decide: {early}"
    );
    start(&server, "order-9").await;
    let waiting = waiting(&server, "order-9").await;
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    assert_eq!(waiting[0]["id"], "c3");
    assert_eq!(waiting[0]["item"]["kind"], "approval");
    assert_eq!(waiting[0]["item"]["request"]["tool"], "charge");
    assert_eq!(lines(&dir.path().join("charges.txt")).len(), 0);

    // The replica that paused the run dies; another takes its place.
    drop(first);
    let _second = Replica::start(port, dir.path(), Mode::Ask, None).await;

    let decide = |call: &str, decision: Value| {
        let body = json!({"call_id": call, "decision": decision});
        let server = &server;
        async move { server.post("/cashier/order-9/decide", Some(&body)).await }
    };
    let (status, refused) = decide(
        "c3",
        json!({"decision": "approve", "approval_id": "not-the-request-shown"}),
    )
    .await;
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused
            .to_string()
            .contains("approve the request that is shown"),
        "{refused}"
    );
    let (status, refused) = decide("c9", json!({"decision": "deny", "reason": "no"})).await;
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused.to_string().contains("`c9` does not wait"),
        "{refused}"
    );
    let (status, refused) = server
        .post("/cashier/order-9/decide", Some(&json!({"call": "c3"})))
        .await;
    assert_eq!(status, 400, "{refused}");
    assert!(refused.to_string().contains("send JSON like"), "{refused}");

    let approval_id = waiting[0]["item"]["request"]["approval_id"].clone();
    let (status, answer) = decide(
        "c3",
        json!({"decision": "approve", "approval_id": approval_id}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let (status, again) = decide(
        "c3",
        json!({"decision": "deny", "reason": "changed my mind"}),
    )
    .await;
    assert_eq!(status, 409, "a second decision is refused: {again}");

    let report = report(&server, "order-9").await;
    assert_eq!(
        report.text,
        "1200 | receipt sent to ann@example.com | charged 1200"
    );
    assert_eq!(lines(&dir.path().join("charges.txt")), ["1200"]);
    assert_eq!(lines(&dir.path().join("receipts.txt")).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_starting_the_same_run_get_one_run() {
    let server = RestateServer::start().await;
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let _replica = Replica::start(port, dir.path(), Mode::Allow, None).await;
    server.register(&format!("http://127.0.0.1:{port}")).await;
    let (a, b) = tokio::join!(start(&server, "order-5"), start(&server, "order-5"));
    let mut statuses = [a["status"].as_str().unwrap(), b["status"].as_str().unwrap()];
    statuses.sort_unstable();
    assert_eq!(statuses, ["Accepted", "PreviouslyAccepted"], "{a} {b}");
    assert_eq!(a["invocationId"], b["invocationId"]);
    let report = report(&server, "order-5").await;
    assert_eq!(
        report.text,
        "1200 | receipt sent to ann@example.com | charged 1200"
    );
    assert_eq!(lines(&dir.path().join("charges.txt")), ["1200"]);
    // A run id names one run: starting it again after it ended is refused.
    let again = start(&server, "order-5").await;
    assert_eq!(again["status"], "PreviouslyAccepted", "{again}");
    assert_eq!(lines(&dir.path().join("charges.txt")), ["1200"]);
}

/// The same kills inside a child agent at depth 1, 2 and 3: its steps are
/// journaled in the root run's invocation, so a replacement replica replays
/// the child where it was cut off, never asks its model again for a kept
/// answer, and never runs a finished child call again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_endpoint_inside_a_child_agent_is_replaced_and_no_finished_call_runs_again() {
    let server = RestateServer::start().await;
    let port = free_port();
    let uri = format!("http://127.0.0.1:{port}");
    let mut registered = false;
    for depth in 1..=3 {
        let mode = Mode::Nested(depth);
        let lead = "lead: ".repeat(depth as usize);
        let clean = tempfile::tempdir().unwrap();
        let replica = Replica::start(port, clean.path(), mode, None).await;
        if !registered {
            server.register(&uri).await;
            registered = true;
        }
        let clean_run = format!("nested-{depth}-clean");
        start(&server, &clean_run).await;
        let uninterrupted = report(&server, &clean_run).await;
        drop(replica);
        assert_eq!(
            uninterrupted.text,
            format!("{lead}1200 | receipt sent to ann@example.com | charged 1200")
        );
        let clean_till = deepest(&uninterrupted.state).messages.clone();
        assert_eq!(lines(&clean.path().join("charges.txt")).len(), 1);

        for point in POINTS {
            let dir = tempfile::tempdir().unwrap();
            let first = Replica::start(port, dir.path(), mode, Some(point)).await;
            let run = format!("nested-{depth}-{point}");
            start(&server, &run).await;
            let ended = first.died().await;
            assert_eq!(
                std::os::unix::process::ExitStatusExt::signal(&ended),
                Some(9),
                "depth {depth}: the first replica is killed at {point}"
            );
            let second = Replica::start(port, dir.path(), mode, None).await;
            let report = report(&server, &run).await;
            drop(second);
            let till = deepest(&report.state);
            let charges = lines(&dir.path().join("charges.txt")).len();
            let receipts = lines(&dir.path().join("receipts.txt")).len();
            let asked = lines(&dir.path().join("asked.txt"));
            let mut expected = vec!["1", "2"];
            if let Some(step) = point.strip_prefix("model_step_") {
                let at = expected.iter().position(|s| *s == step).unwrap();
                expected.insert(at, step);
            }
            assert_eq!(
                asked, expected,
                "depth {depth}: the till's model's asks ({point})"
            );
            assert_eq!(
                receipts, 1,
                "depth {depth}: the receipt took effect once ({point})"
            );
            let charge = result_of(&till.messages, "c3");
            match point {
                "before_charge" | "in_charge" => {
                    assert_eq!(
                        charge.error_kind(),
                        Some(ToolErrorKind::Interrupted),
                        "depth {depth}, {point}: {}",
                        charge.text_content()
                    );
                    let expected = usize::from(point == "in_charge");
                    assert_eq!(charges, expected, "depth {depth}: at most once ({point})");
                }
                _ => {
                    assert_eq!(charges, 1, "depth {depth}: exactly once ({point})");
                    assert_eq!(till.messages, clean_till, "depth {depth}: {point}");
                    assert_eq!(report.text, uninterrupted.text, "depth {depth}: {point}");
                }
            }
        }
    }
}

/// The deepest child's run of a run that delegated down a chain.
fn deepest(state: &iris::agent::RunState) -> &iris::agent::RunState {
    let mut run = state;
    while let Some(child) = run.children.first() {
        run = &child.state;
    }
    run
}

/// Approvals inside a child agent, answered through the ingress by their
/// paths after the replica that paused the run died: the writes run once,
/// on the replica that took over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_inside_a_child_are_answered_by_path_from_any_replica() {
    let server = RestateServer::start().await;
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let first = Replica::start(port, dir.path(), Mode::NestedAsk, None).await;
    server.register(&format!("http://127.0.0.1:{port}")).await;
    start(&server, "order-11").await;
    let waiting = waiting(&server, "order-11").await;
    let ids: Vec<&str> = waiting.iter().map(|w| w["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["t1/c2", "t1/c3"], "{waiting:?}");
    assert_eq!(waiting[1]["agents"], json!(["till"]));
    assert!(lines(&dir.path().join("charges.txt")).is_empty());

    drop(first);
    let _second = Replica::start(port, dir.path(), Mode::NestedAsk, None).await;
    for item in &waiting {
        let body = json!({
            "item_id": item["id"],
            "reply": {"decision": "approve", "approval_id": item["item"]["request"]["approval_id"]}
        });
        let (status, answer) = server.post("/cashier/order-11/decide", Some(&body)).await;
        assert_eq!(status, 200, "{answer}");
    }
    let (status, refused) = server
        .post(
            "/cashier/order-11/decide",
            Some(&json!({"item_id": "t1", "reply": {"decision": "deny", "reason": "no"}})),
        )
        .await;
    assert_eq!(status, 409, "the child itself is not replied to: {refused}");

    let report = report(&server, "order-11").await;
    assert_eq!(
        report.text,
        "lead: 1200 | receipt sent to ann@example.com | charged 1200"
    );
    assert_eq!(lines(&dir.path().join("charges.txt")), ["1200"]);
    assert_eq!(lines(&dir.path().join("receipts.txt")).len(), 1);
}

/// A question nobody answers expires on a durable timer, whichever replica
/// runs the workflow then: the model is told it expired and goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_question_expires_on_a_durable_timer() {
    let server = RestateServer::start().await;
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let first = Replica::start(port, dir.path(), Mode::Question, None).await;
    server.register(&format!("http://127.0.0.1:{port}")).await;
    start(&server, "asked").await;
    let waiting = waiting(&server, "asked").await;
    assert_eq!(waiting[0]["id"], "q1");
    assert_eq!(waiting[0]["item"]["kind"], "question");
    // The replica that asked dies; the timer fires on the next one.
    drop(first);
    let _second = Replica::start(port, dir.path(), Mode::Question, None).await;
    let report = report(&server, "asked").await;
    assert_eq!(report.text, "question \"expired\"");
}

/// Each write is claimed when its body starts and its result kept when it
/// ends, in call order; the receipt is idempotent, claimed by none, and its
/// outcome kept in one entry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_write_is_claimed_when_its_body_starts() {
    let server = RestateServer::start().await;
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let replica = Replica::start(port, dir.path(), Mode::Charges, None).await;
    server.register(&format!("http://127.0.0.1:{port}")).await;
    start(&server, "writes").await;
    let report = report(&server, "writes").await;
    drop(replica);
    assert_eq!(
        lines(&dir.path().join("charges.txt")),
        ["100", "200", "300"]
    );
    let rows = server
        .query(
            "SELECT j.index, j.entry_type, j.name FROM sys_journal j \
             JOIN sys_invocation i ON j.id = i.id \
             WHERE i.target_service_key = 'writes' AND i.target_handler_name = 'run' \
             ORDER BY j.index",
        )
        .await;
    assert_eq!(
        report.text,
        "charged 100 | charged 200 | receipt sent to ann@example.com | charged 300"
    );
    // The entries that wait for the server to keep them: `run`s.
    let runs: Vec<&str> = rows
        .iter()
        .filter(|row| row["entry_type"] == "Command: Run")
        .map(|row| row["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        runs,
        [
            "model step 1",
            "claim of c1",
            "result of c1",
            "claim of c2",
            "result of c2",
            "outcome of c3",
            "claim of c4",
            "result of c4",
            "model step 2"
        ],
        "{rows:#?}"
    );
}

/// Killed inside the first of a step's three charges, after its effect:
/// the replica that takes over reports that one interrupted and does not
/// run it again, and runs the two that had not started, once each; a write
/// that never started is never reported interrupted. The idempotent
/// receipt runs once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_never_started_is_never_reported_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let report = killed_then_reported(dir.path(), Mode::Charges, "in_charge", "cut").await;
    assert_eq!(
        lines(&dir.path().join("charges.txt")),
        ["100", "200", "300"]
    );
    assert_eq!(lines(&dir.path().join("receipts.txt")).len(), 1);
    let history = &report.state.messages;
    let cut = result_of(history, "c1");
    assert_eq!(
        cut.error_kind(),
        Some(ToolErrorKind::Interrupted),
        "{}",
        cut.text_content()
    );
    for call in ["c2", "c3", "c4"] {
        let result = result_of(history, call);
        assert_eq!(result.as_error(), None, "{call}: {}", result.text_content());
    }
}

/// A tool disclosed by `tool_search` in a step the journal kept is offered
/// again on a replay, which does not run the search again: the replica that
/// takes over after the refund's step finds the refund kept and does not
/// make it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_offers_what_a_kept_search_disclosed() {
    let dir = tempfile::tempdir().unwrap();
    let report = killed_then_reported(dir.path(), Mode::Discovery, "model_step_3", "refund").await;
    assert_eq!(report.text, "refunded 500");
    assert_eq!(lines(&dir.path().join("refunds.txt")), ["500"]);
    assert_eq!(
        report
            .state
            .disclosed
            .iter()
            .map(iris::definition::ToolName::as_str)
            .collect::<Vec<_>>(),
        ["refund"]
    );
}

/// A question a child agent asks is answered through the ingress while no
/// replica is alive: the answer waits in Restate, the next replica to come
/// up takes it, and the child goes on with it, its write made once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_inside_a_child_is_answered_while_no_replica_is_alive() {
    let server = RestateServer::start().await;
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let first = Replica::start(port, dir.path(), Mode::NestedQuestion, None).await;
    server.register(&format!("http://127.0.0.1:{port}")).await;
    start(&server, "order-12").await;
    let waiting = waiting(&server, "order-12").await;
    let ids: Vec<&str> = waiting.iter().map(|w| w["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["t1/q1"], "{waiting:?}");
    drop(first);

    // No replica: the answer is accepted and waits for one.
    let question_id = waiting[0]["item"]["request"]["question_id"].clone();
    assert!(question_id.is_string(), "{waiting:?}");
    let body = json!({
        "item_id": "t1/q1",
        "reply": {"answer": "answered", "question_id": question_id, "answers": [{"selected": ["amex"]}]}
    });
    let (status, accepted) = server
        .post("/cashier/order-12/decide/send", Some(&body))
        .await;
    assert!(status < 300, "{status} {accepted}");
    assert!(lines(&dir.path().join("charges.txt")).is_empty());

    let _second = Replica::start(port, dir.path(), Mode::NestedQuestion, None).await;
    let report = report(&server, "order-12").await;
    assert_eq!(
        report.text,
        "lead: The person answered:\n- Which card? -> amex | 1200 | receipt sent to ann@example.com | charged 1200"
    );
    let till = &report.state.children[0].state;
    assert!(
        result_of(&till.messages, "q1")
            .text_content()
            .contains("amex"),
        "{:?}",
        result_of(&till.messages, "q1")
    );
    assert_eq!(lines(&dir.path().join("charges.txt")), ["1200"]);
    assert_eq!(lines(&dir.path().join("receipts.txt")).len(), 1);
}

#[tokio::test]
async fn a_typed_output_is_kept_through_a_killed_replica() {
    let dir = tempfile::tempdir().unwrap();
    // Killed inside the third step: the calls' results and the answer sent
    // back with its fault are kept, and the next replica asks only that
    // step again.
    let report = killed_then_reported(dir.path(), Mode::Typed, "model_step_3", "typed").await;
    assert_eq!(lines(&dir.path().join("asked.txt")), ["1", "2", "3", "3"]);
    assert_eq!(lines(&dir.path().join("charges.txt")).len(), 1);
    assert_eq!(report.state.output_faults, 1);
    let receipt: Receipt =
        iris::serde_json::from_value(report.state.output.clone().unwrap()).unwrap();
    assert_eq!(
        receipt,
        Receipt {
            charged_cents: 1200,
            sent_to: "ann@example.com".to_owned()
        }
    );
}

/// A `model.after` hook's redaction reaches the journal, not the model's
/// raw words; killed inside the third step, the next replica takes the
/// kept verdicts of the first two (the rude answer sent back) without the
/// hooks judging them again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_journal_keeps_answers_as_the_hooks_left_them() {
    let server = RestateServer::start().await;
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let first = Replica::start(port, dir.path(), Mode::Redacted, Some("model_step_3")).await;
    server.register(&format!("http://127.0.0.1:{port}")).await;
    start(&server, "redacted").await;
    let ended = first.died().await;
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&ended),
        Some(9)
    );
    let second = Replica::start(port, dir.path(), Mode::Redacted, None).await;
    let report = report(&server, "redacted").await;
    drop(second);
    assert_eq!(report.text, "Your card [card] was charged 1200.");
    assert_eq!(lines(&dir.path().join("asked.txt")), ["1", "2", "3", "3"]);
    assert_eq!(lines(&dir.path().join("charges.txt")), ["1200"]);
    // Steps 1 and 2 judged once (by the first replica), step 3 once (by
    // the second, the first died before its answer came).
    assert_eq!(lines(&dir.path().join("judged.txt")).len(), 3);
    let rows = server
        .query(
            "SELECT j.index, j.entry_type, j.name, j.entry_json FROM sys_journal j \
             JOIN sys_invocation i ON j.id = i.id \
             WHERE i.target_service_key = 'redacted' ORDER BY j.index",
        )
        .await;
    let journal = journal_text(&rows);
    assert!(journal.contains("model.after on step 2"), "{journal}");
    assert!(journal.contains("[card]"), "{journal}");
    assert!(!journal.contains("4111"), "{journal}");
}

/// Every entry of `rows` as text: its JSON, with each payload (an array of
/// bytes) read as UTF-8.
fn journal_text(rows: &[Value]) -> String {
    fn payloads(value: &Value, out: &mut String) {
        match value {
            Value::Array(items)
                if !items.is_empty()
                    && items.iter().all(|i| i.as_u64().is_some_and(|b| b < 256)) =>
            {
                let bytes: Vec<u8> = items
                    .iter()
                    .filter_map(|i| i.as_u64().and_then(|b| u8::try_from(b).ok()))
                    .collect();
                out.push_str(&String::from_utf8_lossy(&bytes));
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|i| payloads(i, out)),
            Value::Object(map) => map.values().for_each(|v| payloads(v, out)),
            Value::String(text) => {
                out.push_str(text);
                out.push('\n');
                if let Ok(inner) = iris::serde_json::from_str::<Value>(text) {
                    payloads(&inner, out);
                }
            }
            _ => {}
        }
    }
    let mut out = String::new();
    for row in rows {
        payloads(row, &mut out);
    }
    out
}
