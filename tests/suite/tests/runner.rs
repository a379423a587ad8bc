//! The run loop with a scripted model: a pause for approval saved as JSON
//! and resumed by a new runner, denial, no call run twice, run events once,
//! the step limit and cancellation in the middle of a tool.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use iris::agent::Agent;
use iris::agent::{AgentRunner, RunContext, RunOutcome, RunState};
use iris::assembly::Assembly;
use iris::hooks::{Hook, HookInput};
use iris::model::{Message, ModelResponse};
use iris::serde_json::json;
use iris::testing::{FnModel, RecordedRequest, ScriptedModel, Turn};
use iris::{ApprovalDecision, RunId, ToolUseBlock};

static READS: AtomicUsize = AtomicUsize::new(0);
static WRITES: AtomicUsize = AtomicUsize::new(0);
static STARTED: AtomicUsize = AtomicUsize::new(0);
static FINISHED: AtomicUsize = AtomicUsize::new(0);

/// Read the ledger.
#[iris::tool(read_only)]
fn read_ledger() -> &'static str {
    READS.fetch_add(1, Ordering::SeqCst);
    "balance: 10"
}

/// Write to the ledger.
#[iris::tool(write)]
fn write_ledger(
    /// The amount to add.
    amount: i64,
) -> String {
    WRITES.fetch_add(1, Ordering::SeqCst);
    format!("added {amount}")
}

/// Wait a long time.
#[iris::tool(read_only)]
async fn wait_long() -> &'static str {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "woke"
}

/// Counts run starts.
#[iris::hook_factory]
fn count_starts() -> Hook {
    Hook::run(|_input: &HookInput| {
        STARTED.fetch_add(1, Ordering::SeqCst);
    })
}

/// Counts run ends.
#[iris::hook_factory]
fn count_ends() -> Hook {
    Hook::run(|_input: &HookInput| {
        FINISHED.fetch_add(1, Ordering::SeqCst);
    })
}

/// A model that calls `read_ledger` on every step.
fn endless() -> FnModel {
    FnModel::new(|request| {
        let id = format!("c{}", request.messages.len());
        Ok(calls(vec![ToolUseBlock::new(id, "read_ledger", json!({}))]))
    })
}

/// Answers with `answers`, in order.
fn scripted(answers: Vec<ModelResponse>) -> ScriptedModel {
    ScriptedModel::new(answers.into_iter().map(Turn::from))
}

fn calls(calls: Vec<ToolUseBlock>) -> ModelResponse {
    ModelResponse {
        tool_calls: calls,
        ..ModelResponse::default()
    }
}

fn text(text: &str) -> ModelResponse {
    ModelResponse {
        text: Some(text.to_owned()),
        ..ModelResponse::default()
    }
}

const AGENT: &str = r"
name: ledger
instructions: Keep the ledger.
tools: { functions: [read_ledger, write_ledger, wait_long] }
hooks:
  - { name: starts, event: run.started, handler: { type: factory, factory: count_starts } }
  - { name: ends, event: run.finished, handler: { type: factory, factory: count_ends } }
permissions: { read_only: allow, write: ask }
limits: { max_steps: 3 }
";

fn agent() -> Agent {
    Assembly::builder()
        .tool(ReadLedger)
        .tool(WriteLedger)
        .tool(WaitLong)
        .hook_factory("count_starts", CountStarts)
        .hook_factory("count_ends", CountEnds)
        .build()
        .parse(AGENT, Path::new("agents/ledger.yaml"))
        .expect("the agent assembles")
}

fn counts() -> [usize; 4] {
    [&READS, &WRITES, &STARTED, &FINISHED].map(|c| c.load(Ordering::SeqCst))
}

/// The tests share counters: one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn step_one() -> ModelResponse {
    calls(vec![
        ToolUseBlock::new("r1", "read_ledger", json!({})),
        ToolUseBlock::new("w1", "write_ledger", json!({"amount": 5})),
    ])
}

