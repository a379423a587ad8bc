//! Child agents, run control beside the executor: declared by the host,
//! called by the parent model as tools; the parent's hooks and middleware
//! never wrap the call, its policy gates the start by name; the child runs
//! its own executor, sees only its task, is held to every ancestor's
//! policy, its limits and the parent's cancellation; its pauses bubble to
//! the root, which lists them flat and resumes them where they paused, so
//! a protected call runs exactly once and finished siblings never again.
#![allow(
    clippy::too_many_lines,
    reason = "each scenario reads top to bottom, as a person would walk it"
)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use iris::agent::store::{MemoryStore, RunStore};
use iris::agent::{
    Agent, AgentRunner, ChildAgent, Delegation, RunContext, RunError, RunOutcome, RunState,
};
use iris::definition::ToolName;
use iris::hooks::{BeforeAnswer, HookInput, HookRegistration};
use iris::middleware::MiddlewareError;
use iris::model::Message;
use iris::observe::RunEvent;
use iris::serde_json::{Value, json};
use iris::testing::{EventLog, FnModel, ScriptedModel, Turn};
use iris::{
    ApprovalDecision, Next, Rule, RulePolicy, RunId, ToolCall, ToolContext, ToolExecutor,
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

/// Wait a long time.
#[iris::tool(read_only)]
async fn wait_long() -> &'static str {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "woke"
}

static PARENT_HOOKED: AtomicUsize = AtomicUsize::new(0);
static PARENT_WRAPPED: AtomicUsize = AtomicUsize::new(0);
static CHILD_WRAPPED: AtomicUsize = AtomicUsize::new(0);

/// Counts every call the parent's chain wraps.
#[iris::middleware]
async fn parent_counting(call: ToolCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
    PARENT_WRAPPED.fetch_add(1, Ordering::SeqCst);
    next.run(call).await
}

/// Counts every call the child's chain wraps.
#[iris::middleware]
async fn child_counting(call: ToolCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
    CHILD_WRAPPED.fetch_add(1, Ordering::SeqCst);
    next.run(call).await
}

/// The tests share counters: one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

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
    registry.register(WaitLong).expect("registers");
    registry
}

/// A child agent named `name` with every tool, whose writes run unless an
/// ancestor says otherwise.
fn child_agent(name: &str) -> Agent {
    let executor = ToolExecutor::builder(registry())
        .policy(RulePolicy::new().write(Rule::Allow))
        .middleware(ChildCounting)
        .build()
        .expect("builds");
    Agent::builder(executor)
        .name(name)
        .instructions(format!("You are {name}."))
        .build()
        .expect("builds")
}

/// A parent with `policy`, a deny-all `tool.before` hook and a counting
/// middleware, delegating to `children`.
fn parent(policy: RulePolicy, children: Vec<ChildAgent>) -> Agent {
    let executor = ToolExecutor::builder(ToolRegistry::new())
        .policy(policy)
        .hook(HookRegistration::before("deny_all", |_: &HookInput| {
            PARENT_HOOKED.fetch_add(1, Ordering::SeqCst);
            BeforeAnswer::deny("the parent runs nothing itself")
        }))
        .middleware(ParentCounting)
        .build()
        .expect("builds");
    let mut builder = Agent::builder(executor)
        .name("lead")
        .instructions("Delegate.");
    for child in children {
        builder = builder.child(child);
    }
    builder.build().expect("builds")
}

/// The parent's default policy lets children start (`other: allow`) and
/// asks before writes.
fn lets_children_start() -> RulePolicy {
    RulePolicy::new().other(Rule::Allow).write(Rule::Ask)
}

fn delegate(id: &str, child: &str, task: &str) -> Turn {
    Turn::call_with_id(id, child, json!({"task": task}))
}

fn result_of(state: &RunState, id: &str) -> ToolResult {
    state
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool {
                call_id, result, ..
            } if call_id == id => Some(result.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("call `{id}` has no result in {:#?}", state.messages))
}

fn cx(dir: &Path, run: &str) -> RunContext {
    RunContext::new(dir, RunId::new(run))
}

