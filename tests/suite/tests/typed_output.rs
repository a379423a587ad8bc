//! Agents that return Rust types: the schema goes with each provider's
//! native structured output (cassettes of each wire format), an answer that
//! does not fit goes back with its located faults and ends the run after
//! the retries, a value that is not an object travels wrapped, a child's
//! typed output reaches its parent as structured content, the output is
//! kept with the run on a store and read back typed in another runner, and
//! an agent file names its output.
//!
//! The typed cassettes were recorded by `IRIS_RECORD_CASSETTES=1 cargo test
//! -p iris-test-suite --test suite typed_output`, through a loopback provider
//! answering in each provider's documented shape.

use std::path::PathBuf;
use std::sync::Arc;

use iris::agent::{
    Agent, AgentRunner, ChildAgent, Output, OutputError, RunContext, RunError, RunOutcome,
};
use iris::model::Message;
use iris::serde_json::{Value, json};
use iris::testing::cassette::{Cassette, CassetteServer};
use iris::testing::{ScriptedModel, Turn};
use iris::{RunId, ToolExecutor, ToolRegistry};

use crate::cassettes::adapter;
use crate::loopback::{Reply, Script, serve};

/// An invoice, as the model reads it from a text.
#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Invoice {
    /// Who is billed.
    customer: String,
    /// What was bought.
    lines: Vec<Line>,
    /// The sum of the lines, in cents.
    total_cents: u64,
    /// When it is due (ISO 8601), if the text says.
    due: Option<String>,
}

/// One line of an invoice.
#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Line {
    /// What was bought.
    item: String,
    /// Its price, in cents.
    #[schemars(range(max = 1_000_000))]
    cents: u64,
}

const INVOICE: &str = r#"{"customer":"Ada Lovelace","lines":[{"item":"tea","cents":350},{"item":"scones","cents":450}],"total_cents":800,"due":null}"#;

fn invoice() -> Invoice {
    Invoice {
        customer: "Ada Lovelace".to_owned(),
        lines: vec![
            Line {
                item: "tea".to_owned(),
                cents: 350,
            },
            Line {
                item: "scones".to_owned(),
                cents: 450,
            },
        ],
        total_cents: 800,
        due: None,
    }
}

fn agent() -> Agent {
    let executor = ToolExecutor::builder(ToolRegistry::new())
        .observer(iris::testing::EventLog::new())
        .build()
        .unwrap();
    Agent::builder(executor)
        .name("clerk")
        .instructions("Read invoices.")
        .build()
        .unwrap()
}

fn cx(dir: &tempfile::TempDir, run: &str) -> RunContext {
    RunContext::new(dir.path(), RunId::new(run))
}

const TEXT: &str = "Invoice for Ada Lovelace: tea 3.50, scones 4.50; total 8.00.";

#[tokio::test]
async fn a_typed_run_returns_the_value_and_sends_its_schema() {
    let model = Arc::new(ScriptedModel::new([Turn::text(INVOICE)]));
    let runner = AgentRunner::new(agent(), Arc::clone(&model));
    let dir = tempfile::tempdir().unwrap();
    let got: Invoice = runner.run_for(TEXT, &cx(&dir, "typed")).await.unwrap();
    assert_eq!(got, invoice());
    let requests = model.requests();
    let output = requests[0].output.as_ref().expect("the schema was sent");
    assert_eq!(output.name(), "Invoice");
    assert_eq!(
        output.schema()["required"],
        json!(["customer", "lines", "total_cents"])
    );
    // A run without an output type is unchanged: text, and no schema.
    let model = Arc::new(ScriptedModel::new([Turn::text("Ada owes 8.00.")]));
    let runner = AgentRunner::new(agent(), Arc::clone(&model));
    let outcome = runner.run(TEXT, &cx(&dir, "text")).await.unwrap();
    assert!(matches!(&outcome, RunOutcome::Finished { text, .. } if text == "Ada owes 8.00."));
    assert!(model.requests()[0].output.is_none());
    let missing = outcome.output::<Invoice>().unwrap_err();
    assert!(matches!(missing, OutputError::Missing(_)), "{missing}");
}