async fn paused(dir: &Path) -> (RunState, [usize; 4]) {
    let before = counts();
    let runner = AgentRunner::new(agent(), scripted(vec![step_one()]));
    let cx = RunContext::new(dir, RunId::new("run-1"));
    let outcome = runner.run("Add 5 to the ledger.", &cx).await.expect("runs");
    let RunOutcome::Waiting(state) = outcome else {
        panic!("expected a pause, got {outcome:?}");
    };
    (state, before)
}

#[tokio::test]
async fn a_paused_run_resumes_from_json_in_a_new_runner() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let (state, before) = paused(dir.path()).await;
    assert_eq!(
        state.finished.len(),
        1,
        "the read finished before the pause"
    );
    assert_eq!(state.waiting.len(), 1);
    assert_eq!(
        state
            .approvals()
            .next()
            .expect("a call waits for approval")
            .tool
            .as_str(),
        "write_ledger"
    );
    let saved = iris::serde_json::to_string(&state).expect("a state serializes");

    // Another process: a new agent and runner from the same file.
    let restored: RunState = iris::serde_json::from_str(&saved).expect("and comes back");
    assert_eq!(restored, state);
    let model = scripted(vec![text("Added 5; the balance was 10.")]);
    let runner = AgentRunner::new(agent(), model);
    let cx = RunContext::new(dir.path(), RunId::new("run-1"));
    let approve = ApprovalDecision::approve(
        restored
            .approvals()
            .next()
            .expect("a call waits for approval"),
    );
    let outcome = runner
        .resume(restored, [("w1".to_owned(), approve)], &cx)
        .await
        .expect("resumes");
    let RunOutcome::Finished { text, state } = outcome else {
        panic!("expected the end, got {outcome:?}");
    };
    assert_eq!(text, "Added 5; the balance was 10.");
    let after = counts();
    assert_eq!(
        after[0] - before[0],
        1,
        "the read ran once, before the pause"
    );
    assert_eq!(
        after[1] - before[1],
        1,
        "the write ran once, after the approval"
    );
    assert_eq!(after[2] - before[2], 1, "run.started once");
    assert_eq!(after[3] - before[3], 1, "run.finished once, at the end");
    // One result per call, in call order, then the answer.
    let roles: Vec<String> = state
        .messages
        .iter()
        .map(|m| match m {
            Message::User { .. } => "user".to_owned(),
            Message::Assistant { .. } => "assistant".to_owned(),
            Message::Tool { call_id, .. } => format!("tool {call_id}"),
        })
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool r1", "tool w1", "assistant"]
    );
}

#[tokio::test]
async fn a_denied_call_gives_the_model_the_denial() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let (state, before) = paused(dir.path()).await;
    let runner = AgentRunner::new(agent(), scripted(vec![text("Not added.")]));
    let cx = RunContext::new(dir.path(), RunId::new("run-1"));
    let deny = ApprovalDecision::deny("not today");
    let outcome = runner
        .resume(state, [("w1".to_owned(), deny)], &cx)
        .await
        .expect("resumes");
    let state = outcome.state();
    let denial = state
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool {
                call_id, result, ..
            } if call_id == "w1" => Some(result.clone()),
            _ => None,
        })
        .expect("the write has a result");
    assert!(denial.text_content().contains("not today"), "{denial:?}");
    assert_eq!(counts()[1], before[1], "the write never ran");
}