#[tokio::test]
async fn a_child_sees_its_task_only_runs_its_own_chain_and_answers_the_call() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let events = EventLog::new();
    let child_model = Arc::new(ScriptedModel::new([
        Turn::call_with_id("l1", "find_fact", json!({"topic": "tides"})),
        Turn::text("Tides: 42.").with_usage(10, 5),
    ]));
    let researcher = ChildAgent::new("researcher", "Looks things up.", child_agent("researcher"))
        .model(Arc::clone(&child_model));
    let executor_events = events.clone();
    let lead = {
        let executor = ToolExecutor::builder(ToolRegistry::new())
            .policy(lets_children_start())
            .hook(HookRegistration::before("deny_all", |_: &HookInput| {
                PARENT_HOOKED.fetch_add(1, Ordering::SeqCst);
                BeforeAnswer::deny("no")
            }))
            .middleware(ParentCounting)
            .observer(executor_events)
            .build()
            .expect("builds");
        Agent::builder(executor)
            .name("lead")
            .child(researcher)
            .build()
            .expect("builds")
    };
    let parent_model = Arc::new(ScriptedModel::new([
        delegate("d1", "researcher", "Find the tide height."),
        Turn::text("It is 42.").with_usage(20, 5),
    ]));
    let before =
        [&PARENT_HOOKED, &PARENT_WRAPPED, &CHILD_WRAPPED].map(|c| c.load(Ordering::SeqCst));
    let runner = AgentRunner::new(lead, Arc::clone(&parent_model));
    let outcome = runner
        .run("How high are the tides?", &cx(dir.path(), "root"))
        .await
        .expect("runs");
    let RunOutcome::Finished { text, state } = outcome else {
        panic!("finishes: {outcome:?}");
    };
    assert_eq!(text, "It is 42.");
    let answered = result_of(&state, "d1");
    assert_eq!(answered.text_content(), "Tides: 42.");
    assert_eq!(answered.data().expect("data")["agent"], "researcher");

    // The parent model saw the child as a strict tool taking a task.
    let offered = &parent_model.requests()[0];
    let spec = offered
        .tools
        .iter()
        .find(|t| t.name().as_str() == "researcher")
        .expect("offered");
    assert!(spec.strict());
    assert_eq!(spec.parameters()["required"], json!(["task"]));

    // The child saw its own instructions and its task, nothing else.
    let first = &child_model.requests()[0];
    assert_eq!(first.instructions.as_deref(), Some("You are researcher."));
    assert_eq!(
        first.messages,
        [Message::User {
            text: "Find the tide height.".to_owned()
        }]
    );

    // Its run is kept apart, addressable by its derived run id, and its
    // tokens roll up into the parent's.
    assert_eq!(state.children.len(), 1);
    let child_run = RunId::new("root/d1");
    let kept = state.child_run(&child_run).expect("kept");
    assert_eq!(kept.step, 2);
    assert_eq!(state.children[0].ending, "finished");
    assert_eq!(state.usage.input_tokens, 30);
    assert!(
        !state
            .messages
            .iter()
            .any(|m| matches!(m, Message::Tool { call_id, .. } if call_id == "l1")),
        "the child's calls are not spliced into the parent's history"
    );

    let after = [&PARENT_HOOKED, &PARENT_WRAPPED, &CHILD_WRAPPED].map(|c| c.load(Ordering::SeqCst));
    assert_eq!(
        after[0], before[0],
        "the parent's hooks never saw the delegation"
    );
    assert_eq!(
        after[1], before[1],
        "the parent's middleware never wrapped it"
    );
    assert_eq!(
        after[2],
        before[2] + 1,
        "the child's own chain wrapped its call"
    );

    let heard = events.wait_until(
        |events| {
            events
                .iter()
                .any(|e| matches!(e, RunEvent::ChildEnded { .. }))
        },
        Duration::from_secs(5),
    );
    assert!(heard.iter().any(|e| matches!(e,
        RunEvent::ChildStarted { root_run_id, run_id, parent_call_id, agent, depth: 1, .. }
            if root_run_id.as_str() == "root" && *run_id == child_run && parent_call_id == "d1" && agent == "researcher")));
    assert!(heard.iter().any(|e| matches!(e,
        RunEvent::ChildEnded { ending, .. } if ending == "finished")));
}

#[tokio::test]
async fn the_parents_policy_gates_a_child_by_name() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let researcher = || {
        ChildAgent::new("researcher", "Looks things up.", child_agent("researcher"))
            .model(ScriptedModel::new([Turn::text("found it")]))
    };

    // Denied by name: the child never starts.
    let denying = RulePolicy::new()
        .other(Rule::Allow)
        .tool(ToolName::new("researcher").expect("valid"), Rule::Deny);
    let runner = AgentRunner::new(
        parent(denying, vec![researcher()]),
        ScriptedModel::new([delegate("d1", "researcher", "Go."), Turn::text("ok")]),
    );
    let RunOutcome::Finished { state, .. } = runner
        .run("Go.", &cx(dir.path(), "deny"))
        .await
        .expect("runs")
    else {
        panic!("finishes");
    };
    let refused = result_of(&state, "d1");
    assert_eq!(
        refused.error_kind().map(iris::ToolErrorKind::as_str),
        Some("permission_denied")
    );
    assert!(state.children.is_empty(), "the child never ran");

    // Asked: the run waits on the start; an approval starts it.
    let asking = RulePolicy::new().other(Rule::Ask);
    let runner = AgentRunner::new(
        parent(asking, vec![researcher()]),
        ScriptedModel::new([delegate("d1", "researcher", "Go."), Turn::text("ok")]),
    );
    let run_cx = cx(dir.path(), "ask");
    let RunOutcome::Waiting(state) = runner.run("Go.", &run_cx).await.expect("runs") else {
        panic!("waits for the start's approval");
    };
    let pending = state.pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, "d1");
    let request = pending[0]
        .item
        .approval_request()
        .expect("an approval")
        .clone();
    assert_eq!(request.tool.as_str(), "researcher");
    let outcome = runner
        .resume(
            state,
            [("d1".to_owned(), ApprovalDecision::approve(&request))],
            &run_cx,
        )
        .await
        .expect("resumes");
    let RunOutcome::Finished { state, .. } = outcome else {
        panic!("finishes: {outcome:?}");
    };
    assert_eq!(result_of(&state, "d1").text_content(), "found it");
}

