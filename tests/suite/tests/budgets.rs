//! Hard budgets over a tree of agents: four children running side by side
//! draw on one ledger and stop at a money cap without passing it; a
//! request's `max_tokens` is lowered to what is left; calls the budget has
//! no room for never run; spend and active time go on across a pause and
//! a resume in another runner, the pause not counted.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use iris::agent::{
    Agent, AgentRunner, Budget, BudgetKind, ChildAgent, Price, PriceTable, RunContext, RunOutcome,
};
use iris::model::{Message, ModelResponse, Usage};
use iris::serde_json::json;
use iris::testing::{FnModel, RecordedRequest};
use iris::{ApprovalDecision, Rule, RulePolicy, RunId, ToolExecutor, ToolRegistry, ToolUseBlock};

/// Look a topic up.
#[iris::tool(read_only)]
fn research_topic(
    /// The topic.
    topic: String,
) -> String {
    format!("{topic}: nothing new")
}

/// File a note: a write the policy may ask about.
#[iris::tool(write)]
fn file_note(
    /// The note.
    text: String,
) -> String {
    format!("filed {}", text.len())
}

/// Tokens a provider would count for `request`: a real tokenizer reads
/// about four characters a token, fewer than the runner's estimate.
fn counted(request: &RecordedRequest) -> u64 {
    let chars: usize = request
        .messages
        .iter()
        .map(|m| iris::serde_json::to_string(m).map_or(0, |s| s.len()))
        .sum::<usize>()
        + request.instructions.as_deref().map_or(0, str::len);
    (chars / 4) as u64
}

/// A model that never stops looking things up, writing 50 tokens (or its
/// `max_tokens`, if lower) each time.
fn runaway(asked: Arc<AtomicU32>) -> FnModel {
    FnModel::new(move |request| {
        let n = asked.fetch_add(1, Ordering::SeqCst);
        let written = request
            .options
            .max_tokens
            .map_or(50, |most| u64::from(most).min(50));
        Ok(ModelResponse {
            tool_calls: vec![ToolUseBlock::new(
                format!("l{n}"),
                "research_topic",
                json!({"topic": "rates"}),
            )],
            usage: Usage::new(counted(request), written),
            ..ModelResponse::default()
        })
    })
}

fn worker() -> Agent {
    let mut registry = ToolRegistry::new();
    registry.register(ResearchTopic).unwrap();
    let executor = ToolExecutor::builder(registry).build().unwrap();
    Agent::builder(executor)
        .name("worker")
        .instructions("Look things up.")
        // Each answer at most 60 tokens: what a request reserves to write.
        .model(
            iris::model::ModelConfig::new(iris::model::ModelProvider::OpenaiChat, "scripted")
                .with_max_tokens(60),
        )
        .build()
        .unwrap()
}

/// The parent: four delegations in one step, then a summary.
fn lead(child: ChildAgent) -> Agent {
    let executor = ToolExecutor::builder(ToolRegistry::new())
        .policy(RulePolicy::new().other(Rule::Allow))
        .build()
        .unwrap();
    Agent::builder(executor)
        .name("lead")
        .child(child)
        .build()
        .unwrap()
}

fn fan_out() -> FnModel {
    FnModel::new(|request| {
        let delegated = request
            .messages
            .iter()
            .any(|m| matches!(m, Message::Tool { .. }));
        Ok(if delegated {
            ModelResponse {
                text: Some("Summary.".to_owned()),
                usage: Usage::new(counted(request), 5),
                ..ModelResponse::default()
            }
        } else {
            ModelResponse {
                tool_calls: (0..4)
                    .map(|i| {
                        ToolUseBlock::new(
                            format!("d{i}"),
                            "worker",
                            json!({"task": format!("topic {i}")}),
                        )
                    })
                    .collect(),
                usage: Usage::new(counted(request), 20),
                ..ModelResponse::default()
            }
        })
    })
}

fn prices() -> PriceTable {
    // $1 per million tokens read, $4 per million written.
    PriceTable::new().otherwise(Price::per_million(1.0, 4.0))
}