#[tokio::test]
async fn an_answer_that_does_not_fit_goes_back_with_its_faults() {
    // Missing the total, then a price over its bound, then right.
    let wrong = r#"{"customer":"Ada Lovelace","lines":[{"item":"tea","cents":350}],"due":null}"#;
    let too_dear = r#"{"customer":"Ada Lovelace","lines":[{"item":"tea","cents":2000000}],"total_cents":1,"due":null}"#;
    let model = Arc::new(ScriptedModel::new([
        Turn::text(wrong),
        Turn::text(format!("```json\n{too_dear}\n```")),
        Turn::text(INVOICE),
    ]));
    let runner = AgentRunner::new(agent(), Arc::clone(&model));
    let dir = tempfile::tempdir().unwrap();
    let got: Invoice = runner.run_for(TEXT, &cx(&dir, "retried")).await.unwrap();
    assert_eq!(got, invoice());
    let requests = model.requests();
    let feedback = |at: usize| match requests[at].messages.last() {
        Some(Message::User { text }) => text.clone(),
        other => panic!("expected the faults, got {other:?}"),
    };
    let first = feedback(1);
    assert!(
        first.contains("`Invoice`") && first.contains("total_cents"),
        "{first}"
    );
    let second = feedback(2);
    assert!(second.contains("$.lines[0].cents"), "{second}");

    // Past the retries the run ends without an output, keeping the text.
    let model = Arc::new(ScriptedModel::new([
        Turn::text(wrong),
        Turn::text("no idea"),
    ]));
    let runner = AgentRunner::new(agent(), model).with_output(Output::of::<Invoice>().retries(1));
    let outcome = runner.run(TEXT, &cx(&dir, "gave-up")).await.unwrap();
    let RunOutcome::OutputInvalid { text, error, state } = &outcome else {
        panic!("expected an invalid output, got {outcome:?}");
    };
    assert_eq!(text, "no idea");
    assert!(matches!(error, OutputError::NotJson { .. }), "{error}");
    assert_eq!(state.output_faults, 1);
    assert!(state.output.is_none());
    let err = outcome.output::<Invoice>().unwrap_err();
    assert!(err.to_string().contains("not JSON"), "{err}");

    let model = Arc::new(ScriptedModel::new([Turn::text(wrong)]));
    let runner = AgentRunner::new(agent(), model);
    let err = runner
        .run_for::<Invoice>(TEXT, &cx(&dir, "never"))
        .await
        .map(drop)
        .unwrap_err();
    // The scripted model has one answer: the retry finds none.
    assert!(
        matches!(err, RunError::Model(_) | RunError::Output { .. }),
        "{err}"
    );
}

#[tokio::test]
async fn observers_see_the_output_fill_in_as_it_streams() {
    let log = iris::testing::EventLog::new();
    let executor = ToolExecutor::builder(ToolRegistry::new())
        .observer(log.clone())
        .build()
        .unwrap();
    let agent = Agent::builder(executor).name("clerk").build().unwrap();
    let model = ScriptedModel::new([Turn::text(INVOICE)]).with_seed(7);
    let runner = AgentRunner::new(agent, model);
    let dir = tempfile::tempdir().unwrap();
    let got: Invoice = runner.run_for(TEXT, &cx(&dir, "stream")).await.unwrap();
    assert_eq!(got, invoice());
    let events = log.wait_until(
        |events| {
            events
                .iter()
                .any(|e| matches!(e, iris::observe::RunEvent::RunFinished { .. }))
        },
        std::time::Duration::from_secs(10),
    );
    let partials: Vec<Value> = events
        .into_iter()
        .filter_map(|e| match e {
            iris::observe::RunEvent::OutputPartial { value, .. } => Some(value),
            _ => None,
        })
        .collect();
    assert!(partials.len() >= 2, "{partials:?}");
    // Each is an object holding what arrived so far; the last is whole.
    assert!(partials.iter().all(Value::is_object), "{partials:?}");
    let whole: Value = iris::serde_json::from_str(INVOICE).unwrap();
    assert_eq!(partials.last(), Some(&whole));
    let growing = partials
        .iter()
        .map(|p| p.as_object().unwrap().len())
        .collect::<Vec<_>>();
    assert!(growing.windows(2).all(|w| w[0] <= w[1]), "{growing:?}");
}

#[tokio::test]
async fn a_value_that_is_not_an_object_travels_wrapped() {
    let model = Arc::new(ScriptedModel::new([Turn::text(
        r#"{"response": ["tea", "scones"]}"#,
    )]));
    let runner = AgentRunner::new(agent(), Arc::clone(&model));
    let dir = tempfile::tempdir().unwrap();
    let items: Vec<String> = runner.run_for(TEXT, &cx(&dir, "list")).await.unwrap();
    assert_eq!(items, ["tea", "scones"]);
    let requests = model.requests();
    let output = requests[0].output.as_ref().unwrap();
    assert!(output.is_wrapped());
    assert_eq!(output.schema()["required"], json!(["response"]));
}