#[tokio::test]
async fn a_child_never_does_more_than_its_ancestors_allow() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let charging = || {
        ScriptedModel::new([
            Turn::call_with_id("w1", "charge", json!({"cents": 500})),
            Turn::text("done"),
        ])
    };

    // A read-only parent (writes denied) cannot write through a child
    // whose own policy allows writes, even a widened one.
    for widened in [false, true] {
        let mut cashier =
            ChildAgent::new("cashier", "Charges cards.", child_agent("cashier")).model(charging());
        if widened {
            cashier = cashier.widen_permissions();
        }
        let read_only = RulePolicy::new().other(Rule::Allow).write(Rule::Deny);
        let runner = AgentRunner::new(
            parent(read_only, vec![cashier]),
            ScriptedModel::new([delegate("d1", "cashier", "Charge 500."), Turn::text("ok")]),
        );
        let outcome = runner
            .run("Charge.", &cx(dir.path(), &format!("ro-{widened}")))
            .await
            .expect("runs");
        let RunOutcome::Finished { state, .. } = outcome else {
            panic!("finishes: {outcome:?}");
        };
        let child = state
            .child_run(&RunId::new(format!("ro-{widened}/d1")))
            .expect("kept");
        let write = result_of(child, "w1");
        assert_eq!(
            write.error_kind().map(iris::ToolErrorKind::as_str),
            Some("permission_denied"),
            "widened: {widened}"
        );
    }
    assert!(charges(dir.path()).is_empty(), "nothing was charged");

    // Where the root asks before writes, a child's write asks too; a host
    // that widened the child lets it write as its own policy says.
    for widened in [false, true] {
        let mut cashier =
            ChildAgent::new("cashier", "Charges cards.", child_agent("cashier")).model(charging());
        if widened {
            cashier = cashier.widen_permissions();
        }
        let runner = AgentRunner::new(
            parent(lets_children_start(), vec![cashier]),
            ScriptedModel::new([delegate("d1", "cashier", "Charge 500."), Turn::text("ok")]),
        );
        let outcome = runner
            .run("Charge.", &cx(dir.path(), &format!("ask-{widened}")))
            .await
            .expect("runs");
        assert_eq!(
            matches!(outcome, RunOutcome::Waiting(_)),
            !widened,
            "widened: {widened}: {outcome:?}"
        );
    }
    assert_eq!(charges(dir.path()), ["500"], "only the widened child wrote");
    std::fs::remove_file(dir.path().join("charges.txt")).expect("removed");

    // A parent deny rule on a tool the child also has holds in the child.
    let no_charge = RulePolicy::new()
        .other(Rule::Allow)
        .tool(ToolName::new("charge").expect("valid"), Rule::Deny);
    let runner = AgentRunner::new(
        parent(
            no_charge,
            vec![
                ChildAgent::new("cashier", "Charges cards.", child_agent("cashier"))
                    .model(charging()),
            ],
        ),
        ScriptedModel::new([delegate("d1", "cashier", "Charge 500."), Turn::text("ok")]),
    );
    let RunOutcome::Finished { state, .. } = runner
        .run("Charge.", &cx(dir.path(), "rule"))
        .await
        .expect("runs")
    else {
        panic!("finishes");
    };
    let child = state.child_run(&RunId::new("rule/d1")).expect("kept");
    assert_eq!(
        result_of(child, "w1")
            .error_kind()
            .map(iris::ToolErrorKind::as_str),
        Some("permission_denied")
    );

    // A child asking for a tool it was not shown gets nothing.
    let bare = Agent::builder(
        ToolExecutor::builder(ToolRegistry::new())
            .build()
            .expect("builds"),
    )
    .name("bare")
    .build()
    .expect("builds");
    let runner = AgentRunner::new(
        parent(
            lets_children_start(),
            vec![ChildAgent::new("bare", "Has no tools.", bare).model(charging())],
        ),
        ScriptedModel::new([delegate("d1", "bare", "Charge 500."), Turn::text("ok")]),
    );
    let RunOutcome::Finished { state, .. } = runner
        .run("Charge.", &cx(dir.path(), "unshown"))
        .await
        .expect("runs")
    else {
        panic!("finishes");
    };
    let child = state.child_run(&RunId::new("unshown/d1")).expect("kept");
    assert_eq!(
        result_of(child, "w1")
            .error_kind()
            .map(iris::ToolErrorKind::as_str),
        Some("unknown_tool")
    );
    assert!(charges(dir.path()).is_empty(), "nothing was charged");
}

/// A tree `depth` levels deep: each level delegates to the next, and the
/// deepest charges 500 (its write asks, as the root's policy says).
fn tree(depth: u32) -> (Agent, Vec<Arc<ScriptedModel>>) {
    tree_at(depth, false)
}

/// The same tree in another process that resumes it after the pause: its
/// models go on from their answers after the paused step (a model asked
/// again answers the next turn, not the first).
fn resumed_tree(depth: u32) -> (Agent, Vec<Arc<ScriptedModel>>) {
    tree_at(depth, true)
}