#[tokio::test]
async fn changed_arguments_are_refused_and_nothing_runs() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let (state, before) = paused(dir.path()).await;
    let approve =
        ApprovalDecision::approve(state.approvals().next().expect("a call waits for approval"));
    let state = saved_and_edited(&state, |saved| {
        write_call(saved)["input"] = json!({"amount": 5000});
    })
    .expect("the history's call may be edited; what it shows follows it");
    assert_eq!(
        state.approvals().next().expect("it waits").arguments,
        json!({"amount": 5000}),
        "what is shown is what the call holds"
    );
    let runner = AgentRunner::new(agent(), scripted(vec![text("unused")])).trust_unsealed_states();
    let cx = RunContext::new(dir.path(), RunId::new("run-1"));
    let err = runner
        .resume(state, [("w1".to_owned(), approve)], &cx)
        .await
        .expect_err("the approval was for 5, not 5000");
    assert!(err.to_string().contains("w1"), "{err}");
    assert_eq!(counts()[1], before[1], "the write never ran");
}

#[tokio::test]
async fn decisions_must_match_the_waiting_calls() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let (state, _) = paused(dir.path()).await;
    let runner = AgentRunner::new(agent(), scripted(Vec::new()));
    let cx = RunContext::new(dir.path(), RunId::new("run-1"));
    let none: [(String, ApprovalDecision); 0] = [];
    let err = runner
        .resume(state.clone(), none, &cx)
        .await
        .expect_err("w1 has no decision");
    assert!(err.to_string().contains("`w1` waits for a person"), "{err}");
    let err = runner
        .resume(
            state,
            [
                ("w1".to_owned(), ApprovalDecision::deny("no")),
                ("zz".to_owned(), ApprovalDecision::deny("no")),
            ],
            &cx,
        )
        .await
        .expect_err("zz does not wait");
    assert!(err.to_string().contains("`zz`"), "{err}");
}

#[tokio::test]
async fn the_step_limit_ends_the_run() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let before = counts();
    let runner = AgentRunner::new(agent(), endless());
    let cx = RunContext::new(dir.path(), RunId::new("run-steps"));
    let outcome = runner.run("Read forever.", &cx).await.expect("runs");
    let RunOutcome::MaxSteps(state) = outcome else {
        panic!("expected the step limit, got {outcome:?}");
    };
    assert_eq!(state.step, 3);
    assert_eq!(counts()[0] - before[0], 3);
    assert_eq!(counts()[3] - before[3], 1, "run.finished at the real end");
}

#[tokio::test]
async fn cancellation_stops_a_tool_in_flight() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let model = scripted(vec![
        calls(vec![ToolUseBlock::new("long", "wait_long", json!({}))]),
        text("unused"),
    ]);
    let runner = AgentRunner::new(agent(), model);
    let cx = RunContext::new(dir.path(), RunId::new("run-cancel"));
    let token = cx.cancellation().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        token.cancel();
    });
    let started = std::time::Instant::now();
    let outcome = runner.run("Wait.", &cx).await.expect("runs");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the tool was not cancelled"
    );
    let RunOutcome::Cancelled(state) = outcome else {
        panic!("expected cancellation, got {outcome:?}");
    };
    let cancelled = state.messages.iter().any(|m| {
        matches!(m, Message::Tool { call_id, result, .. } if call_id == "long" && result.is_error())
    });
    assert!(cancelled, "{:?}", state.messages);
}

#[tokio::test]
async fn each_step_asks_with_instructions_history_and_tools() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let model = std::sync::Arc::new(scripted(vec![
        calls(vec![ToolUseBlock::new("r1", "read_ledger", json!({}))]),
        text("The balance is 10."),
    ]));
    let runner = AgentRunner::new(agent(), std::sync::Arc::clone(&model));
    let cx = RunContext::new(dir.path(), RunId::new("run-ask"));
    let outcome = runner.run("What is the balance?", &cx).await.expect("runs");
    assert!(
        matches!(outcome, RunOutcome::Finished { .. }),
        "{outcome:?}"
    );
    let asked = model.requests();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0].instructions.as_deref(), Some("Keep the ledger."));
    assert!(
        asked[0].offers("read_ledger") && asked[0].offers("write_ledger"),
        "{:?}",
        asked[0].tool_names()
    );
    assert_eq!(asked[1].messages.len(), 3, "question, calls, result");
}

