//! Run control under a hostile model and a careless host: call ids are
//! untrusted input, so no two distinct calls at any depth share a key, a
//! child run or a path; a person's decision is bound to exactly what was
//! shown and taken once; caps count what they say across the whole tree.
//! Each test is named after the guarantee it attacks, the way it was
//! broken.
#![allow(
    clippy::too_many_lines,
    reason = "each scenario reads top to bottom, as an attack is walked"
)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use iris::agent::store::MemoryStore;
use iris::agent::{
    Agent, AgentBuildError, AgentRunner, Answer, ChildAgent, QuestionReply, QuestionRequest,
    Questions, Reply, RunContext, RunError, RunOutcome, RunState,
};
use iris::model::Message;
use iris::serde_json::{Value, json};
use iris::testing::{Decided, ScriptedModel, Turn, deny_all, run_to_end};
use iris::{
    ApprovalDecision, Rule, RulePolicy, RunId, ToolContext, ToolErrorKind, ToolExecutor,
    ToolRegistry, ToolResult,
};

/// Charge a card: a write that may not run twice.
#[iris::tool(write)]
fn charge(
    /// Cents to charge.
    cents: u64,
    #[ctx] cx: &ToolContext,
) -> String {
    let path = cx.workspace_root().join("charges.txt");
    let mut lines = std::fs::read_to_string(&path).unwrap_or_default();
    lines.push_str(&cents.to_string());
    lines.push('\n');
    std::fs::write(&path, lines).expect("the workspace is writable");
    format!("charged {cents}")
}

/// Look a topic up.
#[iris::tool(read_only)]
fn find_fact(
    /// The topic.
    topic: String,
) -> String {
    format!("{topic}: 42")
}

fn charges(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("charges.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(Charge).expect("registers");
    registry.register(FindFact).expect("registers");
    registry
}

/// An agent named `name` with `charge` and `find_fact` under `policy`.
fn agent(name: &str, policy: RulePolicy) -> Agent {
    let executor = ToolExecutor::builder(registry())
        .policy(policy)
        .build()
        .expect("builds");
    Agent::builder(executor).name(name).build().expect("builds")
}

/// A cashier child whose model charges `cents` as call `w1`, then says
/// it is done.
fn cashier(cents: u64) -> ChildAgent {
    ChildAgent::new(
        "cashier",
        "Charges cards.",
        agent("cashier", RulePolicy::new().write(Rule::Allow)),
    )
    .model(ScriptedModel::new([
        Turn::call_with_id("w1", "charge", json!({"cents": cents})),
        Turn::text("done"),
    ]))
}

/// A parent under `policy` with its own tools, delegating to `children`.
fn parent(policy: RulePolicy, children: Vec<ChildAgent>) -> Agent {
    let executor = ToolExecutor::builder(registry())
        .policy(policy)
        .build()
        .expect("builds");
    let mut builder = Agent::builder(executor).name("lead");
    for child in children {
        builder = builder.child(child);
    }
    builder.build().expect("builds")
}

fn delegate(id: &str, task: &str) -> Turn {
    Turn::call_with_id(id, "cashier", json!({"task": task}))
}

fn cx(dir: &Path, run: &str) -> RunContext {
    RunContext::new(dir, RunId::new(run))
}

/// Every result the model read for call `id`, in history order.
fn results_of(state: &RunState, id: &str) -> Vec<ToolResult> {
    state
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool {
                call_id, result, ..
            } if call_id == id => Some(result.clone()),
            _ => None,
        })
        .collect()
}

/// The ids of every call the run's history holds, in order.
fn call_ids(state: &RunState) -> Vec<&str> {
    state
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .flatten()
        .map(|call| call.id.as_str())
        .collect()
}

fn finished(outcome: RunOutcome) -> RunState {
    match outcome {
        RunOutcome::Finished { state, .. } => state,
        other => panic!("expected the run to finish: {other:?}"),
    }
}

fn waiting(outcome: RunOutcome) -> RunState {
    match outcome {
        RunOutcome::Waiting(state) => state,
        other => panic!("expected the run to wait: {other:?}"),
    }
}

#[tokio::test]
async fn two_delegations_under_one_id_in_a_step_are_refused_before_either_starts() {
    let dir = tempfile::tempdir().expect("a folder");
    let lead = parent(
        RulePolicy::new().other(Rule::Allow).write(Rule::Allow),
        vec![cashier(111)],
    );
    let model = ScriptedModel::new([
        delegate("d1", "Charge 111.").and_call_with_id(
            "d1",
            "cashier",
            json!({"task": "Charge 222."}),
        ),
        Turn::text("ok"),
    ]);
    let runner = AgentRunner::new(lead, model).with_store(MemoryStore::new());
    let state = finished(
        runner
            .run("Charge twice.", &cx(dir.path(), "dup-delegations"))
            .await
            .expect("runs"),
    );
    let results = results_of(&state, "d1");
    assert_eq!(results.len(), 2, "one result per call, even refused");
    for result in &results {
        assert_eq!(result.error_kind(), Some(ToolErrorKind::DuplicateCall));
        assert!(
            result
                .text_content()
                .contains("call id `d1` is given to more than one call"),
            "{}",
            result.text_content()
        );
    }
    assert!(state.children.is_empty(), "no child started");
    assert!(charges(dir.path()).is_empty(), "nothing was charged");
}