#[tokio::test]
async fn four_children_side_by_side_stop_at_one_money_cap() {
    let asked = Arc::new(AtomicU32::new(0));
    let child = ChildAgent::new("worker", "Looks things up.", worker())
        .model(runaway(Arc::clone(&asked)))
        .max_steps(1_000);
    let runner = AgentRunner::new(lead(child), fan_out())
        .with_delegation(iris::agent::Delegation::new())
        .with_budget(Budget::new().usd(0.01))
        .with_prices(prices());
    let dir = tempfile::tempdir().unwrap();
    let outcome = runner
        .run(
            "Research four topics.",
            &RunContext::new(dir.path(), RunId::new("cap")),
        )
        .await
        .unwrap();
    let RunOutcome::OverBudget { over, state } = &outcome else {
        panic!("expected the money cap to end the run, got {outcome:?}");
    };
    assert_eq!(over.budget, BudgetKind::Money);
    // Past the cap by less than one request's reservation (here under
    // $0.001: about 600 tokens read and 60 written), which a provider that
    // counts more than the estimate may overrun; never by whole turns.
    assert!(state.spent.micro_usd <= 11_000, "{}", state.spent);
    assert!(
        state.spent.micro_usd > 9_000,
        "the cap was nearly used: {}",
        state.spent
    );
    // Each request the children's model answered was counted, once; the
    // parent's one request besides.
    assert_eq!(state.spent.requests, asked.load(Ordering::SeqCst) + 1);
    // The children stopped at the budget, and said so to the parent.
    let said: Vec<String> = state
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { result, .. } => Some(result.text_content()),
            _ => None,
        })
        .collect();
    assert_eq!(said.len(), 4);
    assert!(
        said.iter().all(|s| s.contains("`usd` budget is spent")),
        "{said:?}"
    );
}

#[tokio::test]
async fn the_last_request_is_lowered_to_what_is_left_and_calls_over_budget_never_run() {
    let asked = Arc::new(AtomicU32::new(0));
    let runner = AgentRunner::new(worker(), runaway(Arc::clone(&asked)))
        .with_budget(Budget::new().tokens(600).tool_calls(100));
    let dir = tempfile::tempdir().unwrap();
    let cx = RunContext::new(dir.path(), RunId::new("tokens"));
    let outcome = runner.run("Look it up.", &cx).await.unwrap();
    let RunOutcome::OverBudget { over, state } = &outcome else {
        panic!("expected the token cap, got {outcome:?}");
    };
    assert_eq!(over.budget, BudgetKind::Tokens);
    let total = state.spent.input_tokens + state.spent.output_tokens;
    assert!(total <= 600, "{}", state.spent);

    // Two calls a step against a budget of three: the second step's calls
    // do not all fit, so neither runs and its answer is not recorded.
    let model = FnModel::new(|request| {
        let n = request.messages.len();
        Ok(ModelResponse {
            tool_calls: vec![
                ToolUseBlock::new(format!("a{n}"), "research_topic", json!({"topic": "a"})),
                ToolUseBlock::new(format!("b{n}"), "research_topic", json!({"topic": "b"})),
            ],
            usage: Usage::new(10, 10),
            ..ModelResponse::default()
        })
    });
    let runner = AgentRunner::new(worker(), model).with_budget(Budget::new().tool_calls(3));
    let outcome = runner
        .run(
            "Look both up.",
            &RunContext::new(dir.path(), RunId::new("calls")),
        )
        .await
        .unwrap();
    let RunOutcome::OverBudget { over, state } = &outcome else {
        panic!("expected the call cap, got {outcome:?}");
    };
    assert_eq!(over.budget, BudgetKind::ToolCalls);
    assert_eq!(state.spent.tool_calls, 2);
    let results = state
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Tool { .. }))
        .count();
    assert_eq!(
        results, 2,
        "every recorded call has its result, and no more ran"
    );
    assert!(matches!(state.messages.last(), Some(Message::Tool { .. })));
}

#[tokio::test]
async fn spend_and_active_time_go_on_across_a_pause_without_counting_it() {
    let mut registry = ToolRegistry::new();
    registry.register(FileNote).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Ask))
        .build()
        .unwrap();
    let agent = Arc::new(Agent::builder(executor).name("clerk").build().unwrap());
    let model = || {
        FnModel::new(|request| {
            let filed = request
                .messages
                .iter()
                .any(|m| matches!(m, Message::Tool { .. }));
            Ok(if filed {
                ModelResponse {
                    text: Some("Done.".to_owned()),
                    usage: Usage::new(100, 10),
                    ..ModelResponse::default()
                }
            } else {
                ModelResponse {
                    tool_calls: vec![ToolUseBlock::new("n1", "file_note", json!({"text": "hi"}))],
                    usage: Usage::new(100, 10),
                    ..ModelResponse::default()
                }
            })
        })
    };
    let budget = Budget::new()
        .tokens(10_000)
        .active_time(Duration::from_secs(30));
    let first = AgentRunner::new(Arc::clone(&agent), model())
        .with_budget(budget.clone())
        .trust_unsealed_states();
    let dir = tempfile::tempdir().unwrap();
    let cx = RunContext::new(dir.path(), RunId::new("paused"));
    let RunOutcome::Waiting(state) = first.run("File a note.", &cx).await.unwrap() else {
        panic!("expected the note to wait for approval");
    };
    assert_eq!(state.spent.requests, 1);
    assert_eq!(state.spent.input_tokens, 100);
    // A person takes their time; the run is not active meanwhile.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let saved = iris::serde_json::to_string(&state).unwrap();
    let state: iris::agent::RunState = iris::serde_json::from_str(&saved).unwrap();
    let approve = ApprovalDecision::approve(state.approvals().next().unwrap());
    let second = AgentRunner::new(agent, model())
        .with_budget(budget)
        .trust_unsealed_states();
    let outcome = second
        .resume(state, [("n1".to_owned(), approve)], &cx)
        .await
        .unwrap();
    let RunOutcome::Finished { state, .. } = &outcome else {
        panic!("expected the run to finish, got {outcome:?}");
    };
    assert_eq!(state.spent.requests, 2, "{}", state.spent);
    assert_eq!(state.spent.input_tokens, 200);
    assert_eq!(state.spent.tool_calls, 1);
    assert!(
        state.spent.active_ms < 400,
        "the pause was counted: {}",
        state.spent
    );
}

