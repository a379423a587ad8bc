//! The testing kit through the public API: a scripted run and what its
//! transcript asserts, the same run streamed, a script that runs out,
//! approvals decided either way, denials by policy and by a hook, an
//! artifact, a whole catalog called by the automatic model, one tool
//! through the harness; and every assertion failing on a wrong run with a
//! message that names what was expected and the calls that were made.

use std::sync::Arc;

use iris::agent::{Agent, AgentRunner, RunContext};
use iris::hooks::{BeforeAnswer, Hook, HookEvent, HookRegistration};
use iris::serde_json::{Value, json};
use iris::testing::{
    AutoModel, Decided, DeniedBy, ScriptedModel, ToolHarness, Trajectory, Transcript, Turn,
    approve_all, deny_all, run_to_end,
};
use iris::{Rule, RulePolicy, RunId, ToolExecutor, ToolRegistry};

/// Look up an order.
#[iris::tool(read_only)]
fn find_order(
    /// The order number.
    number: u32,
) -> String {
    format!("order {number}: 2 teas, unpaid")
}

/// Charge an order.
#[iris::tool(write)]
fn charge(
    /// The order number.
    number: u32,
    /// Cents to charge.
    cents: u64,
) -> String {
    format!("charged {cents} for order {number}")
}

/// Print a long statement.
#[iris::tool(read_only)]
fn statement() -> String {
    "a statement line\n".repeat(500)
}

fn executor(policy: RulePolicy, hooks: Vec<HookRegistration>) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry.register(FindOrder).unwrap();
    registry.register(Charge).unwrap();
    registry.register(Statement).unwrap();
    let mut builder = ToolExecutor::builder(registry)
        .policy(policy)
        .max_result_chars(1_000);
    for hook in hooks {
        builder = builder.hook(hook);
    }
    builder.build().unwrap()
}

fn shop_script() -> ScriptedModel {
    ScriptedModel::new([
        Turn::call("find_order", json!({"number": 7})).with_usage(120, 8),
        Turn::call("charge", json!({"number": 7, "cents": 450})).with_text("Charging it."),
        Turn::text("Order 7 is paid."),
    ])
}

async fn shop_run(
    model: ScriptedModel,
    policy: RulePolicy,
    hooks: Vec<HookRegistration>,
    decide: impl FnMut(&iris::permissions::ApprovalRequest) -> iris::ApprovalDecision,
) -> Transcript {
    let agent = Agent::builder(executor(policy, hooks))
        .name("shop")
        .instructions("Settle orders.")
        .build()
        .unwrap();
    let runner = AgentRunner::new(agent, model);
    let dir = tempfile::tempdir().unwrap();
    let cx = RunContext::new(dir.path(), RunId::new("order-7"));
    run_to_end(&runner, "Settle order 7.", &cx, decide)
        .await
        .unwrap()
        .1
}

/// A `tool.before` hook that refuses every charge.
fn refuse_charges() -> HookRegistration {
    HookRegistration::new(
        "no-charges",
        HookEvent::ToolBefore,
        Hook::before(|input: &iris::hooks::HookInput| {
            if input.tool.as_ref().is_some_and(|t| t.as_str() == "charge") {
                BeforeAnswer::deny("charges are frozen")
            } else {
                BeforeAnswer::Allow
            }
        }),
    )
}

fn allow_all() -> RulePolicy {
    RulePolicy::new().write(Rule::Allow)
}

/// The message a failing assertion panics with.
fn failure(assertion: impl FnOnce()) -> String {
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(assertion))
        .expect_err("the assertion fails");
    message_of(panic.as_ref())
}