fn tree_at(depth: u32, resumed: bool) -> (Agent, Vec<Arc<ScriptedModel>>) {
    let mut models = Vec::new();
    let leaf_model = Arc::new(if resumed {
        ScriptedModel::new([Turn::text("charged")])
    } else {
        ScriptedModel::new([
            Turn::call_with_id("w1", "charge", json!({"cents": 500})),
            Turn::text("charged"),
        ])
    });
    models.push(Arc::clone(&leaf_model));
    let mut below = ChildAgent::new("level", "Does the task.", child_agent("level"))
        .model(Arc::clone(&leaf_model));
    for level in 1..depth {
        let done = Turn::text(format!("level {level} done"));
        let model = Arc::new(if resumed {
            ScriptedModel::new([done])
        } else {
            ScriptedModel::new([delegate("d1", "level", "Charge 500."), done])
        });
        models.push(Arc::clone(&model));
        let executor = ToolExecutor::builder(registry())
            .policy(RulePolicy::new().other(Rule::Allow).write(Rule::Allow))
            .build()
            .expect("builds");
        let agent = Agent::builder(executor)
            .name("level")
            .child(below)
            .build()
            .expect("builds");
        below = ChildAgent::new("level", "Does the task.", agent).model(model);
    }
    (parent(lets_children_start(), vec![below]), models)
}

#[tokio::test]
async fn an_approval_at_depth_1_2_and_3_bubbles_to_the_root_and_runs_exactly_once() {
    let _serial = SERIAL.lock().await;
    for depth in 1..=3_u32 {
        for (decision, across_processes) in [("approve", false), ("approve", true), ("deny", false)]
        {
            let dir = tempfile::tempdir().expect("a folder");
            let run = format!("tree-{depth}");
            let run_cx = cx(dir.path(), &run);
            let (agent, _) = tree(depth);
            let runner = AgentRunner::new(
                agent,
                ScriptedModel::new([
                    delegate("d1", "level", "Charge 500."),
                    Turn::text("all done"),
                ]),
            )
            .with_delegation(Delegation::new().max_depth(depth));
            let RunOutcome::Waiting(state) = runner.run("Charge.", &run_cx).await.expect("runs")
            else {
                panic!("depth {depth}: the deepest write waits");
            };
            let pending = state.pending();
            assert_eq!(pending.len(), 1, "depth {depth}");
            let id = pending[0].id.clone();
            assert_eq!(id, format!("{}w1", "d1/".repeat(depth as usize)));
            assert_eq!(pending[0].agents.len(), depth as usize);
            let request = pending[0]
                .item
                .approval_request()
                .expect("approval")
                .clone();
            assert!(charges(dir.path()).is_empty());
            let reply = if decision == "approve" {
                ApprovalDecision::approve(&request)
            } else {
                ApprovalDecision::deny("not today")
            };
            let (runner, state) = if across_processes {
                // Another process: the state as JSON, a new runner.
                let saved = iris::serde_json::to_string(&state).expect("writes");
                let (agent, _) = resumed_tree(depth);
                let runner = AgentRunner::new(agent, ScriptedModel::new([Turn::text("all done")]))
                    .with_delegation(Delegation::new().max_depth(depth));
                (runner, iris::serde_json::from_str(&saved).expect("reads"))
            } else {
                (runner, state)
            };
            let outcome = runner
                .resume(state, [(id.clone(), reply)], &run_cx)
                .await
                .expect("resumes");
            let RunOutcome::Finished { text, state } = outcome else {
                panic!("depth {depth}: finishes: {outcome:?}");
            };
            assert_eq!(text, "all done");
            let expected: &[&str] = if decision == "approve" { &["500"] } else { &[] };
            assert_eq!(charges(dir.path()), expected, "depth {depth} {decision}");
            assert_eq!(state.children.len(), 1);
        }
    }
}