#[tokio::test]
async fn an_agent_file_names_its_budget_and_its_prices() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("agent.yaml");
    std::fs::write(
        &file,
        "name: clerk\nbudget:\n  requests: 1\n  usd: 0.5\n  prices:\n    '*': {input: 1.0, output: 4.0}\n",
    )
    .unwrap();
    let agent = Agent::from_path(&file).unwrap();
    assert_eq!(agent.budget().and_then(Budget::max_requests), Some(1));
    let model = FnModel::new(|_| {
        Ok(ModelResponse {
            tool_calls: vec![ToolUseBlock::new("x", "nothing", json!({}))],
            usage: Usage::new(1_000, 100),
            ..ModelResponse::default()
        })
    });
    let outcome = AgentRunner::new(agent, model)
        .run("Go.", &RunContext::new(dir.path(), RunId::new("file")))
        .await
        .unwrap();
    let RunOutcome::OverBudget { over, state } = &outcome else {
        panic!("expected the request cap, got {outcome:?}");
    };
    assert_eq!(over.budget, BudgetKind::Requests);
    // 1,000 in at $1, 100 out at $4 per million.
    assert_eq!(state.spent.micro_usd, 1_400);

    for (yaml, says) in [
        (
            "name: a\nbudget: {usd: -1, prices: {'*': {input: 1, output: 1}}}\n",
            "zero or more",
        ),
        (
            "name: a\nbudget: {tokens: 10, prices: {m: {input: -1, output: 1}}}\n",
            "zero or more",
        ),
        ("name: a\nbudget: {token: 10}\n", "unknown key `token`"),
    ] {
        std::fs::write(&file, yaml).unwrap();
        let err = Agent::from_path(&file).unwrap_err().to_string();
        assert!(err.contains(says), "{yaml}: {err}");
        assert!(err.contains("agent.yaml:"), "{err}");
    }
}

/// A child served as a tool under its parent is held to the parent's
/// rules: what the parent refuses, a caller cannot reach through the child.
#[tokio::test]
async fn a_served_child_is_held_to_its_parents_rules() {
    let mut registry = ToolRegistry::new();
    registry.register(FileNote).unwrap();
    let writer = Agent::builder(
        ToolExecutor::builder(registry)
            .policy(RulePolicy::new().write(Rule::Allow))
            .build()
            .unwrap(),
    )
    .name("writer")
    .build()
    .unwrap();
    let model = Arc::new(FnModel::new(|request| {
        let tried = request
            .messages
            .iter()
            .any(|m| matches!(m, Message::Tool { .. }));
        Ok(if tried {
            ModelResponse {
                text: Some("Done.".to_owned()),
                ..ModelResponse::default()
            }
        } else {
            ModelResponse {
                tool_calls: vec![ToolUseBlock::new("w1", "file_note", json!({"text": "hi"}))],
                ..ModelResponse::default()
            }
        })
    }));
    let child = ChildAgent::new("writer", "Writes notes.", writer).model(Arc::clone(&model));
    let parent = Agent::builder(
        ToolExecutor::builder(ToolRegistry::new())
            .policy(RulePolicy::new().other(Rule::Allow).tool(
                iris::definition::ToolName::new("file_note").unwrap(),
                Rule::Deny,
            ))
            .build()
            .unwrap(),
    )
    .name("lead")
    .child(child.clone())
    .build()
    .unwrap();
    let tool = iris::agent::AgentTool::new(&child, None)
        .unwrap()
        .under(&parent);
    let mut served = ToolRegistry::new();
    served.register(tool).unwrap();
    let executor = ToolExecutor::builder(served)
        .policy(RulePolicy::new().other(Rule::Allow))
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cx = iris::ToolContext::builder(dir.path(), RunId::new("served")).build();
    let outcome = executor
        .execute_one(
            ToolUseBlock::new("c1", "writer", json!({"task": "Note hi."})),
            &cx,
        )
        .await;
    assert_eq!(outcome.result().unwrap().text_content(), "Done.");
    let requests = model.requests();
    let Some(Message::Tool { result, .. }) = requests[1].messages.last() else {
        panic!("the child's call has its result");
    };
    assert!(
        result.is_error(),
        "the parent's rule held: {}",
        result.text_content()
    );
}