#[tokio::test]
async fn a_step_that_repeats_an_id_of_any_kind_runs_none_of_its_calls() {
    let dir = tempfile::tempdir().expect("a folder");
    let lead = parent(
        RulePolicy::new().other(Rule::Allow).write(Rule::Allow),
        vec![cashier(5)],
    );
    // A tool call and a delegation under one id: neither runs.
    let model = ScriptedModel::new([
        Turn::call_with_id("x", "charge", json!({"cents": 7})).and_call_with_id(
            "x",
            "cashier",
            json!({"task": "Charge 5."}),
        ),
        Turn::text("ok"),
    ]);
    let state = finished(
        AgentRunner::new(lead, model)
            .run("Go.", &cx(dir.path(), "mixed"))
            .await
            .expect("runs"),
    );
    assert!(charges(dir.path()).is_empty(), "nothing ran");
    assert!(state.children.is_empty());
    let results = results_of(&state, "x");
    assert_eq!(results.len(), 2);
    assert!(
        results
            .iter()
            .all(|r| r.error_kind() == Some(ToolErrorKind::DuplicateCall))
    );
}

#[tokio::test]
async fn ids_an_earlier_step_used_or_no_id_at_all_are_replaced_by_the_runs_own() {
    let dir = tempfile::tempdir().expect("a folder");
    // One cashier model for both delegations: it charges 111, then 222.
    let cashier = ChildAgent::new(
        "cashier",
        "Charges cards.",
        agent("cashier", RulePolicy::new().write(Rule::Allow)),
    )
    .model(ScriptedModel::new([
        Turn::call_with_id("w1", "charge", json!({"cents": 111})),
        Turn::text("done 111"),
        Turn::call_with_id("w1", "charge", json!({"cents": 222})),
        Turn::text("done 222"),
    ]));
    let lead = parent(
        RulePolicy::new().other(Rule::Allow).write(Rule::Allow),
        vec![cashier],
    );
    // A local server that numbers every answer's calls from `call_1`
    // again, then one that sends no id.
    let model = ScriptedModel::new([
        delegate("call_1", "Charge 111."),
        delegate("call_1", "Charge 222."),
        Turn::call_with_id("", "charge", json!({"cents": 8})),
        Turn::text("ok"),
    ]);
    let runner = AgentRunner::new(lead, model).with_store(MemoryStore::new());
    let state = finished(
        runner
            .run("Go.", &cx(dir.path(), "reused"))
            .await
            .expect("runs"),
    );
    assert_eq!(
        charges(dir.path()),
        ["111", "222", "8"],
        "each delegation ran its own child, with its own claims"
    );
    assert_eq!(results_of(&state, "call_1")[0].text_content(), "done 111");
    assert_eq!(results_of(&state, "call_1-2")[0].text_content(), "done 222");
    assert!(state.child_run(&RunId::new("reused/call_1")).is_some());
    assert!(state.child_run(&RunId::new("reused/call_1-2")).is_some());
    let ids = call_ids(&state);
    assert_eq!(ids, ["call_1", "call_1-2", "call-0-3"]);
}

#[tokio::test]
async fn a_minted_id_is_an_id_too() {
    // An id of 511 bytes used again in the next step: its replacement
    // keeps within the length an id may have.
    let dir = tempfile::tempdir().expect("a folder");
    let long = "é".repeat(255) + "a";
    let runner = AgentRunner::new(
        agent("cashier", RulePolicy::new().write(Rule::Allow)),
        ScriptedModel::new([
            Turn::call_with_id(&long, "charge", json!({"cents": 1})),
            Turn::call_with_id(&long, "charge", json!({"cents": 2})),
            Turn::text("ok"),
        ]),
    );
    let state = finished(
        runner
            .run("Go.", &cx(dir.path(), "long"))
            .await
            .expect("runs"),
    );
    let ids = call_ids(&state);
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
    assert!(ids.iter().all(|id| iris::agent::CallId::check(id).is_ok()));
    assert_eq!(charges(dir.path()), ["1", "2"]);
}