#[tokio::test]
async fn finished_siblings_never_run_again_and_partial_replies_keep_the_rest_waiting() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let looked = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&looked);
    // A researcher that finishes at once; two cashiers whose writes ask.
    let researcher_model = FnModel::new(move |request| {
        counted.fetch_add(1, Ordering::SeqCst);
        let _ = request;
        Ok(iris::model::ModelResponse {
            text: Some("found".to_owned()),
            ..Default::default()
        })
    });
    let cashier = |cents: u64| {
        ScriptedModel::new([
            Turn::call_with_id("w1", "charge", json!({"cents": cents})),
            Turn::text(format!("charged {cents}")),
        ])
    };
    let asking_writes = || {
        let executor = ToolExecutor::builder(registry())
            .policy(RulePolicy::new().write(Rule::Ask))
            .build()
            .expect("builds");
        Agent::builder(executor)
            .name("cashier")
            .build()
            .expect("builds")
    };
    let lead = parent(
        lets_children_start(),
        vec![
            ChildAgent::new("researcher", "Looks up.", child_agent("researcher"))
                .model(researcher_model)
                .concurrency_safe(),
            ChildAgent::new("cashier_a", "Charges.", asking_writes())
                .model(cashier(100))
                .concurrency_safe(),
            ChildAgent::new("cashier_b", "Charges.", asking_writes())
                .model(cashier(200))
                .concurrency_safe(),
        ],
    );
    let runner = AgentRunner::new(
        lead,
        ScriptedModel::new([
            delegate("r1", "researcher", "Look.")
                .and_call_with_id("a1", "cashier_a", json!({"task": "Charge 100."}))
                .and_call_with_id("b1", "cashier_b", json!({"task": "Charge 200."})),
            Turn::text("all done"),
        ]),
    );
    let run_cx = cx(dir.path(), "siblings");
    let RunOutcome::Waiting(state) = runner.run("Go.", &run_cx).await.expect("runs") else {
        panic!("two writes wait");
    };
    assert_eq!(looked.load(Ordering::SeqCst), 1);
    assert_eq!(state.finished.len(), 1, "the researcher finished");
    let ids: Vec<String> = state.pending().into_iter().map(|p| p.id).collect();
    assert_eq!(ids, ["a1/w1", "b1/w1"]);
    let approve = |state: &RunState, id: &str| {
        let request = state
            .find_pending(id)
            .and_then(|item| item.approval_request())
            .expect("waits")
            .clone();
        ApprovalDecision::approve(&request)
    };

    // One reply: that child goes on, the other keeps waiting.
    let reply = approve(&state, "a1/w1");
    let outcome = runner
        .resume(state, [("a1/w1".to_owned(), reply)], &run_cx)
        .await
        .expect("resumes");
    let RunOutcome::Waiting(state) = outcome else {
        panic!("b still waits: {outcome:?}");
    };
    assert_eq!(charges(dir.path()), ["100"]);
    let ids: Vec<String> = state.pending().into_iter().map(|p| p.id).collect();
    assert_eq!(ids, ["b1/w1"]);

    let reply = approve(&state, "b1/w1");
    let outcome = runner
        .resume(state, [("b1/w1".to_owned(), reply)], &run_cx)
        .await
        .expect("resumes");
    let RunOutcome::Finished { state, .. } = outcome else {
        panic!("finishes: {outcome:?}");
    };
    assert_eq!(charges(dir.path()), ["100", "200"], "each write ran once");
    assert_eq!(
        looked.load(Ordering::SeqCst),
        1,
        "the finished sibling never ran again"
    );
    assert_eq!(state.children.len(), 3);
    assert_eq!(result_of(&state, "a1").text_content(), "charged 100");
}

#[tokio::test]
async fn a_reply_to_a_child_item_is_checked_before_anything_runs() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let (agent, _) = tree(1);
    let runner = AgentRunner::new(
        agent,
        ScriptedModel::new([delegate("d1", "level", "Charge 500."), Turn::text("done")]),
    );
    let run_cx = cx(dir.path(), "checked");
    let RunOutcome::Waiting(state) = runner.run("Charge.", &run_cx).await.expect("runs") else {
        panic!("waits");
    };
    for (id, reply) in [
        ("d1", ApprovalDecision::deny("the child itself")),
        ("d1/zz", ApprovalDecision::deny("no such item")),
        (
            "d1/w1",
            ApprovalDecision::Approve {
                approval_id: "not-the-request-shown".to_owned(),
            },
        ),
    ] {
        let err = runner
            .resume(state.clone(), [(id.to_owned(), reply)], &run_cx)
            .await
            .expect_err("refused");
        assert!(
            matches!(
                err,
                RunError::WrongReply { .. } | RunError::UnknownDecision { .. }
            ),
            "{id}: {err}"
        );
    }
    assert!(charges(dir.path()).is_empty());
}

#[tokio::test]
async fn limits_end_a_child_with_a_result_the_parent_reads() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let looping = || {
        FnModel::new(|request| {
            let id = format!("l{}", request.messages.len());
            Ok(iris::model::ModelResponse {
                tool_calls: vec![iris::ToolUseBlock::new(
                    id,
                    "find_fact",
                    json!({"topic": "x"}),
                )],
                usage: iris::model::Usage::new(100, 0),
                ..Default::default()
            })
        })
    };
    let waiting = || ScriptedModel::new([Turn::call_with_id("s1", "wait_long", json!({}))]);
    for (child, status) in [
        (
            ChildAgent::new("worker", "Works.", child_agent("worker"))
                .model(looping())
                .max_steps(3),
            "max_steps",
        ),
        (
            ChildAgent::new("worker", "Works.", child_agent("worker"))
                .model(looping())
                .max_tokens(250),
            "max_tokens",
        ),
        (
            ChildAgent::new("worker", "Works.", child_agent("worker"))
                .model(waiting())
                .deadline(Duration::from_millis(100)),
            "deadline",
        ),
    ] {
        let runner = AgentRunner::new(
            parent(lets_children_start(), vec![child]),
            ScriptedModel::new([delegate("d1", "worker", "Work."), Turn::text("went on")]),
        );
        let outcome = runner
            .run("Go.", &cx(dir.path(), status))
            .await
            .expect("the parent run does not fail");
        let RunOutcome::Finished { text, state } = outcome else {
            panic!("{status}: the parent finishes: {outcome:?}");
        };
        assert_eq!(text, "went on");
        let result = result_of(&state, "d1");
        assert!(result.is_error(), "{status}");
        assert_eq!(result.data().expect("data")["status"], status);
        assert_eq!(state.children[0].ending, status);
    }
}

