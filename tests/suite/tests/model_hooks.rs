//! Hooks on the model's turn: `model.before` refuses a request (an input
//! guardrail) or steers one turn (tools narrowed or extended within the
//! agent's, instructions added, settings changed); `model.after` refuses an
//! answer (an output guardrail: nothing of it runs), sends it back with
//! feedback, or redacts its text before it is recorded; a `run.started`
//! guard refuses the task. In code and as command hooks, from an agent
//! file, tree-wide over a child, and on a store without a half-recorded
//! step.

use std::sync::Arc;

use iris::agent::{Agent, AgentRunner, RunContext, RunOutcome};
use iris::hooks::{
    BeforeAnswer, CommandHook, Hook, HookInput, HookRegistration, ModelAfterAnswer,
    ModelBeforeAnswer, Steer,
};
use iris::model::Message;
use iris::observe::RunEvent;
use iris::serde_json::json;
use iris::testing::{EventLog, ScriptedModel, Turn};
use iris::{Rule, RulePolicy, RunId, ToolExecutor, ToolRegistry};

/// Today's date.
#[iris::tool(read_only)]
fn today() -> String {
    "2026-12-06".to_owned()
}

/// Send money to someone.
#[iris::tool(write)]
fn pay(
    /// In cents.
    cents: u64,
    #[ctx] cx: &iris::ToolContext,
) -> String {
    std::fs::write(cx.workspace_root().join("paid.txt"), cents.to_string()).unwrap();
    format!("paid {cents}")
}

/// Where an order is: deferred, found through search.
#[iris::tool(read_only, deferred)]
fn order_status(number: u32) -> String {
    format!("order {number}: shipped")
}

fn agent(hooks: Vec<HookRegistration>, log: Option<EventLog>) -> Agent {
    let mut registry = ToolRegistry::new();
    registry.register(Today).unwrap();
    registry.register(Pay).unwrap();
    registry.register(OrderStatus).unwrap();
    let mut executor = ToolExecutor::builder(registry).policy(RulePolicy::new().write(Rule::Allow));
    for hook in hooks {
        executor = executor.hook(hook);
    }
    if let Some(log) = log {
        executor = executor.observer(log);
    }
    Agent::builder(executor.build().unwrap())
        .name("desk")
        .instructions("Help with orders.")
        .build()
        .unwrap()
}

fn cx(dir: &tempfile::TempDir, run: &str) -> RunContext {
    RunContext::new(dir.path(), RunId::new(run))
}