fn message_of(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

#[tokio::test]
async fn a_scripted_run_and_what_its_transcript_asserts() {
    let model = Arc::new(shop_script());
    let transcript = shop_run_shared(&model).await;
    transcript
        .assert_called("find_order")
        .assert_called_with("charge", &json!({"cents": 450}))
        .assert_called_where("charge", "charge order 7", |a| a["number"] == 7)
        .assert_called_times("charge", 1)
        .assert_not_called("statement")
        .assert_in_order(&["find_order", "charge"])
        .assert_trajectory(Trajectory::Strict, &["find_order", "charge"])
        .assert_trajectory(Trajectory::Unordered, &["charge", "find_order"])
        .assert_trajectory(Trajectory::Subset, &["charge", "find_order", "statement"])
        .assert_trajectory(Trajectory::Superset, &["charge"])
        .assert_answer_contains("paid");
    assert_eq!(transcript.task.as_deref(), Some("Settle order 7."));
    assert_eq!(transcript.steps.len(), 3);
    assert_eq!(transcript.steps[1].text.as_deref(), Some("Charging it."));

    // What the model was offered and sent, request by request.
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].instructions.as_deref(), Some("Settle orders."));
    assert_eq!(
        requests[0].tool_names(),
        ["find_order", "charge", "statement"]
    );
    assert_eq!(
        requests[2].messages.len(),
        5,
        "task, two calls, two results"
    );
    assert!(model.is_exhausted());
}

/// The shop run with a model the test keeps a handle on.
async fn shop_run_shared(model: &Arc<ScriptedModel>) -> Transcript {
    let agent = Agent::builder(executor(allow_all(), Vec::new()))
        .name("shop")
        .instructions("Settle orders.")
        .build()
        .unwrap();
    let runner = AgentRunner::new(agent, Arc::clone(model));
    let dir = tempfile::tempdir().unwrap();
    let cx = RunContext::new(dir.path(), RunId::new("order-7"));
    run_to_end(&runner, "Settle order 7.", &cx, approve_all())
        .await
        .unwrap()
        .1
}

/// Counts the events it sees; its presence makes the runner stream.
struct Listening;

impl iris::observe::RunEventObserver for Listening {
    fn on_event(&self, _event: &iris::observe::RunEvent) {}
}

#[tokio::test]
async fn a_streamed_run_is_the_whole_run() {
    let whole = shop_run(shop_script(), allow_all(), Vec::new(), approve_all()).await;
    for seed in [0, 1, 42] {
        let mut registry = ToolRegistry::new();
        registry.register(FindOrder).unwrap();
        registry.register(Charge).unwrap();
        registry.register(Statement).unwrap();
        let executor = ToolExecutor::builder(registry)
            .policy(allow_all())
            .max_result_chars(1_000)
            .observer(Listening)
            .build()
            .unwrap();
        let agent = Agent::builder(executor).name("shop").build().unwrap();
        let runner = AgentRunner::new(agent, shop_script().with_seed(seed));
        let dir = tempfile::tempdir().unwrap();
        let cx = RunContext::new(dir.path(), RunId::new("order-7"));
        let (_, streamed) = run_to_end(&runner, "Settle order 7.", &cx, approve_all())
            .await
            .unwrap();
        assert_eq!(streamed.steps, whole.steps, "seed {seed}");
        assert_eq!(streamed.answer, whole.answer, "seed {seed}");
    }
}

#[tokio::test]
async fn a_script_that_runs_out_names_the_turn() {
    let model = ScriptedModel::new([Turn::call("find_order", json!({"number": 7}))]);
    let agent = Agent::builder(executor(allow_all(), Vec::new()))
        .name("shop")
        .build()
        .unwrap();
    let runner = AgentRunner::new(agent, model);
    let dir = tempfile::tempdir().unwrap();
    let cx = RunContext::new(dir.path(), RunId::new("order-7"));
    let err = runner
        .run("Settle order 7.", &cx)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("asked for turn 2"), "{err}");
    assert!(err.contains("its script has 1 turn"), "{err}");
    assert!(
        err.contains("order 7: 2 teas"),
        "the newest message is shown: {err}"
    );
}

#[tokio::test]
async fn approvals_decided_either_way() {
    let ask = || RulePolicy::new().write(Rule::Ask);
    let approved = shop_run(shop_script(), ask(), Vec::new(), approve_all()).await;
    approved
        .assert_paused_for("charge")
        .assert_decided("charge", Decided::Approved)
        .assert_answer_contains("paid");
    assert_eq!(approved.approvals.len(), 1);

    let denied = shop_run(shop_script(), ask(), Vec::new(), deny_all("not today")).await;
    denied
        .assert_paused_for("charge")
        .assert_decided("charge", Decided::Denied)
        .assert_denied("charge", DeniedBy::Person);
    let message = failure(|| {
        denied.assert_denied("charge", DeniedBy::Policy);
    });
    assert!(
        message.contains("denied by the permission policy"),
        "{message}"
    );
    let message = failure(|| {
        denied.assert_decided("charge", Decided::Approved);
    });
    assert!(
        message.contains("to be Approved, but it was Denied"),
        "{message}"
    );
    let message = failure(|| {
        denied.assert_paused_for("find_order");
    });
    assert!(message.contains("approvals asked: [charge]"), "{message}");
}

