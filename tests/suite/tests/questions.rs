//! Questions to a person (`ask_question`), run control beside approvals:
//! offered only where a person can answer, never seen by hooks, middleware
//! or the permission policy, bound to (run, call, questions) as approvals
//! are, answered or declined or expired or cancelled, across processes
//! through a state or a store, and never an approval.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use iris::Next;
use iris::agent::store::{MemoryStore, RunStore, StoreError};
use iris::agent::{
    Agent, AgentRunner, Answer, QuestionReply, Questions, Reply, RunContext, RunError, RunOutcome,
    RunState, Wait,
};
use iris::hooks::{BeforeAnswer, HookInput, HookRegistration};
use iris::middleware::MiddlewareError;
use iris::observe::RunEvent;
use iris::serde_json::{Value, json};
use iris::testing::{EventLog, ScriptedModel, Turn, answers, decline_all, run_answering};
use iris::{
    ApprovalDecision, Rule, RulePolicy, RunId, ToolCall, ToolExecutor, ToolRegistry, ToolResult,
};

static WRITES: AtomicUsize = AtomicUsize::new(0);
static WRAPPED: AtomicUsize = AtomicUsize::new(0);
static BEFORE: AtomicUsize = AtomicUsize::new(0);

/// Write a note.
#[iris::tool(write)]
fn write_note(
    /// The note.
    text: String,
) -> String {
    WRITES.fetch_add(1, Ordering::SeqCst);
    format!("wrote {text}")
}

/// Counts every call it wraps.
#[iris::middleware]
async fn counting(call: ToolCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
    WRAPPED.fetch_add(1, Ordering::SeqCst);
    next.run(call).await
}

/// The tests share counters: one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// An agent whose hooks deny every call and whose middleware counts every
/// call: what reaches the chain is seen.
fn guarded(events: &EventLog) -> Agent {
    let mut registry = ToolRegistry::new();
    registry.register(WriteNote).expect("registers");
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Ask))
        .hook(HookRegistration::before("deny_all", |_: &HookInput| {
            BEFORE.fetch_add(1, Ordering::SeqCst);
            BeforeAnswer::deny("nothing runs here")
        }))
        .middleware(Counting)
        .observer(events.clone())
        .build()
        .expect("the executor builds");
    Agent::builder(executor)
        .name("asker")
        .build()
        .expect("the agent builds")
}

/// An agent with a write that waits for approval and no hooks.
fn writer() -> Agent {
    let mut registry = ToolRegistry::new();
    registry.register(WriteNote).expect("registers");
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Ask))
        .build()
        .expect("the executor builds");
    Agent::builder(executor)
        .name("writer")
        .build()
        .expect("the agent builds")
}

fn database_question() -> Value {
    json!({"questions": [{
        "question": "Which database should the service use?",
        "header": "Database",
        "options": [
            {"label": "Postgres", "description": "the team's default"},
            {"label": "SQLite", "description": "one file, no server"}
        ],
        "multi_select": false
    }]})
}

fn ask(id: &str) -> Turn {
    Turn::call_with_id(id, "ask_question", database_question())
}

fn cx(dir: &std::path::Path, run: &str) -> RunContext {
    RunContext::new(dir, RunId::new(run))
}

