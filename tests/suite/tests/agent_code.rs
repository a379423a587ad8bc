//! An agent built in code, without an agent file: a host's own executor
//! (policy, hooks), discovery over its registry and ledger, a results
//! budget, driven by a scripted model through search, a disclosed tool, a
//! pause for approval and the final answer; the run's state is gone from
//! the ledger at the end.

use std::sync::Arc;

use iris::agent::{Agent, AgentRunner, RunContext, RunOutcome};
use iris::discovery::Discovery;
use iris::hooks::{AfterAnswer, HookInput, HookRegistration};
use iris::model::ModelResponse;
use iris::serde_json::json;
use iris::testing::{ScriptedModel, Turn};
use iris::{ApprovalDecision, Rule, RulePolicy, RunId, ToolExecutor, ToolUseBlock};

use crate::shop;

/// Answers with `answers`, in order, keeping every request.
fn scripted(answers: Vec<ModelResponse>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(answers.into_iter().map(Turn::from)))
}

fn calls(calls: Vec<ToolUseBlock>) -> ModelResponse {
    ModelResponse {
        tool_calls: calls,
        ..ModelResponse::default()
    }
}

fn agent() -> Agent {
    let executor = ToolExecutor::builder(shop::registry())
        .policy(RulePolicy::new().write(Rule::Ask))
        .hook(HookRegistration::after("note", |_: &HookInput| {
            AfterAnswer::Feedback("Prices are in cents.".to_owned())
        }))
        .build()
        .expect("the executor builds");
    shop::agent_with_discovery(executor)
        .name("shop")
        .instructions("Help the customer shop.")
        .max_steps(6)
        .results_budget(100_000)
        .build()
        .expect("the agent builds")
}

#[tokio::test]
async fn a_host_built_executor_runs_an_agent_with_a_scripted_model() {
    let dir = tempfile::tempdir().expect("a folder");
    let agent = Arc::new(agent());
    assert!(
        agent.registry().resolve("read_history").is_some(),
        "a results budget registers read_history"
    );
    let model = scripted(vec![
        calls(vec![shop::search()]),
        calls(vec![
            ToolUseBlock::new("p1", "price_of", json!({"item": "lamp"})),
            ToolUseBlock::new(
                "c1",
                "convert_currency",
                json!({"cents": 1250, "to": "EUR"}),
            ),
            ToolUseBlock::new("o1", "place_order", json!({"item": "lamp"})),
        ]),
    ]);
    let runner = AgentRunner::new(Arc::clone(&agent), Arc::clone(&model));
    let run = RunId::new("shop-1");
    let cx = RunContext::new(dir.path(), run.clone());
    let outcome = runner
        .run("Buy the lamp and tell me its price in euros.", &cx)
        .await
        .expect("runs");
    let RunOutcome::Waiting(state) = outcome else {
        panic!("the order waits for approval, got {outcome:?}");
    };
    assert_eq!(state.disclosed.len(), 1, "{:?}", state.disclosed);
    assert_eq!(state.disclosed[0].as_str(), "convert_currency");
    assert_eq!(state.waiting.len(), 1);
    let converted = state
        .finished
        .iter()
        .find(|f| f.call_id == "c1")
        .expect("the disclosed tool ran");
    assert!(converted.result.text_content().starts_with("1125 EUR"));
    assert!(
        converted
            .result
            .text_content()
            .contains("Prices are in cents."),
        "the host's hook ran"
    );
    let requests = model.requests();
    assert!(!requests[0].offers("convert_currency"));
    assert!(requests[1].offers("convert_currency"));
    assert_eq!(
        requests[0].instructions.as_deref(),
        Some("Help the customer shop.")
    );
    assert!(agent.ledger().contains(&run), "a waiting run is kept");

    let model = scripted(vec![ModelResponse {
        text: Some("Ordered; it costs 11.25 EUR.".to_owned()),
        ..ModelResponse::default()
    }]);
    let runner = AgentRunner::new(Arc::clone(&agent), model);
    let approve =
        ApprovalDecision::approve(state.approvals().next().expect("a call waits for approval"));
    let outcome = runner
        .resume(state, [("o1".to_owned(), approve)], &cx)
        .await
        .expect("resumes");
    let RunOutcome::Finished { text, state } = outcome else {
        panic!("expected the end, got {outcome:?}");
    };
    assert_eq!(text, "Ordered; it costs 11.25 EUR.");
    assert_eq!(state.step, 3);
    assert!(
        !agent.ledger().contains(&run),
        "the end of the run forgets every slot it had"
    );
}

#[test]
fn discovery_over_another_ledger_is_refused() {
    let executor = ToolExecutor::builder(shop::registry())
        .build()
        .expect("builds");
    let discovery = Discovery::builder(executor.shared_registry())
        .build()
        .expect("discovery builds");
    let err = Agent::builder(executor)
        .discovery(discovery)
        .build()
        .expect_err("its own ledger would outlive the runs");
    assert!(err.to_string().contains("ledger"), "{err}");
}