#[tokio::test]
async fn denials_by_policy_and_by_hook() {
    let by_policy = shop_run(
        shop_script(),
        RulePolicy::new().write(Rule::Deny),
        Vec::new(),
        approve_all(),
    )
    .await;
    by_policy.assert_denied("charge", DeniedBy::Policy);

    let refuse_charges = refuse_charges();
    let by_hook = shop_run(
        shop_script(),
        allow_all(),
        vec![refuse_charges],
        approve_all(),
    )
    .await;
    by_hook
        .assert_denied("charge", DeniedBy::Hook)
        .assert_failed("charge", iris::ToolErrorKind::DeniedByHook);
    let message = failure(|| {
        by_hook.assert_denied("find_order", DeniedBy::Hook);
    });
    assert!(
        message.contains("find_order {\"number\":7} -> ok"),
        "{message}"
    );
    assert!(message.contains("-> error denied_by_hook"), "{message}");
}

#[tokio::test]
async fn an_artifact_and_a_redacted_snapshot() {
    let model = ScriptedModel::new([Turn::call("statement", json!({})), Turn::text("Done.")]);
    let transcript = shop_run(model, allow_all(), Vec::new(), approve_all()).await;
    transcript.assert_artifact_saved("statement");
    let redacted = transcript.redacted();
    let call = &redacted["steps"][0]["calls"][0];
    assert_eq!(call["call_id"], "call#1");
    assert_eq!(call["outcome"]["artifacts"][0], "artifact#1");
    let message = failure(|| {
        transcript.assert_artifact_saved("find_order");
    });
    assert!(message.contains("to save an artifact"), "{message}");
}

/// One assertion, applied to a transcript.
type Assertion = dyn FnOnce(&Transcript);

#[tokio::test]
async fn every_assertion_names_what_was_expected_and_what_the_run_did() {
    let transcript = shop_run(shop_script(), allow_all(), Vec::new(), approve_all()).await;
    let made = "the run made 2 call(s):\n  1. find_order {\"number\":7} -> ok\n  2. charge";
    let cases: Vec<(String, Box<Assertion>)> = vec![
        (
            "expected a call of `refund`".into(),
            Box::new(|t| {
                t.assert_called("refund");
            }),
        ),
        (
            "expected a call of `charge` with arguments holding {\"cents\":999}".into(),
            Box::new(|t| {
                t.assert_called_with("charge", &json!({"cents": 999}));
            }),
        ),
        (
            "expected a call of `charge` whose arguments charge order 8".into(),
            Box::new(|t| {
                t.assert_called_where("charge", "charge order 8", |a| a["number"] == 8);
            }),
        ),
        (
            "expected 2 call(s) of `charge`, found 1".into(),
            Box::new(|t| {
                t.assert_called_times("charge", 2);
            }),
        ),
        (
            "expected no call of `charge`".into(),
            Box::new(|t| {
                t.assert_not_called("charge");
            }),
        ),
        (
            "expected no tool calls".into(),
            Box::new(|t| {
                t.assert_no_tools();
            }),
        ),
        (
            "found no `find_order` after the ones before it".into(),
            Box::new(|t| {
                t.assert_in_order(&["charge", "find_order"]);
            }),
        ),
        (
            "expected a trajectory Strict [charge, find_order], found [find_order, charge]".into(),
            Box::new(|t| {
                t.assert_trajectory(Trajectory::Strict, &["charge", "find_order"]);
            }),
        ),
        (
            "expected a trajectory Unordered [charge]".into(),
            Box::new(|t| {
                t.assert_trajectory(Trajectory::Unordered, &["charge"]);
            }),
        ),
        (
            "expected a trajectory Subset [charge]".into(),
            Box::new(|t| {
                t.assert_trajectory(Trajectory::Subset, &["charge"]);
            }),
        ),
        (
            "expected a trajectory Superset [charge, charge]".into(),
            Box::new(|t| {
                t.assert_trajectory(Trajectory::Superset, &["charge", "charge"]);
            }),
        ),
        (
            "expected a call of `charge` to fail with `timeout`".into(),
            Box::new(|t| {
                t.assert_failed("charge", iris::ToolErrorKind::Timeout);
            }),
        ),
        (
            "expected the answer to hold \"refunded\"".into(),
            Box::new(|t| {
                t.assert_answer_contains("refunded");
            }),
        ),
    ];
    for (expected, assertion) in cases {
        let transcript = transcript.clone();
        let message = failure(move || assertion(&transcript));
        assert!(
            message.contains(&expected),
            "{expected:?} not in: {message}"
        );
        if !expected.contains("answer") {
            assert!(message.contains(made), "the calls are listed: {message}");
        }
    }
}