#[tokio::test]
async fn a_childs_typed_output_reaches_its_parent_as_structured_content() {
    let child =
        ChildAgent::new("reader", "Reads an invoice.", agent()).output(Output::of::<Invoice>());
    let executor = ToolExecutor::builder(ToolRegistry::new()).build().unwrap();
    let parent = Agent::builder(executor)
        .name("desk")
        .child(child)
        .build()
        .unwrap();
    let model = Arc::new(ScriptedModel::new([
        Turn::call("reader", json!({"task": TEXT})),
        // The child's answer, checked against its output.
        Turn::text(INVOICE),
        Turn::text("Ada owes 8.00."),
    ]));
    let runner = AgentRunner::new(parent, Arc::clone(&model));
    let dir = tempfile::tempdir().unwrap();
    let (outcome, _) = iris::testing::run_to_end(
        &runner,
        "Who owes what?",
        &cx(&dir, "desk"),
        iris::testing::approve_all(),
    )
    .await
    .unwrap();
    let RunOutcome::Finished { state, .. } = &outcome else {
        panic!("expected the answer, got {outcome:?}");
    };
    let result = state
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool { tool, result, .. } if tool == "reader" => Some(result),
            _ => None,
        })
        .unwrap();
    assert_eq!(result.data().unwrap()["output"]["total_cents"], 800);
    // The child's own request carried its schema.
    let requests = model.requests();
    assert_eq!(requests[1].output.as_ref().unwrap().name(), "Invoice");
    assert!(requests[0].output.is_none());
    assert_eq!(
        state.children[0].state.output.as_ref().unwrap()["customer"],
        "Ada Lovelace"
    );
}

#[tokio::test]
async fn the_output_is_kept_with_the_run_and_read_back_in_another_runner() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn iris::agent::store::RunStore> =
        Arc::new(iris::sqlite::SqliteStore::open(dir.path().join("runs.db")).unwrap());
    let approve = || {
        let mut registry = ToolRegistry::new();
        registry.register(Stamp).unwrap();
        let executor = ToolExecutor::builder(registry).build().unwrap();
        Agent::builder(executor)
            .name("clerk")
            .output(Output::of::<Invoice>())
            .build()
            .unwrap()
    };
    let model = Arc::new(ScriptedModel::new([Turn::call("stamp", json!({}))]));
    let first = AgentRunner::new(approve(), model).with_store(Arc::clone(&store));
    let run = cx(&dir, "kept");
    let outcome = first.run(TEXT, &run).await.unwrap();
    let RunOutcome::Waiting(state) = outcome else {
        panic!("the stamp asks first, got {outcome:?}");
    };
    let request = state.waiting[0].approval_request().unwrap().clone();
    first
        .decide(
            &run.run_id().clone(),
            state.waiting[0].id(),
            iris::ApprovalDecision::approve(&request),
        )
        .await
        .unwrap();

    // Another runner, as another process would build it.
    let model = Arc::new(ScriptedModel::new([Turn::text(INVOICE)]));
    let second = AgentRunner::new(approve(), model).with_store(Arc::clone(&store));
    let outcome = second.resume_stored(&run).await.unwrap();
    assert_eq!(outcome.output::<Invoice>().unwrap(), invoice());
    let kept = store.load(run.run_id()).await.unwrap().unwrap();
    assert_eq!(kept.state.output.unwrap()["total_cents"], 800);
}

/// Stamp the invoice as read.
#[iris::tool(write)]
fn stamp() -> String {
    "stamped".to_owned()
}