#[tokio::test]
async fn a_root_call_named_like_a_child_call_never_shares_its_journal_key() {
    let dir = tempfile::tempdir().expect("a folder");
    let lead = parent(
        RulePolicy::new().other(Rule::Allow).write(Rule::Allow),
        vec![cashier(444)],
    );
    // The root's own call `d1/w1` first; then delegation `d1`, whose
    // child's call is `w1`: written naively, both are `d1/w1` of the root.
    let model = ScriptedModel::new([
        Turn::call_with_id("d1/w1", "charge", json!({"cents": 333})),
        delegate("d1", "Charge 444."),
        Turn::text("ok"),
    ]);
    let runner = AgentRunner::new(lead, model).with_store(MemoryStore::new());
    let state = finished(
        runner
            .run("Go.", &cx(dir.path(), "keys"))
            .await
            .expect("runs"),
    );
    assert_eq!(charges(dir.path()), ["333", "444"], "both writes ran");
    let child = state
        .child_run(&RunId::new("keys/d1"))
        .expect("the child is kept");
    assert_eq!(results_of(child, "w1")[0].text_content(), "charged 444");
    // And no child's run id is another call's: `a/b` of the root and `b`
    // of child `a` live apart.
    assert_ne!(
        iris::agent::CallPath::root("d1/w1").to_string(),
        iris::agent::CallPath::root("d1").child("w1").to_string()
    );
}

#[tokio::test]
async fn a_delegation_id_with_a_slash_leaves_its_childs_pause_answerable() {
    let dir = tempfile::tempdir().expect("a folder");
    let lead = parent(
        RulePolicy::new().other(Rule::Allow).write(Rule::Ask),
        vec![cashier(500)],
    );
    let model = ScriptedModel::new([delegate("d/1", "Charge 500."), Turn::text("ok")]);
    let runner = AgentRunner::new(lead, model);
    let run_cx = cx(dir.path(), "slash");
    let state = waiting(runner.run("Go.", &run_cx).await.expect("runs"));
    let pending = state.pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, "d%2F1/w1", "the `/` of the id is escaped");
    assert_eq!(pending[0].run_id.as_str(), "slash/d%2F1");
    let request = pending[0]
        .item
        .approval_request()
        .expect("an approval")
        .clone();
    let state = finished(
        runner
            .resume(
                state,
                [(pending[0].id.clone(), ApprovalDecision::approve(&request))],
                &run_cx,
            )
            .await
            .expect("the child's pause is answerable"),
    );
    assert_eq!(results_of(&state, "d/1")[0].text_content(), "done");
    assert_eq!(charges(dir.path()), ["500"]);
}

#[tokio::test]
async fn a_second_resume_of_a_finished_pause_is_refused_at_the_root_and_nested() {
    let dir = tempfile::tempdir().expect("a folder");

    // At the root.
    let runner = AgentRunner::new(
        agent("cashier", RulePolicy::new().write(Rule::Ask)),
        ScriptedModel::new([
            Turn::call_with_id("w1", "charge", json!({"cents": 100})),
            Turn::text("done"),
        ]),
    );
    let run_cx = cx(dir.path(), "again-root");
    let state = waiting(runner.run("Charge.", &run_cx).await.expect("runs"));
    let request = state.approvals().next().expect("an approval").clone();
    let approve = || [("w1".to_owned(), ApprovalDecision::approve(&request))];
    finished(
        runner
            .resume(state.clone(), approve(), &run_cx)
            .await
            .expect("resumes"),
    );
    let again = runner.resume(state, approve(), &run_cx).await;
    assert!(
        matches!(&again, Err(RunError::StateMismatch { why, .. }) if why.contains("decided in this process already")),
        "{again:?}"
    );
    assert_eq!(charges(dir.path()), ["100"], "the charge ran once");

    // Inside a child.
    let lead = parent(
        RulePolicy::new().other(Rule::Allow).write(Rule::Ask),
        vec![cashier(200)],
    );
    let runner = AgentRunner::new(
        lead,
        ScriptedModel::new([delegate("d1", "Charge 200."), Turn::text("ok")]),
    );
    let run_cx = cx(dir.path(), "again-nested");
    let state = waiting(runner.run("Go.", &run_cx).await.expect("runs"));
    let pending = state.pending();
    let request = pending[0]
        .item
        .approval_request()
        .expect("approval")
        .clone();
    let approve = || [("d1/w1".to_owned(), ApprovalDecision::approve(&request))];
    finished(
        runner
            .resume(state.clone(), approve(), &run_cx)
            .await
            .expect("resumes"),
    );
    let again = runner.resume(state, approve(), &run_cx).await;
    assert!(
        matches!(again, Err(RunError::StateMismatch { .. })),
        "{again:?}"
    );
    assert_eq!(charges(dir.path()), ["100", "200"], "each charge ran once");
}