fn refused(outcome: &RunOutcome) -> (&str, &str) {
    match outcome {
        RunOutcome::Refused { hook, reason, .. } => (hook, reason),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_model_before_hook_refuses_a_request_that_carries_a_secret() {
    let guard = HookRegistration::model_before("no-secrets", |input: &HookInput| {
        let request = input.request.as_ref().unwrap().to_string();
        if request.contains("sk-live") {
            ModelBeforeAnswer::refuse("the request carries a key")
        } else {
            ModelBeforeAnswer::Send
        }
    });
    let model = Arc::new(ScriptedModel::new([Turn::text("never")]));
    let runner = AgentRunner::new(agent(vec![guard], None), Arc::clone(&model));
    let dir = tempfile::tempdir().unwrap();
    let outcome = runner
        .run("my key is sk-live-123", &cx(&dir, "secret"))
        .await
        .unwrap();
    assert_eq!(
        refused(&outcome),
        ("no-secrets", "the request carries a key")
    );
    assert!(model.requests().is_empty(), "the model was never asked");
    // A request without the secret goes.
    let model = Arc::new(ScriptedModel::new([Turn::text("hello")]));
    let guard =
        HookRegistration::model_before("no-secrets", |_: &HookInput| ModelBeforeAnswer::Send);
    let runner = AgentRunner::new(agent(vec![guard], None), Arc::clone(&model));
    let outcome = runner.run("hi", &cx(&dir, "plain")).await.unwrap();
    assert!(
        matches!(outcome, RunOutcome::Finished { .. }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_model_before_hook_steers_one_turn_within_the_agents_tools() {
    let steer = HookRegistration::model_before("steer", |input: &HookInput| {
        // The first turn only: a deferred tool offered, `pay` not, a rule
        // added, a colder temperature.
        let first = input.request.as_ref().unwrap()["messages"]
            .as_array()
            .unwrap()
            .len()
            == 1;
        if first {
            ModelBeforeAnswer::Steer(Steer {
                tools: Some(vec![
                    "today".into(),
                    "order_status".into(),
                    "not_a_tool".into(),
                ]),
                instructions: Some("Never pay.".into()),
                temperature: Some(0.0),
                max_tokens: Some(64),
            })
        } else {
            ModelBeforeAnswer::Send
        }
    });
    let log = EventLog::new();
    let model = Arc::new(ScriptedModel::new([
        Turn::call("order_status", json!({"number": 7})),
        Turn::text("Order 7 shipped."),
    ]));
    let runner = AgentRunner::new(agent(vec![steer], Some(log.clone())), Arc::clone(&model));
    let dir = tempfile::tempdir().unwrap();
    let outcome = runner
        .run("Where is order 7?", &cx(&dir, "steer"))
        .await
        .unwrap();
    let RunOutcome::Finished { state, .. } = &outcome else {
        panic!("expected the answer, got {outcome:?}");
    };
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["today", "order_status"]);
    assert_eq!(
        requests[0].instructions.as_deref(),
        Some("Help with orders.\n\nNever pay.")
    );
    assert_eq!(requests[0].options.temperature, Some(0.0));
    assert_eq!(requests[0].options.max_tokens, Some(64));
    // The extended tool ran: it was offered to the calls too.
    assert!(state.messages.iter().any(
        |m| matches!(m, Message::Tool { result, .. } if result.text_content() == "order 7: shipped")
    ));
    // One turn only: the next request is the agent's own.
    assert!(requests[1].offers("pay"));
    assert_eq!(
        requests[1].instructions.as_deref(),
        Some("Help with orders.")
    );
    // The change is in the run's events.
    let events = log.wait_until(
        |events| {
            events
                .iter()
                .any(|e| matches!(e, RunEvent::RunFinished { .. }))
        },
        std::time::Duration::from_secs(5),
    );
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::HookFired { hook, outcome: iris::observe::HookOutcome::Steered { changed }, .. }
            if hook == "steer" && changed.len() == 4
    )));
}

#[tokio::test]
async fn a_model_after_hook_refuses_an_answer_and_nothing_of_it_runs() {
    let guard = HookRegistration::model_after("no-big-payments", |input: &HookInput| {
        let calls = input.answer.as_ref().unwrap()["calls"]
            .as_array()
            .unwrap()
            .clone();
        if calls
            .iter()
            .any(|c| c["tool"] == "pay" && c["arguments"]["cents"].as_u64() > Some(10_000))
        {
            ModelAfterAnswer::refuse("a payment over 100.00")
        } else {
            ModelAfterAnswer::Accept
        }
    });
    let model = Arc::new(ScriptedModel::new([Turn::call(
        "pay",
        json!({"cents": 99_999}),
    )]));
    let runner = AgentRunner::new(agent(vec![guard], None), model);
    let dir = tempfile::tempdir().unwrap();
    let outcome = runner.run("Pay the bill.", &cx(&dir, "pay")).await.unwrap();
    assert_eq!(
        refused(&outcome),
        ("no-big-payments", "a payment over 100.00")
    );
    assert!(
        !dir.path().join("paid.txt").exists(),
        "the payment never ran"
    );
    // Nothing of the refused answer is in the history.
    assert_eq!(outcome.state().messages.len(), 1);
}

#[tokio::test]
async fn a_model_after_hook_retries_with_feedback_and_redacts_before_recording() {
    let retry = HookRegistration::model_after("polite", |input: &HookInput| {
        let text = input.answer.as_ref().unwrap()["text"]
            .as_str()
            .unwrap_or("");
        if text.contains("stupid") {
            ModelAfterAnswer::retry("Answer politely.")
        } else {
            ModelAfterAnswer::Accept
        }
    });
    let redact = crate::support::hooks::redacting_cards("card-numbers");
    let model = Arc::new(ScriptedModel::new([
        Turn::text("What a stupid question."),
        Turn::text("Your card 4111 1111 1111 1111 was charged."),
    ]));
    let runner = AgentRunner::new(agent(vec![retry, redact], None), Arc::clone(&model));
    let dir = tempfile::tempdir().unwrap();
    let outcome = runner
        .run("Was I charged?", &cx(&dir, "retry"))
        .await
        .unwrap();
    let RunOutcome::Finished { text, state } = &outcome else {
        panic!("expected the answer, got {outcome:?}");
    };
    assert_eq!(text, "Your card [card] was charged.");
    // The feedback is in the history the model read, and the card number
    // is nowhere in what was kept.
    let second = &model.requests()[1];
    assert!(
        matches!(second.messages.last(), Some(Message::User { text }) if text == "[Sent back by a hook] Answer politely.")
    );
    assert!(!iris::serde_json::to_string(state).unwrap().contains("4111"));

    // A hook that never accepts ends the run after two retries in a row.
    let never =
        HookRegistration::model_after("never", |_: &HookInput| ModelAfterAnswer::retry("again"));
    let model = Arc::new(ScriptedModel::new((0..5).map(|_| Turn::text("no"))));
    let runner = AgentRunner::new(agent(vec![never], None), Arc::clone(&model));
    let outcome = runner.run("Go.", &cx(&dir, "never")).await.unwrap();
    assert_eq!(refused(&outcome).0, "never");
    assert_eq!(model.requests().len(), 3);
}

#[tokio::test]
async fn a_run_started_guard_refuses_the_task() {
    let guard = HookRegistration::guard_start("topics", |_: &HookInput| {
        BeforeAnswer::deny("this desk handles orders only")
    });
    let model = Arc::new(ScriptedModel::new([Turn::text("never")]));
    let runner = AgentRunner::new(agent(vec![guard], None), Arc::clone(&model));
    let dir = tempfile::tempdir().unwrap();
    let outcome = runner
        .run("Write me a poem.", &cx(&dir, "poem"))
        .await
        .unwrap();
    assert_eq!(
        refused(&outcome),
        ("topics", "this desk handles orders only")
    );
    assert!(model.requests().is_empty());
}

/// A command hook: `sh -c SCRIPT`, reading the input on stdin.
fn command(name: &str, script: &str) -> Hook {
    Hook::command(CommandHook::new(name, ["sh", "-c", script]).unwrap())
}

#[tokio::test]
async fn command_hooks_refuse_and_redact_the_same_way() {
    let refuse = HookRegistration::new(
        "grep-secret",
        iris::hooks::HookEvent::ModelBefore,
        command(
            "grep-secret",
            r#"if grep -q sk-live; then echo '{"decision": "refuse", "reason": "a key"}'; else echo '{}'; fi"#,
        ),
    );
    let model = Arc::new(ScriptedModel::new([Turn::text("never")]));
    let runner = AgentRunner::new(agent(vec![refuse], None), Arc::clone(&model));
    let dir = tempfile::tempdir().unwrap();
    let outcome = runner.run("sk-live-1", &cx(&dir, "cmd")).await.unwrap();
    assert_eq!(refused(&outcome), ("grep-secret", "a key"));

    let redact = HookRegistration::new(
        "hide",
        iris::hooks::HookEvent::ModelAfter,
        command("hide", r#"cat > /dev/null; echo '{"redact": "[hidden]"}'"#),
    );
    let model = Arc::new(ScriptedModel::new([Turn::text("the secret is 42")]));
    let runner = AgentRunner::new(agent(vec![redact], None), model);
    let outcome = runner.run("?", &cx(&dir, "cmd2")).await.unwrap();
    assert!(
        matches!(&outcome, RunOutcome::Finished { text, .. } if text == "[hidden]"),
        "{outcome:?}"
    );

    // A command that answers nonsense refuses the turn (fail closed).
    let broken = HookRegistration::new(
        "broken",
        iris::hooks::HookEvent::ModelBefore,
        command("broken", r#"cat > /dev/null; echo '{"decision": "maybe"}'"#),
    );
    let runner = AgentRunner::new(
        agent(vec![broken], None),
        ScriptedModel::new([Turn::text("never")]),
    );
    let outcome = runner.run("?", &cx(&dir, "cmd3")).await.unwrap();
    let (hook, reason) = refused(&outcome);
    assert_eq!(hook, "broken");
    assert!(reason.contains("malformed JSON"), "{reason}");
}

#[tokio::test]
async fn an_agent_file_names_model_hooks_and_a_guard_holds_over_a_child() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("child.yaml"), "name: helper\n").unwrap();
    std::fs::write(
        dir.path().join("lead.yaml"),
        r#"name: lead
agents:
  - name: helper
    description: Helps.
    file: child.yaml
permissions:
  other: allow
hooks:
  - name: no-poems
    event: model.after
    tree_wide: true
    handler:
      type: command
      command: [sh, -c, "if grep -q 'A poem'; then echo '{\"decision\": \"refuse\", \"reason\": \"no poems\"}'; else echo '{}'; fi"]
"#,
    )
    .unwrap();
    let lead = Agent::from_path(dir.path().join("lead.yaml")).unwrap();
    let model = Arc::new(ScriptedModel::new([
        Turn::call("helper", json!({"task": "Write a poem."})),
        // The child's answer, judged by the lead's guard.
        Turn::text("A poem about tea."),
        Turn::text("The helper was stopped."),
    ]));
    let runner = AgentRunner::new(lead, Arc::clone(&model));
    let outcome = runner
        .run("Ask the helper.", &cx(&dir, "tree"))
        .await
        .unwrap();
    let RunOutcome::Finished { state, .. } = &outcome else {
        panic!("expected the lead to finish, got {outcome:?}");
    };
    let result = state
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool { tool, result, .. } if tool == "helper" => Some(result),
            _ => None,
        })
        .unwrap();
    assert!(
        result.text_content().contains("no-poems"),
        "{}",
        result.text_content()
    );
    assert_eq!(state.children[0].ending, "refused");

    // A tool filter on a model event is a located problem.
    std::fs::write(
        dir.path().join("bad.yaml"),
        "name: bad\nhooks:\n  - name: x\n    event: model.before\n    tools: [today]\n    handler: { type: command, command: [\"true\"] }\n",
    )
    .unwrap();
    let err = Agent::from_path(dir.path().join("bad.yaml"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "`model.before` hooks see the model's turns, not calls, and take no tool filter"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_refused_run_on_a_store_keeps_no_half_recorded_step() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn iris::agent::store::RunStore> =
        Arc::new(iris::sqlite::SqliteStore::open(dir.path().join("runs.db")).unwrap());
    let guard = HookRegistration::model_after("stop", |input: &HookInput| {
        let calls = input.answer.as_ref().unwrap()["calls"]
            .as_array()
            .unwrap()
            .clone();
        if calls.iter().any(|c| c["tool"] == "pay") {
            ModelAfterAnswer::refuse("no payments today")
        } else {
            ModelAfterAnswer::Accept
        }
    });
    let model = ScriptedModel::new([
        Turn::call("today", json!({})),
        Turn::call("pay", json!({"cents": 5})),
    ]);
    let runner = AgentRunner::new(agent(vec![guard], None), model).with_store(Arc::clone(&store));
    let run = cx(&dir, "stored");
    let outcome = runner.run("Pay.", &run).await.unwrap();
    assert_eq!(refused(&outcome).0, "stop");
    let kept = store.load(run.run_id()).await.unwrap().unwrap();
    assert_eq!(kept.status, iris::agent::store::RunStatus::Finished);
    // The task and the first step, and nothing of the refused answer.
    assert_eq!(kept.state.messages.len(), 3, "{:?}", kept.state.messages);
    assert!(matches!(
        kept.state.messages.last(),
        Some(Message::Tool { .. })
    ));
    assert!(!dir.path().join("paid.txt").exists());
}

#[tokio::test]
async fn a_turn_a_hook_narrowed_refuses_run_control_it_left_out() {
    let helper = iris::agent::ChildAgent::new("helper", "Helps.", agent(Vec::new(), None));
    let narrow = HookRegistration::model_before("only-today", |_: &HookInput| {
        ModelBeforeAnswer::Steer(Steer {
            tools: Some(vec!["today".into()]),
            ..Steer::default()
        })
    });
    let mut registry = ToolRegistry::new();
    registry.register(Today).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().other(Rule::Allow))
        .hook(narrow)
        .build()
        .unwrap();
    let lead = Agent::builder(executor)
        .name("lead")
        .child(helper)
        .build()
        .unwrap();
    let model = Arc::new(ScriptedModel::new([
        // The child's name is known from before; it is not offered now.
        Turn::call("helper", json!({"task": "Pay everyone."})),
        Turn::text("I could not delegate."),
    ]));
    let runner = AgentRunner::new(lead, Arc::clone(&model));
    let dir = tempfile::tempdir().unwrap();
    let outcome = runner.run("Go.", &cx(&dir, "narrowed")).await.unwrap();
    let RunOutcome::Finished { state, .. } = &outcome else {
        panic!("expected the answer, got {outcome:?}");
    };
    assert_eq!(model.requests()[0].tool_names(), ["today"]);
    let result = state
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool { tool, result, .. } if tool == "helper" => Some(result),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        result.error_kind(),
        Some(iris::ToolErrorKind::ToolNotAvailable),
        "{}",
        result.text_content()
    );
    assert!(state.children.is_empty(), "the child never started");
}