/// Return a long report.
#[iris::tool(read_only)]
fn long_report(
    /// Which report.
    name: String,
) -> String {
    format!("{name}: {}", "lorem ipsum ".repeat(200))
}

/// The tool texts each request carried: (call id, text) per result.
fn tool_texts(request: &RecordedRequest) -> Vec<(String, String)> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool {
                call_id, result, ..
            } => Some((call_id.clone(), result.text_content())),
            _ => None,
        })
        .collect()
}

/// Past the budget, an old observation goes to the model as a preview with
/// its handle, `read_history` gives it back whole, and the stored history
/// keeps everything.
#[tokio::test]
async fn old_observations_become_previews_and_read_back_whole() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let agent = Assembly::builder()
        .tool(LongReport)
        .build()
        .parse(
            "name: reports\ntools: { functions: [long_report] }\ncontext_policy: { results_budget: 3000 }\n",
            Path::new("agents/reports.yaml"),
        )
        .expect("assembles");
    assert!(agent.registry().resolve("read_history").is_some());
    let report = |id: &str, name: &str| {
        calls(vec![ToolUseBlock::new(
            id,
            "long_report",
            json!({"name": name}),
        )])
    };
    let model = std::sync::Arc::new(scripted(vec![
        report("b1", "north"),
        report("b2", "south"),
        calls(vec![ToolUseBlock::new(
            "h1",
            "read_history",
            json!({"call_id": "b1"}),
        )]),
        text("Both read."),
    ]));
    let runner = AgentRunner::new(agent, std::sync::Arc::clone(&model));
    let cx = RunContext::new(dir.path(), RunId::new("run-history"));
    let outcome = runner.run("Read both reports.", &cx).await.expect("runs");
    let RunOutcome::Finished { state, .. } = outcome else {
        panic!("expected the end, got {outcome:?}");
    };
    let seen: Vec<_> = model.requests().iter().map(tool_texts).collect();
    let third = &seen[2];
    assert!(
        third[0].1.contains("shortened to save context"),
        "{third:?}"
    );
    assert!(
        third[0].1.contains(r#"read_history {"call_id": "b1"}"#),
        "{third:?}"
    );
    assert!(third[1].1.len() > 2000, "the latest result stays whole");
    // The stored history keeps everything, and the read-back is whole.
    let full = |id: &str| {
        state.messages.iter().find_map(|m| match m {
            Message::Tool {
                call_id, result, ..
            } if call_id == id => Some(result.text_content()),
            _ => None,
        })
    };
    let original = full("b1").expect("b1 is kept");
    assert!(original.len() > 2000 && !original.contains("shortened"));
    assert_eq!(full("h1").expect("read back"), original);
}

/// A pause of run `run` on `agent`, which keeps its ledger across runners.
async fn paused_on(agent: &std::sync::Arc<Agent>, dir: &Path, run: &str) -> RunState {
    let runner = AgentRunner::new(std::sync::Arc::clone(agent), scripted(vec![step_one()]));
    let cx = RunContext::new(dir, RunId::new(run));
    match runner.run("Add 5 to the ledger.", &cx).await.expect("runs") {
        RunOutcome::Waiting(state) => state,
        other => panic!("expected a pause, got {other:?}"),
    }
}

/// A resume by a runner that trusts unsealed states: the binding tests
/// check what a state can say of itself, the line that holds where no seal
/// does (by default a seal refuses every edit first: see
/// `run_control_trust`).
async fn resume_on(
    agent: &std::sync::Arc<Agent>,
    dir: &Path,
    run: &str,
    state: RunState,
    decision: ApprovalDecision,
) -> Result<RunOutcome, iris::agent::RunError> {
    let runner = AgentRunner::new(std::sync::Arc::clone(agent), scripted(vec![text("Done.")]))
        .trust_unsealed_states();
    let cx = RunContext::new(dir, RunId::new(run));
    runner
        .resume(state, [("w1".to_owned(), decision)], &cx)
        .await
}