#[tokio::test]
async fn an_approved_delegation_starts_the_task_that_was_shown() {
    let dir = tempfile::tempdir().expect("a folder");
    let child_model = Arc::new(ScriptedModel::new([Turn::text("done")]));
    let build = || {
        parent(
            RulePolicy::new().other(Rule::Ask),
            vec![
                ChildAgent::new(
                    "cashier",
                    "Charges cards.",
                    agent("cashier", RulePolicy::new().write(Rule::Allow)),
                )
                .model(Arc::clone(&child_model)),
            ],
        )
    };
    let runner = AgentRunner::new(
        build(),
        ScriptedModel::new([delegate("d1", "Charge 5 cents."), Turn::text("ok")]),
    );
    let run_cx = cx(dir.path(), "edited-task");
    let mut state = waiting(runner.run("Go.", &run_cx).await.expect("runs"));
    let request = state.approvals().next().expect("an approval").clone();
    assert_eq!(request.arguments["task"], "Charge 5 cents.");

    // The saved state's call is edited; the approval the person gave is
    // for the request they saw.
    if let Some(Message::Assistant { tool_calls, .. }) = state.messages.last_mut() {
        tool_calls[0].input = json!({"task": "Charge 99999 cents."});
    }
    let mut state: RunState =
        iris::serde_json::from_value(iris::serde_json::to_value(&state).expect("saves"))
            .expect("reads back");
    assert_eq!(
        state.approvals().next().expect("it waits").arguments["task"],
        "Charge 99999 cents.",
        "what a state shows is its call"
    );

    // A fresh runner in another process would take it: the seal refuses
    // it, and so does a host that trusts unsealed states, by what the
    // state says of itself.
    let approve = || [("d1".to_owned(), ApprovalDecision::approve(&request))];
    let fresh = AgentRunner::new(build(), ScriptedModel::new([Turn::text("ok")]));
    let outcome = fresh.resume(state.clone(), approve(), &run_cx).await;
    assert!(
        matches!(&outcome, Err(RunError::StateMismatch { why, .. }) if why.contains("seal")),
        "{outcome:?}"
    );
    state.seal = None;
    let trusting =
        AgentRunner::new(build(), ScriptedModel::new([Turn::text("ok")])).trust_unsealed_states();
    let outcome = trusting.resume(state, approve(), &run_cx).await;
    assert!(
        matches!(&outcome, Err(err) if err.to_string().contains("approve the request that is shown")),
        "{outcome:?}"
    );
    assert!(child_model.requests().is_empty(), "the child never started");
}

/// A waiting item holds each fact once: a saved state keeps the call's id
/// and what the call does not say, and everything a person is shown is
/// derived from the history's call, so the two cannot disagree. An item
/// that names no call of the last step, or a call twice, does not read.
#[tokio::test]
async fn a_waiting_item_keeps_each_fact_once_and_shows_what_its_call_makes() {
    let dir = tempfile::tempdir().expect("a folder");
    let runner = AgentRunner::new(
        parent(
            RulePolicy::new().other(Rule::Ask).write(Rule::Ask),
            vec![cashier(5)],
        ),
        ScriptedModel::new([Turn::call_with_id("w1", "charge", json!({"cents": 7}))
            .and_call_with_id("d1", "cashier", json!({"task": "Charge 5 cents."}))]),
    );
    let run_cx = cx(dir.path(), "one-fact");
    let state = waiting(runner.run("Go.", &run_cx).await.expect("runs"));
    let saved = iris::serde_json::to_value(&state).expect("saves");
    let reason = |item: &Value| item["reason"].clone();
    assert_eq!(
        saved["waiting"],
        json!([
            {"call_id": "w1", "kind": "approval", "tool": "charge", "reason": reason(&saved["waiting"][0])},
            {"call_id": "d1", "kind": "approval", "tool": "cashier", "reason": reason(&saved["waiting"][1])},
        ]),
        "no copy of the call, its id, its run or its arguments"
    );
    let shown = state.approvals().next().expect("w1 waits");
    assert_eq!(shown.arguments, json!({"cents": 7}));
    assert_eq!(
        (shown.call_id.as_str(), shown.run_id.as_str()),
        ("w1", "one-fact")
    );

    let read = |edit: &dyn Fn(&mut Value)| {
        let mut edited = saved.clone();
        edit(&mut edited);
        iris::serde_json::from_value::<RunState>(edited).map_err(|e| e.to_string())
    };
    let err = read(&|s| s["waiting"][0]["call_id"] = json!("w9")).expect_err("no such call");
    assert!(
        err.contains("`w9` is not one the history's last step made"),
        "{err}"
    );
    let err = read(&|s| s["waiting"][1]["call_id"] = json!("w1")).expect_err("w1 twice");
    assert!(err.contains("call `w1` waits twice"), "{err}");
    let err = read(&|s| {
        s["waiting"][0] = json!({"call_id": "w1", "kind": "question"});
    })
    .expect_err("a charge asks nothing");
    assert!(err.contains("asks no questions"), "{err}");
    assert_eq!(read(&|_| {}).expect("reads"), state, "and reads back whole");
}

/// Records every event it hears, in the order it hears them, slowly (as
/// a terminal or a socket may be), so queues lag behind the run.
#[derive(Default)]
struct SlowRecorder(std::sync::Mutex<Vec<iris::observe::RunEvent>>);