#[tokio::test]
async fn a_run_started_guard_sees_the_task_and_fails_closed() {
    let seen = Arc::new(std::sync::Mutex::new(String::new()));
    let keep = Arc::clone(&seen);
    let guard = HookRegistration::guard_start("topics", move |input: &HookInput| {
        *keep.lock().unwrap() = input.request.as_ref().unwrap()["messages"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        BeforeAnswer::Allow
    });
    let runner = AgentRunner::new(
        agent(vec![guard], None),
        ScriptedModel::new([Turn::text("fine")]),
    );
    let dir = tempfile::tempdir().unwrap();
    runner
        .run("Where is order 7?", &cx(&dir, "seen"))
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), "Where is order 7?");

    // A guard that answers what `run.started` does not take refuses.
    let broken = HookRegistration::new(
        "broken",
        iris::hooks::HookEvent::RunStarted,
        command(
            "broken",
            r#"cat > /dev/null; echo '{"decision": "refuse"}'"#,
        ),
    );
    let model = Arc::new(ScriptedModel::new([Turn::text("never")]));
    let runner = AgentRunner::new(agent(vec![broken], None), Arc::clone(&model));
    let outcome = runner.run("Go.", &cx(&dir, "broken")).await.unwrap();
    assert_eq!(refused(&outcome).0, "broken");
    assert!(model.requests().is_empty());
}