/// Finding: a saved state whose shown request (tool, arguments) was edited
/// while its approval id was kept ran the hidden call when what was shown
/// was approved, in the same process and in a new one. A state now keeps
/// no shown request: it is derived from the history's call. A state of
/// the older shape, which keeps a copy, loads only when the copy is what
/// the call derives.
#[tokio::test]
async fn an_edited_request_is_refused_and_the_hidden_call_never_runs() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let agent = std::sync::Arc::new(agent());
    let state = paused_on(&agent, dir.path(), "run-1").await;
    let before = counts();
    let mut older = state.clone();
    older.version = 2;
    let err = saved_and_edited(&older, |saved| {
        saved["waiting"][0]["request"]["arguments"] = json!({"amount": 1});
    })
    .expect_err("what is shown is not what would run");
    assert!(err.to_string().contains("edited"), "{err}");
    // Call and request both edited, the id kept: refused as well.
    let err = saved_and_edited(&older, |saved| {
        saved["waiting"][0]["request"]["arguments"] = json!({"amount": 1});
        saved["waiting"][0]["call"]["input"] = json!({"amount": 1});
        write_call(saved)["input"] = json!({"amount": 1});
    })
    .expect_err("the approval id binds the arguments");
    assert!(err.to_string().contains("edited"), "{err}");
    // The call edited in the current shape: what is shown follows it, and
    // in the process that paused the run the edit is refused.
    let edited = saved_and_edited(&state, |saved| {
        write_call(saved)["input"] = json!({"amount": 1});
    })
    .expect("it reads");
    let approve = ApprovalDecision::approve(
        edited
            .approvals()
            .next()
            .expect("a call waits for approval"),
    );
    let err = resume_on(&agent, dir.path(), "run-1", edited, approve)
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("not the state"), "{err}");
    assert_eq!(counts()[1], before[1], "no write ran");
    // The refusals took nothing: the state as returned still resumes, and
    // an older-shape copy of it reads back as the same state.
    let unedited = saved_and_edited(&older, |_| {}).expect("an intact older state reads");
    assert_eq!(unedited.waiting, state.waiting);
    let approve =
        ApprovalDecision::approve(state.approvals().next().expect("a call waits for approval"));
    resume_on(&agent, dir.path(), "run-1", state, approve)
        .await
        .expect("the state as returned resumes");
    assert_eq!(counts()[1], before[1] + 1, "the approved write ran once");
}

/// Finding: a state whose `run_id` was changed to another live run resumed
/// in that run (and `read_history` returned the other run's data).
#[tokio::test]
async fn a_state_never_resumes_another_run() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let agent = std::sync::Arc::new(agent());
    let first = paused_on(&agent, dir.path(), "run-1").await;
    let second = paused_on(&agent, dir.path(), "run-2").await;
    let before = counts();
    let approve =
        ApprovalDecision::approve(first.approvals().next().expect("a call waits for approval"));

    // The context names another run than the state.
    let err = resume_on(&agent, dir.path(), "run-2", first.clone(), approve.clone())
        .await
        .expect_err("a state resumes its own run");
    assert!(err.to_string().contains("run-2"), "{err}");

    // The state renamed to the other run: its requests no longer match.
    let mut moved = first.clone();
    moved.run_id = RunId::new("run-2");
    let err = resume_on(&agent, dir.path(), "run-2", moved, approve.clone())
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("another run"), "{err}");

    // Run 2's own state, with run 1's history spliced in.
    let mut spliced = second.clone();
    spliced.messages.insert(0, first.messages[0].clone());
    let approve_second = ApprovalDecision::approve(
        second
            .approvals()
            .next()
            .expect("a call waits for approval"),
    );
    let err = resume_on(&agent, dir.path(), "run-2", spliced, approve_second.clone())
        .await
        .expect_err("not the state run 2 paused with");
    assert!(err.to_string().contains("not the state"), "{err}");
    assert_eq!(counts()[1], before[1], "no write ran");

    // Each state resumes its own run, once.
    resume_on(&agent, dir.path(), "run-1", first.clone(), approve.clone())
        .await
        .expect("run 1 resumes");
    resume_on(&agent, dir.path(), "run-2", second, approve_second)
        .await
        .expect("run 2 resumes");
    assert_eq!(counts()[1], before[1] + 2);
}