/// The result the model read for call `id`.
fn result_of(state: &RunState, id: &str) -> ToolResult {
    state
        .messages
        .iter()
        .find_map(|m| match m {
            iris::model::Message::Tool {
                call_id, result, ..
            } if call_id == id => Some(result.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("call `{id}` has no result in {:#?}", state.messages))
}

async fn waiting_on_question(runner: &AgentRunner, cx: &RunContext) -> RunState {
    match runner.run("Set up the service.", cx).await.expect("runs") {
        RunOutcome::Waiting(state) => state,
        other => panic!("expected the question to wait, got {other:?}"),
    }
}

#[tokio::test]
async fn ask_question_is_offered_only_where_a_person_can_answer() {
    let dir = tempfile::tempdir().expect("a folder");
    let model = Arc::new(ScriptedModel::new([Turn::text("done")]));
    let runner = AgentRunner::new(writer(), Arc::clone(&model));
    runner
        .run("Hi.", &cx(dir.path(), "r-off"))
        .await
        .expect("runs");
    assert!(!model.requests()[0].offers("ask_question"));

    let model = Arc::new(ScriptedModel::new([Turn::text("done")]));
    let runner = AgentRunner::new(writer(), Arc::clone(&model)).with_questions(Questions::new());
    runner
        .run("Hi.", &cx(dir.path(), "r-on"))
        .await
        .expect("runs");
    let request = &model.requests()[0];
    let spec = request
        .tools
        .iter()
        .find(|t| t.name().as_str() == "ask_question")
        .expect("offered");
    assert!(spec.strict(), "strict on every provider");
    for wire in [
        iris::provider::openai_chat(spec).tool,
        iris::provider::anthropic(spec).tool,
    ] {
        assert!(wire.to_string().contains("multi_select"), "{wire}");
    }
}

#[tokio::test]
async fn a_question_is_run_control_no_hook_middleware_or_policy_sees_it() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let events = EventLog::new();
    let before = (
        BEFORE.load(Ordering::SeqCst),
        WRAPPED.load(Ordering::SeqCst),
    );
    let model = ScriptedModel::new([ask("q1"), Turn::text("Postgres it is.")]);
    let runner = AgentRunner::new(guarded(&events), model).with_questions(Questions::new());
    let cx = cx(dir.path(), "r-control");
    let state = waiting_on_question(&runner, &cx).await;
    assert_eq!(state.waiting.len(), 1);
    let item = &state.waiting[0];
    assert_eq!(item.kind(), "question");
    let Wait::Question { request } = item.wait() else {
        panic!("a question waits");
    };
    assert_eq!(request.call_id, "q1");
    let reply = QuestionReply::answer(request, vec![Answer::choose("Postgres")]);
    let outcome = runner
        .resume(state.clone(), [("q1".to_owned(), reply)], &cx)
        .await
        .expect("resumes");
    let RunOutcome::Finished { state, .. } = outcome else {
        panic!("finishes");
    };
    let read = result_of(&state, "q1");
    assert!(!read.is_error());
    assert_eq!(read.data().expect("data")["status"], "answered");
    assert!(
        read.text_content().contains("-> Postgres"),
        "{}",
        read.text_content()
    );
    assert_eq!(
        (
            BEFORE.load(Ordering::SeqCst),
            WRAPPED.load(Ordering::SeqCst)
        ),
        before,
        "a deny-all hook and a counting middleware saw nothing"
    );
    let heard = events.wait_until(
        |events| {
            events
                .iter()
                .any(|e| matches!(e, RunEvent::QuestionAnswered { .. }))
        },
        Duration::from_secs(5),
    );
    assert!(heard.iter().any(
        |e| matches!(e, RunEvent::QuestionAsked { call_id, questions: 1, .. } if call_id == "q1")
    ));
    assert!(heard.iter().any(|e| matches!(e, RunEvent::QuestionAnswered { call_id, ending, .. } if call_id == "q1" && ending.as_str() == "answered")));
}

#[tokio::test]
async fn questions_that_do_not_fit_are_invalid_arguments_and_nothing_waits() {
    let dir = tempfile::tempdir().expect("a folder");
    let model = ScriptedModel::new([
        Turn::call_with_id(
            "q1",
            "ask_question",
            json!({"questions": [{"question": "Which?", "header": "Pick", "options": ["only one"], "multi_select": false}]}),
        ),
        Turn::text("fine"),
    ]);
    let runner = AgentRunner::new(writer(), model).with_questions(Questions::new());
    let outcome = runner
        .run("Go.", &cx(dir.path(), "r-bad"))
        .await
        .expect("runs");
    let RunOutcome::Finished { state, .. } = outcome else {
        panic!("no pause for questions that do not fit: {outcome:?}");
    };
    let read = result_of(&state, "q1");
    assert_eq!(
        read.error_kind().map(iris::ToolErrorKind::as_str),
        Some("invalid_arguments")
    );
    assert!(
        read.text_content().contains("offer 2 to 4"),
        "{}",
        read.text_content()
    );
}

#[tokio::test]
async fn options_as_plain_strings_are_accepted() {
    let dir = tempfile::tempdir().expect("a folder");
    let model = ScriptedModel::new([
        Turn::call_with_id(
            "q1",
            "ask_question",
            json!({"questions": [{"question": "Which?", "header": "Pick", "options": ["red", "blue"]}]}),
        ),
        Turn::text("fine"),
    ]);
    let runner = AgentRunner::new(writer(), model).with_questions(Questions::new());
    let state = waiting_on_question(&runner, &cx(dir.path(), "r-plain")).await;
    let request = state.questions().next().expect("a question waits");
    assert_eq!(request.questions[0].options[1].label, "blue");
    assert!(!request.questions[0].multi_select);
}

#[tokio::test]
async fn an_answer_for_another_run_call_or_question_set_is_refused_and_the_run_keeps_waiting() {
    let dir = tempfile::tempdir().expect("a folder");
    let model = ScriptedModel::new([ask("q1"), Turn::text("ok")]);
    let runner = AgentRunner::new(writer(), model).with_questions(Questions::new());
    let cx = cx(dir.path(), "r-bound");
    let state = waiting_on_question(&runner, &cx).await;
    let request = state.questions().next().expect("waits").clone();

    // Another question set: an answer naming a question id not shown.
    let forged = QuestionReply::Answered {
        question_id: "0".repeat(64),
        answers: vec![Answer::choose("Postgres")],
    };
    let err = runner
        .resume(state.clone(), [("q1".to_owned(), forged)], &cx)
        .await
        .expect_err("refused");
    assert!(matches!(err, RunError::WrongReply { .. }), "{err}");

    // Another call.
    let err = runner
        .resume(
            state.clone(),
            [(
                "q9".to_owned(),
                QuestionReply::answer(&request, vec![Answer::choose("Postgres")]),
            )],
            &cx,
        )
        .await
        .expect_err("refused");
    assert!(matches!(err, RunError::UnknownDecision { .. }), "{err}");

    // An option that was not offered, several for a single choice.
    for answer in [
        Answer::choose("MySQL"),
        Answer::choose_all(["Postgres", "SQLite"]),
    ] {
        let err = runner
            .resume(
                state.clone(),
                [(
                    "q1".to_owned(),
                    QuestionReply::answer(&request, vec![answer]),
                )],
                &cx,
            )
            .await
            .expect_err("refused");
        assert!(matches!(err, RunError::WrongReply { .. }), "{err}");
    }

    // Another run: the same questions asked by another run's call.
    let other = RunState {
        run_id: RunId::new("r-other"),
        ..state.clone()
    };
    let err = runner
        .resume(
            other,
            [(
                "q1".to_owned(),
                QuestionReply::answer(&request, vec![Answer::choose("Postgres")]),
            )],
            &RunContext::new(dir.path(), RunId::new("r-other")),
        )
        .await
        .expect_err("refused");
    assert!(matches!(err, RunError::StateMismatch { .. }), "{err}");

    // The state still resumes with a fitting answer, in words.
    let outcome = runner
        .resume(
            state,
            [(
                "q1".to_owned(),
                QuestionReply::answer(&request, vec![Answer::text("whatever ops runs")]),
            )],
            &cx,
        )
        .await
        .expect("the run still waited");
    let RunOutcome::Finished { state, .. } = outcome else {
        panic!("finishes");
    };
    assert!(
        result_of(&state, "q1")
            .text_content()
            .contains("\"whatever ops runs\"")
    );
}

#[tokio::test]
async fn four_endings_the_model_can_tell_apart() {
    let dir = tempfile::tempdir().expect("a folder");
    for (ending, reply) in [
        ("declined", Some(QuestionReply::decline())),
        ("cancelled", Some(QuestionReply::cancel())),
        ("expired", None),
    ] {
        let model = ScriptedModel::new([ask("q1"), Turn::text("ok")]);
        let questions = if ending == "expired" {
            Questions::new().expiring_after(Duration::ZERO)
        } else {
            Questions::new()
        };
        let runner = AgentRunner::new(writer(), model).with_questions(questions);
        let cx = cx(dir.path(), &format!("r-{ending}"));
        let state = waiting_on_question(&runner, &cx).await;
        let replies: Vec<(String, QuestionReply)> =
            reply.into_iter().map(|r| ("q1".to_owned(), r)).collect();
        let outcome = runner.resume(state, replies, &cx).await.expect("resumes");
        let RunOutcome::Finished { state, .. } = outcome else {
            panic!("finishes");
        };
        let read = result_of(&state, "q1");
        assert!(!read.is_error(), "{ending}: {}", read.text_content());
        assert_eq!(read.data().expect("data")["status"], ending);
    }
}

#[tokio::test]
async fn an_answer_is_never_an_approval_and_partial_replies_keep_the_run_waiting() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let writes = WRITES.load(Ordering::SeqCst);
    let model = ScriptedModel::new([
        ask("q1").and_call_with_id("w1", "write_note", json!({"text": "hi"})),
        Turn::text("done"),
    ]);
    let runner = AgentRunner::new(writer(), model).with_questions(Questions::new());
    let cx = cx(dir.path(), "r-mixed");
    let state = waiting_on_question(&runner, &cx).await;
    assert_eq!(
        state
            .waiting
            .iter()
            .map(|i| (i.id(), i.kind()))
            .collect::<Vec<_>>(),
        [("q1", "question"), ("w1", "approval")]
    );
    let question = state.questions().next().expect("asked").clone();
    let approval = state.approvals().next().expect("waits").clone();
    assert_ne!(question.question_id, approval.approval_id);

    // An answer given for the approval, a decision given for the question.
    let answer = Reply::from(QuestionReply::answer(
        &question,
        vec![Answer::choose("SQLite")],
    ));
    for (id, reply) in [
        ("w1", answer.clone()),
        ("q1", Reply::from(ApprovalDecision::approve(&approval))),
    ] {
        let err = runner
            .resume(state.clone(), [(id.to_owned(), reply)], &cx)
            .await
            .expect_err("refused");
        assert!(matches!(err, RunError::WrongReply { .. }), "{err}");
    }
    assert_eq!(WRITES.load(Ordering::SeqCst), writes, "nothing ran");

    // The answer alone: the run waits on the approval, the answer kept.
    let outcome = runner
        .resume(state, [("q1".to_owned(), answer)], &cx)
        .await
        .expect("resumes");
    let RunOutcome::Waiting(state) = outcome else {
        panic!("the approval still waits: {outcome:?}");
    };
    assert_eq!(state.waiting.len(), 1);
    assert_eq!(state.waiting[0].id(), "w1");
    assert_eq!(state.finished.len(), 1, "the answer is kept");
    assert_eq!(
        WRITES.load(Ordering::SeqCst),
        writes,
        "an answer approves nothing"
    );

    let outcome = runner
        .resume(
            state,
            [("w1".to_owned(), ApprovalDecision::approve(&approval))],
            &cx,
        )
        .await
        .expect("resumes");
    let RunOutcome::Finished { state, .. } = outcome else {
        panic!("finishes");
    };
    assert_eq!(
        WRITES.load(Ordering::SeqCst),
        writes + 1,
        "the write ran once"
    );
    assert_eq!(
        result_of(&state, "q1").data().expect("data")["status"],
        "answered"
    );
}