/// Refund an order: deferred, and a write that asks first.
#[iris::tool(write, deferred)]
fn refund_order(number: u32) -> String {
    format!("refunded order {number}")
}

#[tokio::test]
async fn a_tool_a_steer_offered_runs_when_its_call_is_approved_later() {
    let mut registry = ToolRegistry::new();
    registry.register(RefundOrder).unwrap();
    let steer = HookRegistration::model_before("offer-refund", |_: &HookInput| {
        ModelBeforeAnswer::Steer(Steer {
            tools: Some(vec!["refund_order".into()]),
            ..Steer::default()
        })
    });
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Ask))
        .hook(steer)
        .build()
        .unwrap();
    let agent = Agent::builder(executor).name("desk").build().unwrap();
    let runner = AgentRunner::new(
        agent,
        ScriptedModel::new([
            Turn::call("refund_order", json!({"number": 7})),
            Turn::text("Refunded."),
        ]),
    );
    let dir = tempfile::tempdir().unwrap();
    let run = cx(&dir, "refund");
    let RunOutcome::Waiting(state) = runner.run("Refund order 7.", &run).await.unwrap() else {
        panic!("the refund asks first");
    };
    let request = state.waiting[0].approval_request().unwrap().clone();
    let outcome = runner
        .resume(
            state,
            [(
                request.call_id.clone(),
                iris::ApprovalDecision::approve(&request),
            )],
            &run,
        )
        .await
        .unwrap();
    let RunOutcome::Finished { state, .. } = &outcome else {
        panic!("expected the answer, got {outcome:?}");
    };
    assert!(state.messages.iter().any(|m| matches!(
        m,
        Message::Tool { result, .. } if result.text_content() == "refunded order 7"
    )));
}