/// Finding: one state and one approval resumed any number of times (a
/// delete ran four times). In the process that paused the run, a pause is
/// resumed once.
#[tokio::test]
async fn a_pause_resumes_once() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let agent = std::sync::Arc::new(agent());
    // A model that pauses again after the resume keeps the run alive.
    let state = paused_on(&agent, dir.path(), "run-1").await;
    let runner = AgentRunner::new(
        std::sync::Arc::clone(&agent),
        scripted(vec![calls(vec![ToolUseBlock::new(
            "w2",
            "write_ledger",
            json!({"amount": 1}),
        )])]),
    );
    let cx = RunContext::new(dir.path(), RunId::new("run-1"));
    let approve =
        ApprovalDecision::approve(state.approvals().next().expect("a call waits for approval"));
    let before = counts();
    let again = runner
        .resume(state.clone(), [("w1".to_owned(), approve.clone())], &cx)
        .await
        .expect("resumes");
    assert!(matches!(again, RunOutcome::Waiting(_)), "{again:?}");
    let err = runner
        .resume(state, [("w1".to_owned(), approve)], &cx)
        .await
        .expect_err("that pause is over");
    assert!(err.to_string().contains("not the state"), "{err}");
    assert_eq!(counts()[1], before[1] + 1, "the write ran once");
}

/// Findings: a state's pending slot held an always-allowed call that ran
/// instead of the approved one, and a state's `disclosed` list unlocked
/// deferred tools without `tool_search`. In the process that paused the
/// run, any edit of the state is refused, and nothing runs.
#[tokio::test]
async fn a_state_with_a_smuggled_call_or_disclosure_is_refused() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let agent = std::sync::Arc::new(agent());
    let state = paused_on(&agent, dir.path(), "run-1").await;
    let before = counts();
    let approve =
        ApprovalDecision::approve(state.approvals().next().expect("a call waits for approval"));

    let smuggled = saved_and_edited(&state, |saved| {
        write_call(saved)["name"] = json!("read_ledger");
        write_call(saved)["input"] = json!({});
    })
    .expect("it reads");
    let err = resume_on(&agent, dir.path(), "run-1", smuggled, approve.clone())
        .await
        .expect_err("the pending call is the one approved");
    assert!(err.to_string().contains("does not fit"), "{err}");
    // Only the name edited: the approval fits what is shown (the tool it
    // names is kept with the item), and the call names another tool.
    let renamed = saved_and_edited(&state, |saved| {
        write_call(saved)["name"] = json!("read_ledger");
    })
    .expect("it reads");
    let elsewhere = std::sync::Arc::new(self::agent());
    let err = resume_on(&elsewhere, dir.path(), "run-1", renamed, approve.clone())
        .await
        .expect_err("the call is not the tool that was approved");
    assert!(err.to_string().contains("names a tool"), "{err}");

    let mut unlocked = state.clone();
    unlocked
        .disclosed
        .push(iris::definition::ToolName::new("wait_long").expect("a name"));
    let err = resume_on(&agent, dir.path(), "run-1", unlocked, approve.clone())
        .await
        .expect_err("disclosures come from tool_search only");
    assert!(err.to_string().contains("not the state"), "{err}");
    assert_eq!(counts(), before, "nothing ran");

    resume_on(&agent, dir.path(), "run-1", state, approve)
        .await
        .expect("the state as returned resumes");
}