#[tokio::test]
async fn the_automatic_model_calls_a_whole_catalog() {
    let model = Arc::new(AutoModel::new(3));
    let agent = Agent::builder(executor(allow_all(), Vec::new()))
        .name("shop")
        .build()
        .unwrap();
    let runner = AgentRunner::new(agent, Arc::clone(&model));
    let dir = tempfile::tempdir().unwrap();
    let cx = RunContext::new(dir.path(), RunId::new("smoke"));
    let (_, transcript) = run_to_end(&runner, "Call everything.", &cx, approve_all())
        .await
        .unwrap();
    transcript.assert_trajectory(
        Trajectory::Unordered,
        &["find_order", "charge", "statement"],
    );
    for call in transcript.calls() {
        assert!(
            matches!(call.outcome, iris::testing::CallOutcome::Ok { .. }),
            "generated arguments parse: {call:?}"
        );
    }
    assert_eq!(model.called(), ["charge", "find_order", "statement"]);
    transcript.assert_answer_contains("called charge, find_order, statement");
}

#[tokio::test]
async fn one_tool_through_the_harness() {
    let mut registry = ToolRegistry::new();
    iris::fs::register_file_tools(&mut registry).unwrap();
    registry.register(Charge).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()
        .unwrap();
    let harness = ToolHarness::for_executor(executor).unwrap();
    harness
        .write_file("config.yaml", "log_level: DEBUG\n")
        .unwrap();
    let edit = json!({"path": "config.yaml", "old_string": "DEBUG", "new_string": "INFO"});
    // The file tools' rule holds: no edit before a read.
    let refused = harness.call("edit_file", edit.clone()).await.unwrap();
    assert_eq!(
        refused.result().and_then(iris::ToolResult::error_kind),
        Some(iris::ToolErrorKind::StaleRead)
    );
    harness
        .call_ok("read_file", json!({"path": "config.yaml"}))
        .await;
    harness.call_ok("edit_file", edit).await;
    assert_eq!(
        harness.read_file("config.yaml").unwrap(),
        "log_level: INFO\n"
    );
    let charged = harness
        .call_ok("charge", json!({"number": 7, "cents": 100}))
        .await;
    assert_eq!(charged.text_content(), "charged 100 for order 7");

    let failed = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(
        harness.call_ok("charge", json!({"number": "seven"})),
    ))
    .await
    .expect_err("a call that fails fails call_ok");
    let message = message_of(failed.as_ref());
    assert!(
        message.contains("expected `charge` to succeed; it failed with `invalid_arguments`"),
        "{message}"
    );
    assert!(
        message.contains("testing_kit.rs"),
        "names the caller's line: {message}"
    );
}

#[test]
fn generated_arguments_follow_the_schema_and_the_seed() {
    let schema: Value = json!({
        "type": "object",
        "required": ["number", "cents"],
        "properties": {"number": {"type": "integer", "minimum": 1, "maximum": 3}, "cents": {"type": "integer"}}
    });
    let a = iris::testing::arguments_for(&schema, 9);
    assert_eq!(a, iris::testing::arguments_for(&schema, 9));
    assert!((1..=3).contains(&a["number"].as_i64().unwrap()), "{a}");
}