#[tokio::test]
async fn cancelling_the_parent_cancels_the_child() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let worker =
        ChildAgent::new("worker", "Works.", child_agent("worker")).model(ScriptedModel::new([
            Turn::call_with_id("s1", "wait_long", json!({})),
        ]));
    let runner = AgentRunner::new(
        parent(lets_children_start(), vec![worker]),
        ScriptedModel::new([delegate("d1", "worker", "Wait.")]),
    );
    let run_cx = cx(dir.path(), "cancel");
    let token = run_cx.cancellation().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        token.cancel();
    });
    let started = std::time::Instant::now();
    let outcome = runner.run("Go.", &run_cx).await.expect("runs");
    assert!(matches!(outcome, RunOutcome::Cancelled(_)), "{outcome:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the child stopped with the parent"
    );
}

#[tokio::test]
async fn depth_is_bounded_and_names_are_checked() {
    let dir = tempfile::tempdir().expect("a folder");
    // Default depth 1: a child is offered no children of its own.
    let (agent, models) = tree(2);
    let runner = AgentRunner::new(
        agent,
        ScriptedModel::new([delegate("d1", "level", "Charge 500."), Turn::text("done")]),
    );
    let _ = runner
        .run("Go.", &cx(dir.path(), "depth"))
        .await
        .expect("runs");
    let middle = models.last().expect("the middle level's model");
    assert!(
        !middle.requests()[0].offers("level"),
        "the child at the last level is offered no child"
    );

    // A child named as a tool, or as another child: refused, naming both.
    let mut registry = ToolRegistry::new();
    registry.register(FindFact).expect("registers");
    let err = Agent::builder(ToolExecutor::builder(registry).build().expect("builds"))
        .child(ChildAgent::new("find_fact", "Clashes.", child_agent("x")))
        .build()
        .expect_err("refused");
    let text = err.to_string();
    assert!(
        text.contains("tool `find_fact`") && text.contains("child agent `find_fact`"),
        "{text}"
    );
    let err = Agent::builder(
        ToolExecutor::builder(ToolRegistry::new())
            .build()
            .expect("builds"),
    )
    .child(ChildAgent::new("helper", "One.", child_agent("a")))
    .child(ChildAgent::new("helper", "Two.", child_agent("b")))
    .build()
    .expect_err("refused");
    let text = err.to_string();
    assert!(
        text.contains("agent `a`") && text.contains("agent `b`"),
        "{text}"
    );
}

#[tokio::test]
async fn a_nested_approval_is_decided_in_the_store_and_resumed_by_any_runner() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let store: Arc<dyn RunStore> = Arc::new(MemoryStore::new());
    let run_cx = cx(dir.path(), "stored");
    let (agent, _) = tree(2);
    let first = AgentRunner::new(
        agent,
        ScriptedModel::new([delegate("d1", "level", "Charge 500.")]),
    )
    .with_delegation(Delegation::new().max_depth(2))
    .with_store(Arc::clone(&store));
    let RunOutcome::Waiting(state) = first.run("Charge.", &run_cx).await.expect("runs") else {
        panic!("waits");
    };
    let pending = state.pending();
    let request = pending[0]
        .item
        .approval_request()
        .expect("approval")
        .clone();
    let (agent, _) = resumed_tree(2);
    let second = AgentRunner::new(agent, ScriptedModel::new([Turn::text("done")]))
        .with_delegation(Delegation::new().max_depth(2))
        .with_store(Arc::clone(&store));
    second
        .decide(
            run_cx.run_id(),
            "d1/d1/w1",
            ApprovalDecision::approve(&request),
        )
        .await
        .expect("recorded by its path");
    let outcome = second.resume_stored(&run_cx).await.expect("resumes");
    let RunOutcome::Finished { text, .. } = outcome else {
        panic!("finishes: {outcome:?}");
    };
    assert_eq!(text, "done");
    assert_eq!(charges(dir.path()), ["500"]);
    let _ = Value::Null;
}

/// Writes `files` (name, text) into `dir`.
fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("a folder");
        std::fs::write(path, text).expect("written");
    }
}

fn assembly() -> iris::assembly::Assembly {
    iris::assembly::Assembly::builder()
        .tool(Charge)
        .tool(FindFact)
        .build()
}

#[tokio::test]
async fn agent_files_declare_children_in_files_of_their_own() {
    let dir = tempfile::tempdir().expect("a folder");
    write_files(
        dir.path(),
        &[
            (
                "lead.yaml",
                "name: lead\ninstructions: Delegate.\npermissions: { other: allow, write: ask }\nagents:\n  - name: researcher\n    description: Finds facts.\n    file: team/researcher.yaml\n    max_steps: 4\n    concurrency_safe: true\n",
            ),
            (
                "team/researcher.yaml",
                "name: researcher\ninstructions: Find facts.\ntools: { functions: [find_fact, charge] }\npermissions: { write: allow }\n",
            ),
        ],
    );
    let agent = assembly()
        .load(dir.path().join("lead.yaml"))
        .expect("assembles");
    let child = agent.child("researcher").expect("declared");
    assert_eq!(child.description(), "Finds facts.");
    assert_eq!(child.agent().instructions(), Some("Find facts."));
    let model = Arc::new(ScriptedModel::new([
        delegate("d1", "researcher", "Find it and charge 7."),
        Turn::call_with_id("f1", "find_fact", json!({"topic": "x"})).and_call_with_id(
            "w1",
            "charge",
            json!({"cents": 7}),
        ),
        Turn::text("found and asked to charge"),
        Turn::text("done"),
    ]));
    let runner = AgentRunner::new(agent, Arc::clone(&model));
    let run_cx = cx(dir.path(), "file-run");
    let outcome = runner.run("Go.", &run_cx).await.expect("runs");
    // The lead's file asks before writes: the child's charge waits though
    // the child's own file allows it.
    let RunOutcome::Waiting(state) = outcome else {
        panic!("the child's write waits: {outcome:?}");
    };
    let pending = state.pending();
    assert_eq!(pending[0].id, "d1/w1");
    let request = pending[0]
        .item
        .approval_request()
        .expect("approval")
        .clone();
    let outcome = runner
        .resume(
            state,
            [("d1/w1".to_owned(), ApprovalDecision::approve(&request))],
            &run_cx,
        )
        .await
        .expect("resumes");
    assert!(
        matches!(outcome, RunOutcome::Finished { .. }),
        "{outcome:?}"
    );
    assert_eq!(charges(dir.path()), ["7"]);
}