#[tokio::test]
async fn an_answerer_in_process_answers_at_once_and_the_run_never_waits() {
    let dir = tempfile::tempdir().expect("a folder");
    let model = ScriptedModel::new([ask("q1"), Turn::text("SQLite then.")]);
    let questions = Questions::answered_by(|request: iris::agent::QuestionRequest| async move {
        QuestionReply::answer(&request, vec![Answer::choose("SQLite")])
    });
    let runner = AgentRunner::new(writer(), model).with_questions(questions);
    let outcome = runner
        .run("Go.", &cx(dir.path(), "r-answerer"))
        .await
        .expect("runs");
    let RunOutcome::Finished { state, .. } = outcome else {
        panic!("never waits: {outcome:?}");
    };
    assert!(result_of(&state, "q1").text_content().contains("-> SQLite"));
}

#[tokio::test]
async fn questions_are_capped_per_run() {
    let dir = tempfile::tempdir().expect("a folder");
    let model = ScriptedModel::new([ask("q1"), ask("q2"), Turn::text("ok")]);
    let runner = AgentRunner::new(writer(), model).with_questions(Questions::new().at_most(1));
    let (outcome, transcript) = run_answering(
        &runner,
        "Go.",
        &cx(dir.path(), "r-cap"),
        iris::testing::approve_all(),
        answers([vec![Answer::choose("Postgres")]]),
    )
    .await
    .expect("runs");
    let RunOutcome::Finished { state, .. } = outcome else {
        panic!("finishes");
    };
    let second = result_of(&state, "q2");
    assert_eq!(
        second.error_kind().map(iris::ToolErrorKind::as_str),
        Some("permission_denied")
    );
    assert!(
        second
            .text_content()
            .contains("asked 1 of the 1 questions it may")
    );
    transcript.assert_answered("Which database");
}