/// Findings, in a process that did not pause the run: an edited
/// `disclosed` list unlocked deferred tools, and an edited history or a
/// smuggled call was admitted. With the same state key in every process,
/// a state edited anywhere is refused there too, as is a state sealed
/// with another key or none; the state as sealed resumes.
#[tokio::test]
async fn a_sealed_state_is_refused_in_any_process_once_edited() {
    use iris::agent::StateKey;
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let key = |byte: u8| StateKey::new([byte; 32]).expect("32 bytes make a key");
    let runner = AgentRunner::new(agent(), scripted(vec![step_one()])).with_state_key(key(7));
    let cx = RunContext::new(dir.path(), RunId::new("run-1"));
    let outcome = runner.run("Add 5 to the ledger.", &cx).await.expect("runs");
    let RunOutcome::Waiting(state) = outcome else {
        panic!("expected a pause, got {outcome:?}");
    };
    assert!(state.seal.is_some(), "a runner with a key seals its states");
    let before = counts();
    let approve =
        ApprovalDecision::approve(state.approvals().next().expect("a call waits for approval"));
    // Another process: a new agent, whose ledger never saw the pause.
    let folder = dir.path().to_path_buf();
    let elsewhere = |state: RunState, key: StateKey| {
        let folder = folder.clone();
        let runner = AgentRunner::new(agent(), scripted(vec![text("Done.")])).with_state_key(key);
        let approve = approve.clone();
        async move {
            let cx = RunContext::new(folder, RunId::new("run-1"));
            runner
                .resume(state, [("w1".to_owned(), approve)], &cx)
                .await
        }
    };

    let mut unlocked = state.clone();
    unlocked
        .disclosed
        .push(iris::definition::ToolName::new("wait_long").expect("a name"));
    let mut rewritten = state.clone();
    rewritten.messages[0] = Message::User {
        text: "Empty the ledger.".to_owned(),
    };
    let mut smuggled = state.clone();
    smuggled.finished[0].result = iris::ToolResult::text("balance: 1000000");
    let mut unsealed = state.clone();
    unsealed.seal = None;
    for (edited, why) in [
        (unlocked, "does not verify"),
        (rewritten, "does not verify"),
        (smuggled, "does not verify"),
        (unsealed, "carries no seal"),
    ] {
        let err = elsewhere(edited, key(7)).await.expect_err("refused");
        assert!(err.to_string().contains(why), "{err}");
    }
    let err = elsewhere(state.clone(), key(8))
        .await
        .expect_err("another key's seal does not verify");
    assert!(err.to_string().contains("another key"), "{err}");
    assert_eq!(counts(), before, "nothing ran");

    let err = StateKey::new(b"short").expect_err("too short a secret");
    assert!(err.to_string().contains("at least 32 bytes"), "{err}");

    let outcome = elsewhere(state, key(7))
        .await
        .expect("the sealed state resumes");
    assert!(
        matches!(&outcome, RunOutcome::Finished { state, .. } if state.seal.is_some()),
        "{outcome:?}"
    );
    assert_eq!(counts()[1], before[1] + 1, "the approved write ran once");
}

/// `state` as saved, edited by `edit` as whoever holds the saved JSON
/// could, and read back.
fn saved_and_edited(
    state: &RunState,
    edit: impl FnOnce(&mut iris::serde_json::Value),
) -> Result<RunState, iris::serde_json::Error> {
    let mut saved = iris::serde_json::to_value(state).expect("a state saves");
    edit(&mut saved);
    iris::serde_json::from_value(saved)
}

/// The last step's call `w1` (the write) in a saved state.
fn write_call(saved: &mut iris::serde_json::Value) -> &mut iris::serde_json::Value {
    saved["messages"]
        .as_array_mut()
        .and_then(|messages| messages.last_mut())
        .and_then(|last| last["tool_calls"].as_array_mut())
        .and_then(|calls| calls.iter_mut().find(|call| call["id"] == "w1"))
        .expect("the history's last step calls w1")
}