#[test]
fn an_agent_files_children_are_checked_where_they_are_written() {
    let dir = tempfile::tempdir().expect("a folder");
    write_files(
        dir.path(),
        &[
            (
                "lead.yaml",
                "name: lead\ntools: { functions: [find_fact] }\nagents:\n  - name: find_fact\n    description: Clashes with a tool.\n    file: ok.yaml\n  - name: helper\n    description: Has a typo.\n    file: ok.yaml\n    max_step: 3\n  - name: missing\n    description: Names no file.\n    file: nowhere.yaml\n  - name: broken\n    description: A bad file.\n    file: broken.yaml\n  - name: looping\n    description: Names the lead.\n    file: lead.yaml\n",
            ),
            ("ok.yaml", "name: ok\n"),
            ("broken.yaml", "name: broken\nlimits: { max_steps: lots }\n"),
        ],
    );
    let err = assembly()
        .load(dir.path().join("lead.yaml"))
        .expect_err("refused");
    let text = err.to_string();
    for expected in [
        "lead.yaml:4:11: `agents[0].name`: the agent has a tool named `find_fact`",
        "lead.yaml:10:5: `agents[1].max_step`",
        "`agents[2].file`",
        "broken.yaml:2:",
        "`agents[3].file`: the child agent file has 1 problem(s)",
        "`agents[4].file`",
        "would never end loading",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
}

#[tokio::test]
async fn the_testing_kit_asserts_on_a_delegation_and_on_the_childs_own_trajectory() {
    let dir = tempfile::tempdir().expect("a folder");
    let researcher = ChildAgent::new("researcher", "Looks things up.", child_agent("researcher"))
        .model(ScriptedModel::new([
            Turn::call_with_id("f1", "find_fact", json!({"topic": "tides"})),
            Turn::text("Tides: 42."),
        ]));
    let runner = AgentRunner::new(
        parent(lets_children_start(), vec![researcher]),
        ScriptedModel::new([
            delegate("d1", "researcher", "Find the tides."),
            Turn::text("42"),
        ]),
    );
    let (_, transcript) = iris::testing::run_to_end(
        &runner,
        "Tides?",
        &cx(dir.path(), "kit"),
        iris::testing::approve_all(),
    )
    .await
    .expect("runs");
    transcript
        .assert_called_with("researcher", &json!({"task": "Find the tides."}))
        .assert_answer_contains("42");
    let child = transcript.child("researcher");
    assert_eq!(child.task.as_deref(), Some("Find the tides."));
    child
        .assert_called_with("find_fact", &json!({"topic": "tides"}))
        .assert_answer_contains("Tides: 42.");
    assert_eq!(child.ended, "finished");
}

#[tokio::test]
async fn an_edited_child_state_is_refused_before_any_item_runs() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let cashier = |cents: u64| {
        ScriptedModel::new([
            Turn::call_with_id("w1", "charge", json!({"cents": cents})),
            Turn::text("charged"),
        ])
    };
    let team = || {
        parent(
            lets_children_start(),
            vec![
                ChildAgent::new("cashier_a", "Charges.", child_agent("cashier_a"))
                    .model(cashier(100)),
                ChildAgent::new("cashier_b", "Charges.", child_agent("cashier_b"))
                    .model(cashier(200)),
            ],
        )
    };
    let runner = AgentRunner::new(
        team(),
        ScriptedModel::new(
            [delegate("a1", "cashier_a", "Charge 100.").and_call_with_id(
                "b1",
                "cashier_b",
                json!({"task": "Charge 200."}),
            )],
        ),
    );
    let run_cx = cx(dir.path(), "edited");
    let RunOutcome::Waiting(state) = runner.run("Go.", &run_cx).await.expect("runs") else {
        panic!("both writes wait");
    };
    let replies: Vec<(String, ApprovalDecision)> = state
        .pending()
        .into_iter()
        .map(|p| {
            let request = p.item.approval_request().expect("approval");
            (p.id.clone(), ApprovalDecision::approve(request))
        })
        .collect();
    // Another process gets the state with b's waiting write edited (what
    // it shows is its call, so the approvals given no longer fit it).
    let mut saved = iris::serde_json::to_value(&state).expect("writes");
    let child_history = saved["waiting"][1]["state"]["messages"]
        .as_array_mut()
        .expect("a history");
    let last = child_history.last_mut().expect("a last step");
    last["tool_calls"][0]["input"]["cents"] = json!(1);
    let edited: RunState = iris::serde_json::from_value(saved).expect("reads");
    // By default the seal refuses it; a host that trusts unsealed states
    // has the approvals checked against what the items show now.
    let sealed = AgentRunner::new(team(), ScriptedModel::new([Turn::text("done")]));
    let err = sealed
        .resume(edited.clone(), replies.clone(), &run_cx)
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("seal does not verify"), "{err}");
    let mut unsealed = edited;
    unsealed.seal = None;
    let elsewhere =
        AgentRunner::new(team(), ScriptedModel::new([Turn::text("done")])).trust_unsealed_states();
    let err = elsewhere
        .resume(unsealed, replies, &run_cx)
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("`b1/w1` does not fit it"), "{err}");
    assert!(charges(dir.path()).is_empty(), "not even a's write ran");
}

