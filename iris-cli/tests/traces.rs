//! `iris run --otlp`: a run's spans in the OpenTelemetry GenAI conventions,
//! exported over OTLP/HTTP to a receiver of the test's own that decodes them
//! with `opentelemetry-proto`. The run delegates to a child agent, then
//! pauses for an approval and is resumed by a second process: both processes'
//! spans are one trace (named by the run id), the child's run nests under
//! the call that delegated to it, every model request and tool call has its
//! span with the conventions' attributes, and no content is recorded unless
//! asked for.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    dead_code,
    reason = "tests fail loudly; the shared model server has more than this file uses"
)]

#[path = "support/http.rs"]
mod http;
#[path = "support/model.rs"]
mod model;
#[path = "support/otlp.rs"]
mod otlp;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use model::{ModelServer, calls, says};
use otlp::{Received, Receiver};
use serde_json::json;

fn files(dir: &Path, base_url: &str, telemetry: &str) {
    std::fs::write(
        dir.join("agent.yaml"),
        format!(
            "name: lead
instructions: Delegate, then save.
model:
  provider: openai_chat
  model: scripted-model
  base_url: {base_url}
tools:
  builtin: [file.write]
permissions:
  write: ask
agents:
  - name: counter
    description: Counts things.
    file: counter.yaml
{telemetry}"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("counter.yaml"),
        "name: counter\ninstructions: Count.\n",
    )
    .unwrap();
}

fn iris(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_iris"));
    command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The script: the lead delegates, the child answers, the lead saves (and
/// waits for approval); after the resume, the lead answers.
fn script() -> Vec<serde_json::Value> {
    vec![
        calls("counter", &json!({"task": "Count the words of 'a b c'."})),
        says("There are 3 words."),
        calls(
            "write_file",
            &json!({"path": "count.txt", "content": "secret-content-3"}),
        ),
        says("Saved the count."),
    ]
}

fn named<'a>(spans: &'a [Received], prefix: &str) -> Vec<&'a Received> {
    spans
        .iter()
        .filter(|s| s.name.starts_with(prefix))
        .collect()
}

#[test]
fn a_paused_and_resumed_run_is_one_trace_with_its_child_nested() {
    let receiver = Receiver::start();
    let server = ModelServer::start(script());
    let dir = tempfile::tempdir().unwrap();
    files(
        dir.path(),
        &server.base_url,
        "telemetry:\n  service_name: support-desk\n",
    );
    let first = iris(
        dir.path(),
        &[
            "run",
            "--agent",
            "agent.yaml",
            "Count and save.",
            "--otlp",
            &receiver.url,
        ],
        &[],
    );
    assert_eq!(first.status.code(), Some(4), "{}", text(&first.stderr));
    let resumed = iris(
        dir.path(),
        &[
            "run",
            "--agent",
            "agent.yaml",
            "--resume",
            "iris-run.json",
            "--approve",
            "--otlp",
            &receiver.url,
        ],
        &[],
    );
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    // Both processes flushed their spans before they exited.
    let spans = receiver.spans();
    let agents = named(&spans, "invoke_agent");
    let roots: Vec<&&Received> = agents
        .iter()
        .filter(|s| s.name == "invoke_agent lead")
        .collect();
    // The first process drives the run until it waits (the delegation is
    // asked about and approved there, then the write waits); the second
    // resumes it to its end. Spans arrive as they end.
    assert!(roots.len() >= 2, "a drive in each process: {spans:#?}");
    let (first, last) = (roots[0], roots[roots.len() - 1]);
    assert!(
        roots
            .iter()
            .all(|r| r.trace_id == first.trace_id && r.parent_span_id == first.parent_span_id),
        "one trace across the two processes, linked by the run"
    );
    let run_id = first.attribute("gen_ai.conversation.id").unwrap();
    assert!(run_id.starts_with("cli-"), "{run_id}");
    assert!(
        roots
            .iter()
            .all(|r| r.attribute("gen_ai.conversation.id") == Some(run_id))
    );
    assert_eq!(first.attribute("iris.run.outcome"), Some("waiting"));
    assert_eq!(last.attribute("iris.run.outcome"), Some("finished"));
    let drive_ids: Vec<&Vec<u8>> = roots.iter().map(|r| &r.span_id).collect();
    assert!(
        spans.iter().all(|s| s.trace_id == first.trace_id),
        "every span in the run's trace"
    );
    assert!(spans.iter().all(|s| s.service == "support-desk"));

    // The child's run nests under the call that delegated to it.
    let delegation = spans
        .iter()
        .find(|s| s.name == "execute_tool counter")
        .unwrap();
    assert!(drive_ids.contains(&&delegation.parent_span_id));
    let child = spans
        .iter()
        .find(|s| s.name == "invoke_agent counter")
        .unwrap();
    assert_eq!(child.parent_span_id, delegation.span_id);
    assert_eq!(child.attribute("gen_ai.agent.name"), Some("counter"));

    requests_and_write(&spans, child, last);
}

/// Each model request has its model, provider, server, tokens and finish;
/// the approved write ran in the second process, under its drive (the first
/// process's span of it ended when it began to wait).
fn requests_and_write(spans: &[Received], child: &Received, last: &Received) {
    let chats = named(spans, "chat scripted-model");
    assert_eq!(chats.len(), 4, "{chats:#?}");
    for chat in &chats {
        assert_eq!(chat.attribute("gen_ai.operation.name"), Some("chat"));
        assert_eq!(chat.attribute("gen_ai.provider.name"), Some("openai"));
        assert_eq!(
            chat.attribute("gen_ai.request.model"),
            Some("scripted-model")
        );
        assert_eq!(chat.attribute("server.address"), Some("127.0.0.1"));
        assert!(
            chat.attribute("gen_ai.usage.input_tokens").is_some(),
            "{chat:#?}"
        );
        assert!(chat.attribute("gen_ai.response.finish_reasons").is_some());
    }
    let child_chat = chats.iter().find(|c| c.parent_span_id == child.span_id);
    assert!(
        child_chat.is_some(),
        "the child's request nests under its run"
    );

    let writes = named(spans, "execute_tool write_file");
    let write = writes
        .iter()
        .find(|s| s.parent_span_id == last.span_id)
        .unwrap();
    assert_eq!(write.attribute("gen_ai.tool.type"), Some("function"));
    // The scripted server numbers every answer's calls from `call_1`, as
    // local servers do: the write (the lead's second call) runs under the
    // id the runtime minted for it.
    assert_eq!(write.attribute("gen_ai.tool.call.id"), Some("call_1-2"));
    assert_eq!(write.attribute("error.type"), None);

    no_content(spans);
}

/// Content was not asked for: none is in any span.
fn no_content(spans: &[Received]) {
    let everything = format!("{spans:?}");
    for secret in [
        "secret-content-3",
        "Count and save.",
        "There are 3 words.",
        "Delegate, then save.",
    ] {
        assert!(!everything.contains(secret), "{secret} leaked into a span");
    }
    assert!(!spans.iter().any(|s| {
        s.attributes.iter().any(|(k, _)| {
            k.starts_with("gen_ai.input")
                || k.starts_with("gen_ai.output")
                || k == "gen_ai.tool.call.arguments"
                || k == "gen_ai.tool.call.result"
        })
    }));
}

#[test]
fn content_is_recorded_when_the_agent_file_asks() {
    let receiver = Receiver::start();
    let server = ModelServer::start(vec![says("Hello there.")]);
    let dir = tempfile::tempdir().unwrap();
    files(
        dir.path(),
        &server.base_url,
        &format!(
            "telemetry:\n  otlp: {}\n  capture_content: true\n",
            receiver.url
        ),
    );
    let done = iris(
        dir.path(),
        &["run", "--agent", "agent.yaml", "Say hello."],
        &[],
    );
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    let spans = receiver.spans();
    let chat = spans.iter().find(|s| s.name.starts_with("chat ")).unwrap();
    assert!(
        chat.attribute("gen_ai.input.messages")
            .unwrap()
            .contains("Say hello.")
    );
    assert!(
        chat.attribute("gen_ai.output.messages")
            .unwrap()
            .contains("Hello there.")
    );
    assert_eq!(
        chat.attribute("gen_ai.system_instructions"),
        Some("Delegate, then save.")
    );
    assert!(
        chat.attribute("gen_ai.tool.definitions")
            .unwrap()
            .contains("write_file")
    );
}