#[tokio::test]
async fn an_agent_file_names_its_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("invoice.schema.json"),
        json!({
            "type": "object",
            "properties": {"customer": {"type": "string"}, "total_cents": {"type": "integer", "minimum": 0}},
            "required": ["customer", "total_cents"],
            "additionalProperties": false
        })
        .to_string(),
    )
    .unwrap();
    let file = dir.path().join("agent.yaml");
    std::fs::write(
        &file,
        "name: clerk\noutput:\n  name: invoice\n  schema_file: invoice.schema.json\n  retries: 0\n",
    )
    .unwrap();
    let agent = Agent::from_path(&file).unwrap();
    let model = Arc::new(ScriptedModel::new([Turn::text(
        r#"{"customer": "Ada", "total_cents": -3}"#,
    )]));
    let runner = AgentRunner::new(agent, Arc::clone(&model));
    let outcome = runner.run(TEXT, &cx(&dir, "file")).await.unwrap();
    let RunOutcome::OutputInvalid { error, .. } = &outcome else {
        panic!("expected the bound to be checked, got {outcome:?}");
    };
    assert!(error.to_string().contains("$.total_cents"), "{error}");
    assert_eq!(
        model.requests()[0].output.as_ref().unwrap().name(),
        "invoice"
    );

    // Both, neither, and a schema that is not an object are located problems.
    for (yaml, says) in [
        (
            "name: a\noutput:\n  schema: {type: object}\n  schema_file: invoice.schema.json\n",
            "not both",
        ),
        (
            "name: a\noutput:\n  name: x\n",
            "say what the answer must be",
        ),
        (
            "name: a\noutput:\n  schema: [1, 2]\n",
            "a schema is a JSON object",
        ),
        (
            "name: a\noutput:\n  schema_file: ../outside.json\n",
            "outside the agent file's folder",
        ),
    ] {
        std::fs::write(&file, yaml).unwrap();
        let err = Agent::from_path(&file).unwrap_err().to_string();
        assert!(err.contains(says), "{yaml}: {err}");
        assert!(err.contains("agent.yaml:"), "{err}");
    }
}

// ---- each wire format's native structured output, through cassettes ----

const WIRES: [&str; 4] = ["openai_chat", "openai_responses", "anthropic", "gemini"];

fn cassette_path(wire: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/cassettes/{wire}_typed.json"))
}

/// Where each wire format carries the schema in its request.
fn native_schema<'a>(wire: &str, body: &'a Value) -> &'a Value {
    match wire {
        "openai_chat" => &body["response_format"]["json_schema"]["schema"],
        "openai_responses" => &body["text"]["format"]["schema"],
        "anthropic" => &body["output_config"]["format"]["schema"],
        _ => &body["generationConfig"]["responseJsonSchema"],
    }
}

#[tokio::test]
async fn each_wire_sends_its_native_structured_output() {
    if std::env::var("IRIS_RECORD_CASSETTES").is_ok() {
        record_all().await;
    }
    for wire in WIRES {
        let cassette = Cassette::load(cassette_path(wire)).unwrap();
        let body = &cassette.interactions[0].request.body;
        let schema = native_schema(wire, body);
        assert_eq!(schema["type"], "object", "{wire}: {body}");
        assert!(
            schema["properties"]["lines"].is_object(),
            "{wire}: {schema}"
        );
        match wire {
            // Strict where the schema can be made strict: the optional
            // `due` is required and nullable.
            "openai_chat" => {
                assert_eq!(body["response_format"]["json_schema"]["strict"], true);
                assert_eq!(body["response_format"]["json_schema"]["name"], "Invoice");
                assert!(
                    schema["required"]
                        .as_array()
                        .unwrap()
                        .contains(&json!("due"))
                );
            }
            "openai_responses" => assert_eq!(body["text"]["format"]["strict"], true),
            // Bounds Anthropic does not read are left to the runner.
            "anthropic" => assert!(!schema.to_string().contains("maximum"), "{schema}"),
            _ => assert_eq!(
                body["generationConfig"]["responseMimeType"],
                "application/json"
            ),
        }
        let server = CassetteServer::replay(cassette).await.unwrap();
        let runner = AgentRunner::new(agent(), adapter(wire, &format!("{}/v1", server.url())));
        let dir = tempfile::tempdir().unwrap();
        let got: Invoice = runner
            .run_for(TEXT, &cx(&dir, "cassette"))
            .await
            .unwrap_or_else(|e| panic!("{wire}: {e}"));
        server.finish();
        assert_eq!(got, invoice(), "{wire}");
    }
}