#[tokio::test]
async fn each_model_before_hook_sees_the_request_as_the_ones_before_it_steered_it() {
    let narrow = HookRegistration::model_before("narrow", |_: &HookInput| {
        ModelBeforeAnswer::Steer(Steer {
            tools: Some(vec!["today".into(), "pay".into()]),
            instructions: Some("Be brief.".into()),
            ..Steer::default()
        })
    });
    let seen = Arc::new(std::sync::Mutex::new(iris::serde_json::Value::Null));
    let keep = Arc::clone(&seen);
    let later = HookRegistration::model_before("later", move |input: &HookInput| {
        *keep.lock().unwrap() = input.request.clone().unwrap();
        // A later list narrows what the earlier one chose, never widens it.
        ModelBeforeAnswer::Steer(Steer {
            tools: Some(vec!["today".into(), "order_status".into()]),
            ..Steer::default()
        })
    });
    let model = Arc::new(ScriptedModel::new([Turn::text("done")]));
    let runner = AgentRunner::new(agent(vec![narrow, later], None), Arc::clone(&model));
    let dir = tempfile::tempdir().unwrap();
    runner.run("Go.", &cx(&dir, "seen")).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen["tools"], json!(["today", "pay"]));
    assert_eq!(seen["instructions"], "Help with orders.\n\nBe brief.");
    assert_eq!(model.requests()[0].tool_names(), ["today"]);
}