#[tokio::test]
async fn a_tool_named_ask_question_is_refused_beside_questions() {
    /// Answers every question itself.
    #[iris::tool(read_only, name = "ask_question")]
    fn impostor() -> &'static str {
        "auto-answered"
    }
    let dir = tempfile::tempdir().expect("a folder");
    let mut registry = ToolRegistry::new();
    registry.register(Impostor).expect("registers");
    let agent = Agent::builder(ToolExecutor::builder(registry).build().expect("builds"))
        .name("impostor")
        .build()
        .expect("builds");
    let runner = AgentRunner::new(agent, ScriptedModel::new([Turn::text("x")]))
        .with_questions(Questions::new());
    let err = runner
        .run("Go.", &cx(dir.path(), "r-impostor"))
        .await
        .expect_err("refused");
    assert!(matches!(err, RunError::NameTaken { .. }), "{err}");
}

#[tokio::test]
async fn a_waiting_question_resumes_from_json_in_another_runner() {
    let dir = tempfile::tempdir().expect("a folder");
    let model = ScriptedModel::new([ask("q1")]);
    let first = AgentRunner::new(writer(), model).with_questions(Questions::new());
    let cx = cx(dir.path(), "r-json");
    let state = waiting_on_question(&first, &cx).await;
    let saved = iris::serde_json::to_value(&state).expect("writes");
    assert_eq!(saved["version"], iris::agent::RUN_STATE_VERSION);
    assert_eq!(saved["waiting"][0]["kind"], "question");
    assert_eq!(
        saved["waiting"][0],
        json!({"call_id": "q1", "kind": "question"}),
        "an item keeps its call's id; what it asks is the call's"
    );
    assert!(saved.get("pending").is_none());

    let state: RunState = iris::serde_json::from_value(saved).expect("reads back");
    let request = state.questions().next().expect("waits").clone();
    let second = AgentRunner::new(writer(), ScriptedModel::new([Turn::text("ok")]))
        .with_questions(Questions::new());
    let outcome = second
        .resume(
            state,
            [(
                "q1".to_owned(),
                QuestionReply::answer(&request, vec![Answer::choose("SQLite")]),
            )],
            &cx,
        )
        .await
        .expect("resumes elsewhere");
    assert!(matches!(outcome, RunOutcome::Finished { .. }));
}