/// A Messages answer (Anthropic's documented shape) that calls `tool`
/// with `input`, after a line of text.
fn anthropic_tool_answer(tool: &str, input: &Value) -> Reply {
    Reply::Status(
        200,
        json!({
            "id": "msg_01Aq9w938a90dw8q",
            "type": "message",
            "role": "assistant",
            "model": "claude-3-5-haiku-20241022",
            "content": [
                {"type": "text", "text": "Here is the invoice."},
                {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": tool, "input": input}
            ],
            "stop_reason": "tool_use",
            "stop_sequence": null,
            "usage": {"input_tokens": 512, "output_tokens": 61}
        })
        .to_string(),
    )
}

#[tokio::test]
async fn an_anthropic_model_without_structured_outputs_answers_through_a_forced_tool() {
    let provider = Arc::new(Script::default());
    let misfit = json!({"customer": "Ada Lovelace", "lines": []});
    let fits: Value = iris::serde_json::from_str(INVOICE).unwrap();
    provider.replies.lock().unwrap().extend([
        anthropic_tool_answer("Invoice", &misfit),
        anthropic_tool_answer("Invoice", &fits),
    ]);
    let base = serve(Arc::clone(&provider))
        .await
        .trim_end_matches("/chat/completions")
        .to_owned();
    let model = iris::model::AnthropicMessages::new(
        "claude-3-5-haiku-20241022",
        "",
        &base,
        std::time::Duration::from_secs(30),
    )
    .unwrap();
    let runner = AgentRunner::new(agent(), Arc::new(model));
    let dir = tempfile::tempdir().unwrap();
    let got: Invoice = runner.run_for(TEXT, &cx(&dir, "forced")).await.unwrap();
    assert_eq!(got, invoice());

    let requests = provider.requests.lock().unwrap();
    assert_eq!(requests.len(), 2, "one misfit sent back, then the answer");
    let first = &requests[0].1;
    assert!(first.get("output_config").is_none(), "{first}");
    assert_eq!(first["tools"][0]["name"], "Invoice");
    assert_eq!(
        first["tool_choice"],
        json!({"type": "tool", "name": "Invoice"})
    );
    // The misfit went back as the answer it was, with its located fault.
    let history = requests[1].1["messages"].as_array().unwrap();
    let said = history[1]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        iris::serde_json::from_str::<Value>(said).unwrap(),
        misfit,
        "{history:?}"
    );
    assert!(
        history[2].to_string().contains("total_cents"),
        "{history:?}"
    );
}

/// `INVOICE` answered in `wire`'s documented shape.
fn documented_answer(wire: &str) -> Reply {
    use std::fmt::Write as _;
    let (head, tail) = INVOICE.split_at(40);
    match wire {
        "openai_chat" => Reply::Status(
            200,
            json!({
                "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
                "object": "chat.completion",
                "created": 1_741_569_952,
                "model": "gpt-4.1-mini-2025-04-14",
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": INVOICE, "refusal": null},
                    "logprobs": null,
                    "finish_reason": "stop"
                }],
                "usage": {"prompt_tokens": 141, "completion_tokens": 43, "total_tokens": 184}
            })
            .to_string(),
        ),
        "openai_responses" => Reply::Status(
            200,
            json!({
                "id": "resp_67ccfcdd16748190",
                "object": "response",
                "created_at": 1_741_487_325,
                "status": "completed",
                "error": null,
                "model": "gpt-4.1-mini-2025-04-14",
                "output": [{
                    "type": "message",
                    "id": "msg_67ccfcddc9a88190",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": INVOICE, "annotations": []}]
                }],
                "usage": {"input_tokens": 141, "output_tokens": 43, "total_tokens": 184}
            })
            .to_string(),
        ),
        "anthropic" => {
            let events = [
                (
                    "message_start",
                    json!({"type": "message_start", "message": {"id": "msg_01Rj7c", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 320, "output_tokens": 1}}}),
                ),
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": head}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": tail}}),
                ),
                (
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": 0}),
                ),
                (
                    "message_delta",
                    json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 45}}),
                ),
                ("message_stop", json!({"type": "message_stop"})),
            ];
            let mut body = String::new();
            for (name, data) in events {
                let _ = write!(body, "event: {name}\ndata: {data}\n\n");
            }
            Reply::Events(body)
        }
        _ => {
            let chunk = |text: &str, last: bool| {
                let mut candidate =
                    json!({"content": {"role": "model", "parts": [{"text": text}]}, "index": 0});
                if last {
                    candidate["finishReason"] = json!("STOP");
                }
                json!({"candidates": [candidate], "usageMetadata": {"promptTokenCount": 118, "candidatesTokenCount": 40, "totalTokenCount": 158}, "modelVersion": "gemini-2.5-flash"})
            };
            Reply::Events(format!(
                "data: {}\n\ndata: {}\n\n",
                chunk(head, false),
                chunk(tail, true)
            ))
        }
    }
}