#[tokio::test]
async fn mcp_in_process_a_joined_server_and_a_mock_one() {
    use iris::definition::{ToolDefinition, ToolName};
    use iris::testing::mcp;

    // The shop's own executor, served over MCP in this process.
    let client = mcp::join(executor(allow_all(), Vec::new()), "shop")
        .await
        .unwrap();
    let mut names: Vec<String> = client.definitions().map(|d| d.name().to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        ["shop__charge", "shop__find_order", "shop__statement"]
    );

    // A mock server from a list of tools.
    let weather =
        ToolDefinition::builder(ToolName::new("weather").unwrap(), "The weather in a city.")
            .input_schema(json!({
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"]
            }))
            .build()
            .unwrap();
    let mock = mcp::mock_server(
        "forecast",
        [iris::tool::DynamicTool::new(
            weather,
            |input: Value, _| async move {
                iris::ToolResult::text(format!(
                    "sunny in {}",
                    input["city"].as_str().unwrap_or("?")
                ))
            },
        )],
    )
    .await
    .unwrap();

    // An agent whose tools are both servers' tools, driven by a script.
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).unwrap();
    mock.register_into(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()
        .unwrap();
    let agent = Agent::builder(executor).name("remote").build().unwrap();
    let model = ScriptedModel::new([
        Turn::calls([
            ("shop__find_order", json!({"number": 7})),
            ("forecast__weather", json!({"city": "Lyon"})),
        ]),
        Turn::text("Order 7 waits; it is sunny."),
    ]);
    let runner = AgentRunner::new(agent, model);
    let dir = tempfile::tempdir().unwrap();
    let cx = RunContext::new(dir.path(), RunId::new("remote"));
    let (_, transcript) = run_to_end(&runner, "Order 7 and the weather?", &cx, approve_all())
        .await
        .unwrap();
    let texts: Vec<String> = transcript
        .calls()
        .map(|c| match &c.outcome {
            iris::testing::CallOutcome::Ok { text, .. } => text.clone(),
            other => panic!("{} failed: {other:?}", c.tool),
        })
        .collect();
    assert_eq!(texts, ["order 7: 2 teas, unpaid", "sunny in Lyon"]);
}

#[tokio::test]
async fn the_hooks_that_fired_come_from_the_runs_events() {
    let log = iris::testing::EventLog::new();
    let refuse_charges = refuse_charges();
    let mut registry = ToolRegistry::new();
    registry.register(FindOrder).unwrap();
    registry.register(Charge).unwrap();
    registry.register(Statement).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(allow_all())
        .hook(refuse_charges)
        .observer(log.clone())
        .build()
        .unwrap();
    let agent = Agent::builder(executor).name("shop").build().unwrap();
    let runner = AgentRunner::new(agent, shop_script());
    let dir = tempfile::tempdir().unwrap();
    let cx = RunContext::new(dir.path(), RunId::new("order-7"));
    let (_, transcript) = run_to_end(&runner, "Settle order 7.", &cx, approve_all())
        .await
        .unwrap();
    let transcript = transcript.with_events(&log);
    transcript
        .assert_hook_fired("no-charges")
        .assert_hook_fired_on("no-charges", "charge")
        .assert_hook_fired_on("no-charges", "find_order")
        .assert_denied("charge", DeniedBy::Hook);
    assert_eq!(transcript.hooks.len(), 2, "{:?}", transcript.hooks);
    assert!(matches!(
        &transcript.hooks[1].outcome,
        iris::observe::HookOutcome::Denied { reason } if reason == "charges are frozen"
    ));
    let message = failure(|| {
        transcript.assert_hook_fired_on("no-charges", "statement");
    });
    assert!(
        message.contains(
            "the hooks that fired: `no-charges` on call `call_1_1`, `no-charges` on call `call_2_1`"
        ),
        "{message}"
    );

    // Without the run's events, the message says what is missing.
    let bare = shop_run(shop_script(), allow_all(), Vec::new(), approve_all()).await;
    let message = failure(|| {
        bare.assert_hook_fired("no-charges");
    });
    assert!(
        message.contains("give the executor an `EventLog`"),
        "{message}"
    );
}