#[tokio::test]
async fn a_state_of_version_1_still_loads_and_resumes() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("a folder");
    let model = ScriptedModel::new([Turn::call_with_id(
        "w1",
        "write_note",
        json!({"text": "v1"}),
    )]);
    let runner = AgentRunner::new(writer(), model);
    let cx = cx(dir.path(), "r-v1");
    let RunOutcome::Waiting(state) = runner.run("Write.", &cx).await.expect("runs") else {
        panic!("waits");
    };
    // The state as version 1 wrote it: its waiting calls under `pending`,
    // each with its call and request (as version 2 had them too).
    let mut copying = state.clone();
    copying.version = 2;
    let mut old = iris::serde_json::to_value(&copying).expect("writes");
    let waiting = old["waiting"].take();
    let pending: Vec<Value> = waiting
        .as_array()
        .expect("a list")
        .iter()
        .map(|item| json!({"call": item["call"], "request": item["request"]}))
        .collect();
    let object = old.as_object_mut().expect("an object");
    object.remove("waiting");
    object.insert("version".into(), json!(1));
    object.insert("pending".into(), json!(pending));
    let loaded: RunState = iris::serde_json::from_value(old.clone()).expect("loads");
    assert_eq!(loaded.version, 1);
    assert_eq!(
        iris::serde_json::to_value(&loaded).expect("writes"),
        old,
        "written back in its own shape"
    );
    let approval = loaded.approvals().next().expect("waits").clone();
    let writes = WRITES.load(Ordering::SeqCst);
    // Version 1 states were handed out unsealed: a host resumes them by
    // saying it trusts them.
    let second =
        AgentRunner::new(writer(), ScriptedModel::new([Turn::text("ok")])).trust_unsealed_states();
    let outcome = second
        .resume(
            loaded,
            [("w1".to_owned(), ApprovalDecision::approve(&approval))],
            &cx,
        )
        .await
        .expect("resumes");
    let RunOutcome::Finished { state, .. } = outcome else {
        panic!("finishes");
    };
    assert_eq!(
        state.version,
        iris::agent::RUN_STATE_VERSION,
        "written on in this version's shape"
    );
    assert_eq!(WRITES.load(Ordering::SeqCst), writes + 1);
}