/// Records each wire's typed cassette through a loopback provider that
/// answers in its documented shape.
async fn record_all() {
    for wire in WIRES {
        let provider = Arc::new(Script::default());
        provider
            .replies
            .lock()
            .unwrap()
            .push_back(documented_answer(wire));
        let upstream = serve(provider)
            .await
            .trim_end_matches("/chat/completions")
            .to_owned();
        let through = CassetteServer::record(&upstream).await.unwrap();
        let runner = AgentRunner::new(agent(), adapter(wire, &format!("{}/v1", through.url())));
        let dir = tempfile::tempdir().unwrap();
        let _: Invoice = runner
            .run_for(TEXT, &cx(&dir, "cassette"))
            .await
            .unwrap_or_else(|e| panic!("recording {wire}: {e}"));
        through.save(cassette_path(wire)).unwrap();
    }
}

#[tokio::test]
async fn strict_nulls_read_as_left_out_and_patterns_are_checked() {
    let schema = json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "nickname": {"type": "string"}
        },
        "required": ["code"],
        "additionalProperties": false
    });
    let output = Output::schema("airport", schema);
    // A strict provider sends `null` for the optional `nickname`.
    let value = output
        .check(r#"{"code": "LHR", "nickname": null}"#)
        .unwrap();
    assert_eq!(value, json!({"code": "LHR"}));
    let err = output.check(r#"{"code": "nope"}"#).unwrap_err().to_string();
    assert!(err.contains("$.code"), "{err}");
}

// ---- a child agent served as a tool ----

fn served(child: &ChildAgent) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry
        .register(iris::agent::AgentTool::new(child, None).unwrap())
        .unwrap();
    ToolExecutor::builder(registry)
        .policy(iris::permissions::RulePolicy::new().other(iris::permissions::Rule::Allow))
        .build()
        .unwrap()
}

fn tool_cx(dir: &tempfile::TempDir) -> iris::ToolContext {
    iris::ToolContext::builder(dir.path(), RunId::new("served")).build()
}

#[tokio::test]
async fn a_typed_child_served_as_a_tool_answers_with_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let model = Arc::new(ScriptedModel::new([Turn::text(INVOICE)]));
    let child = ChildAgent::new("clerk", "Reads invoices.", agent())
        .output(Output::of::<Invoice>())
        .model(Arc::clone(&model));
    let tool = iris::agent::AgentTool::new(&child, None).unwrap();
    let schema = iris::Tool::definition(&tool).output_schema().unwrap();
    assert_eq!(
        schema["required"],
        json!(["customer", "lines", "total_cents"])
    );
    let executor = served(&child);
    let outcome = executor
        .execute_one(
            iris::ToolUseBlock::new("c1", "clerk", json!({"task": TEXT})),
            &tool_cx(&dir),
        )
        .await;
    let result = outcome.result().unwrap();
    assert!(!result.is_error(), "{}", result.text_content());
    let value: Invoice = iris::serde_json::from_value(result.data().unwrap().clone()).unwrap();
    assert_eq!(value, invoice());
    // The model was asked for the output, with the task as the message.
    assert_eq!(
        model.requests()[0].output.as_ref().unwrap().name(),
        "Invoice"
    );

    // Arguments a child does not take are refused before any run.
    let outcome = executor
        .execute_one(
            iris::ToolUseBlock::new("c2", "clerk", json!({"task": " ", "extra": 1})),
            &tool_cx(&dir),
        )
        .await;
    let refused = outcome.result().unwrap();
    assert!(refused.is_error());
    assert!(
        refused.text_content().contains("`extra`"),
        "{}",
        refused.text_content()
    );
    assert_eq!(model.requests().len(), 1, "no second run");

    // A value that is not an object answers under `response`.
    let model = Arc::new(ScriptedModel::new([Turn::text(
        r#"{"response": ["tea", "scones"]}"#,
    )]));
    let child = ChildAgent::new("lister", "Lists items.", agent())
        .output(Output::of::<Vec<String>>())
        .model(model);
    let outcome = served(&child)
        .execute_one(
            iris::ToolUseBlock::new("c3", "lister", json!({"task": TEXT})),
            &tool_cx(&dir),
        )
        .await;
    assert_eq!(
        outcome.result().unwrap().data(),
        Some(&json!({"response": ["tea", "scones"]}))
    );

    // A child with no model, given none, is refused by name.
    let orphan = ChildAgent::new("orphan", "Has no model.", agent());
    let err = iris::agent::AgentTool::new(&orphan, None).unwrap_err();
    assert!(
        err.to_string()
            .contains("child agent `orphan` names no model"),
        "{err}"
    );
}