#[test]
fn a_child_file_named_outside_the_folder_is_refused_without_reading_it() {
    let dir = tempfile::tempdir().expect("a folder");
    write_files(
        dir.path(),
        &[(
            "lead.yaml",
            "name: lead\nagents:\n  - { name: a, description: Absolute., file: /etc/passwd }\n  - { name: b, description: Up., file: ../lead.yaml }\n",
        )],
    );
    let text = assembly()
        .load(dir.path().join("lead.yaml"))
        .expect_err("refused")
        .to_string();
    assert!(
        text.contains("`/etc/passwd` leaves the agent file's folder"),
        "{text}"
    );
    assert!(
        text.contains("`../lead.yaml` leaves the agent file's folder"),
        "{text}"
    );
}

#[tokio::test]
async fn a_guard_marked_tree_wide_judges_every_childs_calls_and_others_stay_the_parents() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let heard = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&heard);
    let executor = ToolExecutor::builder(ToolRegistry::new())
        .policy(RulePolicy::new().other(Rule::Allow).write(Rule::Allow))
        .hook(
            HookRegistration::before("no_charges", |input: &HookInput| {
                if input.tool.as_ref().is_some_and(|t| t.as_str() == "charge") {
                    BeforeAnswer::deny("no charges anywhere in this team")
                } else {
                    BeforeAnswer::Allow
                }
            })
            .tree_wide(),
        )
        .hook(HookRegistration::before(
            "parent_only",
            move |_: &HookInput| {
                counted.fetch_add(1, Ordering::SeqCst);
                BeforeAnswer::deny("the parent's own guard")
            },
        ))
        .build()
        .expect("builds");
    let cashier = ChildAgent::new("cashier", "Charges cards.", child_agent("cashier")).model(
        ScriptedModel::new([
            Turn::call_with_id("w1", "charge", json!({"cents": 5})).and_call_with_id(
                "f1",
                "find_fact",
                json!({"topic": "x"}),
            ),
            Turn::text("done"),
        ]),
    );
    let lead = Agent::builder(executor)
        .name("lead")
        .child(cashier)
        .build()
        .expect("builds");
    let runner = AgentRunner::new(
        lead,
        ScriptedModel::new([delegate("d1", "cashier", "Charge 5."), Turn::text("ok")]),
    );
    let RunOutcome::Finished { state, .. } = runner
        .run("Go.", &cx(dir.path(), "guarded"))
        .await
        .expect("runs")
    else {
        panic!("finishes");
    };
    let child = state.child_run(&RunId::new("guarded/d1")).expect("kept");
    let refused = result_of(child, "w1");
    assert_eq!(
        refused.error_kind().map(iris::ToolErrorKind::as_str),
        Some("denied_by_hook")
    );
    assert!(
        refused.text_content().contains("no charges anywhere"),
        "{}",
        refused.text_content()
    );
    assert!(
        !result_of(child, "f1").is_error(),
        "the guard let the read through"
    );
    assert_eq!(
        heard.load(Ordering::SeqCst),
        0,
        "a hook not marked stays the parent's"
    );
    assert!(charges(dir.path()).is_empty());

    let err = ToolExecutor::builder(ToolRegistry::new())
        .hook(
            HookRegistration::after("late", |_: &HookInput| iris::hooks::AfterAnswer::Nothing)
                .tree_wide(),
        )
        .build()
        .expect_err("refused");
    assert!(
        err.to_string()
            .contains("only `tool.before`, `model.before` and `model.after` guards"),
        "{err}"
    );
}

#[test]
fn an_agent_file_marks_only_a_before_hook_tree_wide() {
    let dir = tempfile::tempdir().expect("a folder");
    write_files(
        dir.path(),
        &[(
            "lead.yaml",
            "name: lead\nhooks:\n  - name: late\n    event: tool.after\n    tree_wide: true\n    handler: { type: command, command: [\"true\"] }\n",
        )],
    );
    let text = assembly()
        .load(dir.path().join("lead.yaml"))
        .expect_err("refused")
        .to_string();
    assert!(
        text.contains(
            "`hooks[0].tree_wide`: only `tool.before`, `model.before` and `model.after` hooks hold over child agents"
        ),
        "{text}"
    );
}