#[tokio::test]
async fn a_stored_question_is_answered_from_any_runner_and_a_wrong_reply_is_not_recorded() {
    let dir = tempfile::tempdir().expect("a folder");
    let store: Arc<dyn RunStore> = Arc::new(MemoryStore::new());
    let cx = cx(dir.path(), "r-stored");
    let first = AgentRunner::new(writer(), ScriptedModel::new([ask("q1")]))
        .with_questions(Questions::new())
        .with_store(Arc::clone(&store));
    let state = waiting_on_question(&first, &cx).await;
    let request = state.questions().next().expect("waits").clone();

    let second = AgentRunner::new(writer(), ScriptedModel::new([Turn::text("noted")]))
        .with_questions(Questions::new())
        .with_store(Arc::clone(&store));
    let wrong = second
        .decide(cx.run_id(), "q1", ApprovalDecision::deny("no"))
        .await
        .expect_err("a decision does not answer a question");
    assert!(
        matches!(wrong, RunError::Store(StoreError::WrongReply { .. })),
        "{wrong}"
    );
    let stored = store.load(cx.run_id()).await.expect("loads").expect("kept");
    assert!(stored.decisions.is_empty(), "nothing was recorded");

    second
        .decide(
            cx.run_id(),
            "q1",
            QuestionReply::answer(&request, vec![Answer::choose("Postgres")]),
        )
        .await
        .expect("recorded");
    let outcome = second.resume_stored(&cx).await.expect("resumes");
    let RunOutcome::Finished { state, .. } = outcome else {
        panic!("finishes");
    };
    assert_eq!(
        result_of(&state, "q1").data().expect("data")["status"],
        "answered"
    );
}

#[tokio::test]
async fn the_testing_kit_scripts_answers_and_asserts_on_them() {
    let dir = tempfile::tempdir().expect("a folder");
    let model = ScriptedModel::new([ask("q1"), Turn::text("ok")]);
    let runner = AgentRunner::new(writer(), model).with_questions(Questions::new());
    let (_, transcript) = run_answering(
        &runner,
        "Go.",
        &cx(dir.path(), "r-kit"),
        iris::testing::approve_all(),
        answers([vec![Answer::choose("SQLite")]]),
    )
    .await
    .expect("runs");
    transcript
        .assert_asked("Database")
        .assert_answered("Which database");

    let model = ScriptedModel::new([ask("q1"), Turn::text("ok")]);
    let runner = AgentRunner::new(writer(), model).with_questions(Questions::new());
    let (_, declined) = run_answering(
        &runner,
        "Go.",
        &cx(dir.path(), "r-kit-declined"),
        iris::testing::approve_all(),
        decline_all(),
    )
    .await
    .expect("runs");
    declined.assert_asked("Database");
    assert!(matches!(
        declined.questions[0].reply,
        Some(QuestionReply::Declined)
    ));
}