impl iris::observe::RunEventObserver for SlowRecorder {
    fn on_event(&self, event: &iris::observe::RunEvent) {
        std::thread::sleep(std::time::Duration::from_millis(2));
        self.0.lock().expect("a lock").push(event.clone());
    }
}

/// One observer of a parent and its child (each on an executor of its
/// own) hears the tree's events in the order they happened: the child's
/// calls between its start and its end, whatever each executor's queue
/// holds (`iris run --jsonl` printed them out of order).
#[tokio::test]
async fn an_observer_of_a_tree_hears_its_events_in_the_order_they_happened() {
    use iris::observe::RunEvent;
    let dir = tempfile::tempdir().expect("a folder");
    let recorder = Arc::new(SlowRecorder::default());
    let shared: Arc<dyn iris::observe::RunEventObserver> = recorder.clone();
    let observed = |name: &str, policy: RulePolicy| {
        let executor = ToolExecutor::builder(registry())
            .policy(policy)
            .shared_observer(Arc::clone(&shared))
            .build()
            .expect("builds");
        Agent::builder(executor).name(name)
    };
    let child = observed("cashier", RulePolicy::new().write(Rule::Allow))
        .build()
        .expect("builds");
    let cashier = ChildAgent::new("cashier", "Charges cards.", child).model(ScriptedModel::new([
        Turn::call_with_id("f1", "find_fact", json!({"topic": "a"})).and_call_with_id(
            "f2",
            "find_fact",
            json!({"topic": "b"}),
        ),
        Turn::call_with_id("w1", "charge", json!({"cents": 5})),
        Turn::text("done"),
    ]));
    let lead = observed(
        "lead",
        RulePolicy::new().other(Rule::Allow).write(Rule::Allow),
    )
    .child(cashier)
    .build()
    .expect("builds");
    let runner = AgentRunner::new(
        lead,
        ScriptedModel::new([
            delegate("d1", "Charge 5."),
            Turn::call_with_id("f3", "find_fact", json!({"topic": "c"})),
            Turn::text("ok"),
        ]),
    );
    finished(
        runner
            .run("Go.", &cx(dir.path(), "ordered"))
            .await
            .expect("runs"),
    );
    let mut heard = Vec::new();
    for _ in 0..500 {
        heard = recorder.0.lock().expect("a lock").clone();
        if heard
            .iter()
            .any(|e| matches!(e, RunEvent::RunFinished { run_id } if run_id.as_str() == "ordered"))
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let at = |wanted: &dyn Fn(&RunEvent) -> bool| {
        heard
            .iter()
            .position(wanted)
            .unwrap_or_else(|| panic!("heard: {heard:#?}"))
    };
    let started = at(&|e| matches!(e, RunEvent::ChildStarted { .. }));
    let ended = at(&|e| matches!(e, RunEvent::ChildEnded { .. }));
    let charged = at(&|e| matches!(e, RunEvent::ToolFinished { call_id, .. } if call_id == "w1"));
    let looked = at(&|e| matches!(e, RunEvent::ToolFinished { call_id, .. } if call_id == "f1"));
    let after = at(&|e| matches!(e, RunEvent::ToolStarted { call_id, .. } if call_id == "f3"));
    assert!(
        started < looked && looked < charged && charged < ended && ended < after,
        "child started {started}, looked {looked}, charged {charged}, ended {ended}, parent went on {after}"
    );
}

/// `count` questions in one `ask_question` call.
fn questions(count: usize) -> Value {
    let questions: Vec<Value> = (0..count)
        .map(|at| {
            json!({
                "question": format!("Question {at}?"),
                "header": format!("Q{at}"),
                "options": ["yes", "no"],
                "multi_select": false,
            })
        })
        .collect();
    json!({ "questions": questions })
}

/// Answers every question at once with `yes`, counting the questions.
fn counting_answerer(asked: &Arc<AtomicUsize>) -> Questions {
    let asked = Arc::clone(asked);
    Questions::answered_by(move |request: QuestionRequest| {
        asked.fetch_add(request.questions.len(), Ordering::SeqCst);
        async move {
            let answers = vec![Answer::choose("yes"); request.questions.len()];
            QuestionReply::answer(&request, answers)
        }
    })
}

#[tokio::test]
async fn a_model_reusing_a_call_id_cannot_escape_the_question_cap() {
    let dir = tempfile::tempdir().expect("a folder");
    let asked = Arc::new(AtomicUsize::new(0));
    let ask = || Turn::call_with_id("q1", "ask_question", questions(1));
    let runner = AgentRunner::new(
        agent("asker", RulePolicy::new()),
        ScriptedModel::new([ask(), ask(), ask(), ask(), ask(), ask(), Turn::text("ok")]),
    )
    .with_questions(counting_answerer(&asked).at_most(2));
    finished(
        runner
            .run("Go.", &cx(dir.path(), "reuse-q"))
            .await
            .expect("runs"),
    );
    assert!(
        asked.load(Ordering::SeqCst) <= 2,
        "{} questions asked under a cap of 2",
        asked.load(Ordering::SeqCst)
    );
}

#[tokio::test]
async fn the_question_cap_counts_questions_not_calls() {
    let dir = tempfile::tempdir().expect("a folder");
    let asked = Arc::new(AtomicUsize::new(0));
    let runner = AgentRunner::new(
        agent("asker", RulePolicy::new()),
        ScriptedModel::new([
            Turn::call_with_id("q1", "ask_question", questions(3)),
            Turn::call_with_id("q2", "ask_question", questions(2)),
            Turn::call_with_id("q3", "ask_question", questions(1)),
            Turn::text("ok"),
        ]),
    )
    .with_questions(counting_answerer(&asked).at_most(2));
    let state = finished(
        runner
            .run("Go.", &cx(dir.path(), "count-q"))
            .await
            .expect("runs"),
    );
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    let first = &results_of(&state, "q1")[0];
    assert_eq!(first.error_kind(), Some(ToolErrorKind::PermissionDenied));
    assert!(
        first
            .text_content()
            .contains("this call asks 3; ask at most 2 more"),
        "{}",
        first.text_content()
    );
    assert!(results_of(&state, "q2")[0].error_kind().is_none());
    assert_eq!(
        results_of(&state, "q3")[0].error_kind(),
        Some(ToolErrorKind::PermissionDenied)
    );
}

#[tokio::test]
async fn child_agents_questions_count_toward_their_roots_cap() {
    let dir = tempfile::tempdir().expect("a folder");
    let asked = Arc::new(AtomicUsize::new(0));
    let child = |id: &str| {
        ChildAgent::new(
            format!("helper_{id}"),
            "Asks the person.",
            agent(&format!("helper_{id}"), RulePolicy::new()),
        )
        .model(ScriptedModel::new([
            Turn::call_with_id("q1", "ask_question", questions(2)),
            Turn::text("asked"),
        ]))
    };
    let lead = {
        let executor = ToolExecutor::builder(registry())
            .policy(RulePolicy::new().other(Rule::Allow))
            .build()
            .expect("builds");
        Agent::builder(executor)
            .name("lead")
            .child(child("a"))
            .child(child("b"))
            .build()
            .expect("builds")
    };
    let runner = AgentRunner::new(
        lead,
        ScriptedModel::new([
            Turn::call_with_id("d1", "helper_a", json!({"task": "Ask."})),
            Turn::call_with_id("d2", "helper_b", json!({"task": "Ask."})),
            Turn::call_with_id("q1", "ask_question", questions(1)),
            Turn::text("ok"),
        ]),
    )
    .with_questions(counting_answerer(&asked).at_most(2));
    let state = finished(
        runner
            .run("Go.", &cx(dir.path(), "tree-q"))
            .await
            .expect("runs"),
    );
    assert_eq!(
        asked.load(Ordering::SeqCst),
        2,
        "the first child's two questions spent the root's cap"
    );
    assert_eq!(
        results_of(&state, "q1")[0].error_kind(),
        Some(ToolErrorKind::PermissionDenied)
    );
}

#[tokio::test]
async fn the_question_cap_holds_across_a_pause() {
    let dir = tempfile::tempdir().expect("a folder");
    let runner = AgentRunner::new(
        agent("asker", RulePolicy::new()),
        ScriptedModel::new([
            Turn::call_with_id("q1", "ask_question", questions(2)),
            Turn::call_with_id("q2", "ask_question", questions(1)),
            Turn::text("ok"),
        ]),
    )
    .with_questions(Questions::new().at_most(2));
    let run_cx = cx(dir.path(), "pause-q");
    let state = waiting(runner.run("Go.", &run_cx).await.expect("runs"));
    let request = state.questions().next().expect("asked").clone();
    let reply = QuestionReply::answer(&request, vec![Answer::choose("yes"); 2]);
    let state = finished(
        runner
            .resume(state, [("q1".to_owned(), Reply::from(reply))], &run_cx)
            .await
            .expect("resumes"),
    );
    assert_eq!(
        results_of(&state, "q2")[0].error_kind(),
        Some(ToolErrorKind::PermissionDenied),
        "the resume did not start the count again"
    );
}

#[tokio::test]
async fn a_multi_select_answer_picks_each_label_once() {
    let dir = tempfile::tempdir().expect("a folder");
    let question = json!({"questions": [{
        "question": "Which regions?",
        "header": "Regions",
        "options": ["eu", "us", "asia"],
        "multi_select": true,
    }]});
    let runner = AgentRunner::new(
        agent("asker", RulePolicy::new()),
        ScriptedModel::new([
            Turn::call_with_id("q1", "ask_question", question),
            Turn::text("ok"),
        ]),
    )
    .with_questions(Questions::new());
    let run_cx = cx(dir.path(), "multi");
    let state = waiting(runner.run("Go.", &run_cx).await.expect("runs"));
    let request = state.questions().next().expect("asked").clone();
    let flood = QuestionReply::answer(
        &request,
        vec![Answer::choose_all(std::iter::repeat_n("eu", 10_000))],
    );
    let refused = runner
        .resume(
            state.clone(),
            [("q1".to_owned(), Reply::from(flood))],
            &run_cx,
        )
        .await;
    assert!(
        matches!(&refused, Err(RunError::WrongReply { why, .. }) if why.to_string().contains("more than once")),
        "{refused:?}"
    );
    let fair = QuestionReply::answer(&request, vec![Answer::choose_all(["eu", "asia"])]);
    let state = finished(
        runner
            .resume(state, [("q1".to_owned(), Reply::from(fair))], &run_cx)
            .await
            .expect("a fair answer resumes"),
    );
    assert!(results_of(&state, "q1")[0].text_content().contains("eu"));
}

#[test]
fn a_child_named_like_a_run_control_tool_is_refused_naming_the_feature() {
    for name in ["ask_question", "activate_skill"] {
        let child = ChildAgent::new(
            name,
            "Pretends to be run control.",
            agent("impostor", RulePolicy::new()),
        );
        let built = Agent::builder(
            ToolExecutor::builder(ToolRegistry::new())
                .build()
                .expect("builds"),
        )
        .name("lead")
        .child(child)
        .build();
        let Err(err @ AgentBuildError::DuplicateName { .. }) = built else {
            panic!("`{name}` must be refused: {built:?}");
        };
        let message = err.to_string();
        assert!(message.contains("run control"), "{message}");
        assert!(message.contains("child agent `"), "{message}");
    }
}

#[tokio::test]
async fn the_testing_kit_matches_a_decision_to_the_call_of_its_own_run() {
    let dir = tempfile::tempdir().expect("a folder");
    let lead = parent(
        RulePolicy::new().other(Rule::Allow).write(Rule::Ask),
        vec![cashier(500)],
    );
    // The root's own `w1` is a lookup; the child's `w1` is the charge a
    // person denies.
    let model = ScriptedModel::new([
        Turn::call_with_id("w1", "find_fact", json!({"topic": "tides"})),
        delegate("d1", "Charge 500."),
        Turn::text("ok"),
    ]);
    let runner = AgentRunner::new(lead, model);
    let (outcome, transcript) = run_to_end(
        &runner,
        "Go.",
        &cx(dir.path(), "kit"),
        deny_all("not today"),
    )
    .await
    .expect("runs");
    finished(outcome);
    transcript.assert_decided("charge", Decided::Denied);
    assert!(charges(dir.path()).is_empty());
}

#[tokio::test]
async fn an_agent_file_rules_on_a_child_by_its_name() {
    let dir = tempfile::tempdir().expect("a folder");
    std::fs::write(
        dir.path().join("desk.yaml"),
        "name: desk\ninstructions: Delegate.\npermissions:\n  other: allow\n  tools: { receipts: ask }\nagents:\n  - name: receipts\n    description: Files receipts.\n    file: receipts.yaml\n",
    )
    .expect("written");
    std::fs::write(
        dir.path().join("receipts.yaml"),
        "name: receipts\ninstructions: File them.\n",
    )
    .expect("written");
    let desk = iris::assembly::Assembly::builder()
        .build()
        .load(dir.path().join("desk.yaml"))
        .expect("a rule may name a child, as chapter 7 says");
    let runner = AgentRunner::new(
        desk,
        ScriptedModel::new([
            Turn::call_with_id("r1", "receipts", json!({"task": "File it."})),
            Turn::text("ok"),
        ]),
    );
    let state = waiting(
        runner
            .run("Go.", &cx(dir.path(), "by-name"))
            .await
            .expect("runs"),
    );
    let request = state.approvals().next().expect("the start waits");
    assert_eq!(request.tool.as_str(), "receipts");
}

#[tokio::test]
async fn a_state_edited_outside_is_refused_by_default_in_another_process() {
    let dir = tempfile::tempdir().expect("a folder");
    let build = || {
        parent(
            RulePolicy::new().other(Rule::Allow).write(Rule::Ask),
            vec![cashier(300)],
        )
    };
    let runner = AgentRunner::new(
        build(),
        ScriptedModel::new([delegate("d1", "Charge 300."), Turn::text("ok")]),
    );
    let run_cx = cx(dir.path(), "sealed");
    let state = waiting(runner.run("Go.", &run_cx).await.expect("runs"));
    assert!(state.seal.is_some(), "a state is sealed by default");
    let pending = state.pending();
    let request = pending[0]
        .item
        .approval_request()
        .expect("approval")
        .clone();
    let approve = || [("d1/w1".to_owned(), ApprovalDecision::approve(&request))];

    // The child's step counter reset (to buy it more steps), a skill added
    // (to pre-approve a write), a finished result dropped (to run it again).
    let mut reset = iris::serde_json::to_value(&state).expect("saves");
    reset["waiting"][0]["state"]["step"] = json!(0);
    let reset: RunState = iris::serde_json::from_value(reset).expect("reads back");
    let mut skilled = state.clone();
    skilled.skills.push("expense-policy".to_owned());
    let mut rerun = state.clone();
    rerun.messages.truncate(1);
    for (what, edited) in [("step", reset), ("skills", skilled), ("history", rerun)] {
        let elsewhere = AgentRunner::new(build(), ScriptedModel::new([Turn::text("ok")]));
        let outcome = elsewhere.resume(edited, approve(), &run_cx).await;
        assert!(
            matches!(&outcome, Err(RunError::StateMismatch { why, .. }) if why.contains("seal does not verify")),
            "{what}: {outcome:?}"
        );
    }
    assert!(charges(dir.path()).is_empty(), "nothing ran");
    // The state as sealed resumes in another process of this host (whose
    // cashier model goes on from its answer after the pause).
    let resumed_cashier = ChildAgent::new(
        "cashier",
        "Charges cards.",
        agent("cashier", RulePolicy::new().write(Rule::Allow)),
    )
    .model(ScriptedModel::new([Turn::text("done")]));
    let elsewhere = AgentRunner::new(
        parent(
            RulePolicy::new().other(Rule::Allow).write(Rule::Ask),
            vec![resumed_cashier],
        ),
        ScriptedModel::new([Turn::text("ok")]),
    );
    finished(
        elsewhere
            .resume(state, approve(), &run_cx)
            .await
            .expect("the sealed state resumes"),
    );
    assert_eq!(charges(dir.path()), ["300"]);
}

/// How one attempt to resume a pause is made.
#[derive(Debug, Clone, Copy)]
enum Attempt {
    /// The runner that paused the run, with the state as returned.
    SameRunner,
    /// Another runner of the same agent, with the state through JSON.
    AnotherRunner,
    /// The state with its seal taken off, by a runner that trusts
    /// unsealed states.
    Unsealed,
}

fn attempt() -> impl proptest::strategy::Strategy<Value = Attempt> {
    use proptest::prelude::*;
    prop_oneof![
        Just(Attempt::SameRunner),
        Just(Attempt::AnotherRunner),
        Just(Attempt::Unsealed),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// However a process tries to resume one pause again (the same
    /// runner, another runner of the agent, a copy through JSON, a copy
    /// without its seal, in any order), one resume takes it and the
    /// approved write runs once; every other is refused before anything
    /// runs.
    #[test]
    fn no_two_replies_consume_one_pause(
        attempts in proptest::collection::vec(attempt(), 2..6),
        nested in proptest::bool::ANY,
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let dir = tempfile::tempdir().expect("a folder");
            let lead = Arc::new(parent(
                RulePolicy::new().other(Rule::Allow).write(Rule::Ask),
                vec![cashier(700)],
            ));
            let first = if nested {
                ScriptedModel::new([delegate("d1", "Charge 700."), Turn::text("ok")])
            } else {
                ScriptedModel::new([
                    Turn::call_with_id("w1", "charge", json!({"cents": 700})),
                    Turn::text("ok"),
                ])
            };
            let runner = AgentRunner::new(Arc::clone(&lead), first);
            let run_cx = cx(dir.path(), "once");
            let state = waiting(runner.run("Go.", &run_cx).await.expect("runs"));
            let pending = state.pending();
            let id = pending[0].id.clone();
            let request = pending[0].item.approval_request().expect("approval").clone();
            let mut taken = 0;
            for how in &attempts {
                let reply = [(id.clone(), ApprovalDecision::approve(&request))];
                let outcome = match how {
                    Attempt::SameRunner => runner.resume(state.clone(), reply, &run_cx).await,
                    Attempt::AnotherRunner => {
                        let copy: RunState = iris::serde_json::from_str(
                            &iris::serde_json::to_string(&state).expect("writes"),
                        )
                        .expect("reads");
                        AgentRunner::new(
                            Arc::clone(&lead),
                            ScriptedModel::new([Turn::text("ok")]),
                        )
                        .resume(copy, reply, &run_cx)
                        .await
                    }
                    Attempt::Unsealed => {
                        let mut copy = state.clone();
                        copy.seal = None;
                        AgentRunner::new(
                            Arc::clone(&lead),
                            ScriptedModel::new([Turn::text("ok")]),
                        )
                        .trust_unsealed_states()
                        .resume(copy, reply, &run_cx)
                        .await
                    }
                };
                match outcome {
                    Ok(_) => taken += 1,
                    Err(RunError::StateMismatch { .. }) => {}
                    Err(other) => panic!("{how:?}: {other}"),
                }
            }
            assert_eq!(taken, 1, "{attempts:?}");
            assert_eq!(charges(dir.path()), ["700"], "{attempts:?}");
        });
    }
}
