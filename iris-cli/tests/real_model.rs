//! `iris run` against a real model: llama.cpp's `llama-server` serving
//! SmolLM2-135M-Instruct on loopback (pinned, built once by
//! `tests/llama-server/install.sh`), spoken to through all three adapters
//! (`/v1/chat/completions`, `/v1/responses`, `/v1/messages`), streamed and
//! whole. What a model this small can be relied on for is asserted: that it
//! called the tool, that Iris ran it, that the tool's value is in the answer,
//! that every request was well formed (the server answered each), and that
//! the run ended within its limits; never its wording. Sampling is greedy
//! and the prompt cache off, so each prompt is answered the same way every
//! run.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

#[path = "support/llama.rs"]
mod llama;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use llama::LlamaServer;
use serde_json::Value;

/// The agent file: `provider`, streamed or not, with `tools` (YAML under
/// `tools:`) and `extra` top-level keys.
fn agent(dir: &Path, server: &LlamaServer, provider: &str, stream: bool, tools: &str, extra: &str) {
    // The profile names the server behind a Chat Completions endpoint only.
    let profile = if provider == "openai_chat" {
        "\n  profile: llama_cpp"
    } else {
        ""
    };
    let yaml = format!(
        "name: helper
instructions: Use the tools.
model:
  provider: {provider}
  model: smollm2-135m
  base_url: {base}
  max_tokens: 200
  stream: {stream}{profile}
tools:
{tools}
limits:
  max_steps: 4
{extra}",
        base = server.base_url,
    );
    std::fs::write(dir.join("agent.yaml"), yaml).unwrap();
}

const COUNT_WORDS: &str = "  command:
    - name: count_words
      description: Count the words of a text.
      command: [wc, -w]
      output: text
      capabilities: [read_only]
      parameters:
        text: { type: string, description: The text }";

fn iris(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iris"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        // No key of the developer's may reach the loopback server.
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The run's events, from `--jsonl`.
fn events(output: &Output) -> Vec<Value> {
    text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// The model's whole answer, from its text events.
fn answer(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["event"] == "model_text")
        .filter_map(|e| e["text"].as_str())
        .collect()
}

fn started<'a>(events: &'a [Value], tool: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["event"] == "tool_started" && e["tool"] == tool)
        .collect()
}

#[test]
fn a_command_tool_runs_through_every_adapter_streamed_and_whole() {
    let server = LlamaServer::start();
    for provider in ["openai_chat", "openai_responses", "anthropic"] {
        for stream in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            agent(dir.path(), &server, provider, stream, COUNT_WORDS, "");
            let run = iris(
                dir.path(),
                &[
                    "run",
                    "--agent",
                    "agent.yaml",
                    "How many words does 'one two three' have?",
                    "--jsonl",
                ],
            );
            let what = format!("{provider}, streamed: {stream}: {}", text(&run.stderr));
            assert_eq!(run.status.code(), Some(0), "{what}");
            let events = events(&run);
            // One call, or the same call twice in one answer (the model
            // copies its template's example of parallel calls at times).
            assert!(!started(&events, "count_words").is_empty(), "{what}");
            assert!(
                events
                    .iter()
                    .filter(|e| e["event"] == "tool_finished")
                    .all(|e| e["error_kind"].is_null()),
                "{what}: {events:?}"
            );
            // `wc -w` counted 3: the model's answer quotes the tool's value.
            assert!(answer(&events).contains('3'), "{what}: {events:?}");
            assert!(
                text(&run.stderr).contains("finished in 2 step(s)"),
                "{what}"
            );
        }
    }
}

#[test]
fn the_file_tools_read_what_is_there() {
    let server = LlamaServer::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("notes.txt"),
        "The meeting moved to Thursday at noon.\n",
    )
    .unwrap();
    agent(
        dir.path(),
        &server,
        "openai_chat",
        true,
        "  builtin: [file.read]",
        "",
    );
    let run = iris(
        dir.path(),
        &[
            "run",
            "--agent",
            "agent.yaml",
            "What does notes.txt say?",
            "--jsonl",
        ],
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let events = events(&run);
    assert!(!started(&events, "read_file").is_empty(), "{events:?}");
    assert!(answer(&events).contains("Thursday"), "{events:?}");
}

#[test]
fn several_calls_in_one_answer_all_run() {
    let server = LlamaServer::start();
    let dir = tempfile::tempdir().unwrap();
    // The tool hands its arguments back, so each call's number shows.
    let tools = "  command:
    - name: order_status
      description: Look up the status of one order by its number.
      command: [cat]
      output: text
      capabilities: [read_only, concurrency_safe]
      parameters:
        number: { type: integer, description: The order number }";
    agent(dir.path(), &server, "openai_chat", false, tools, "");
    let run = iris(
        dir.path(),
        &[
            "run",
            "--agent",
            "agent.yaml",
            "What is the status of orders 3 and 4?",
            "--jsonl",
        ],
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let events = events(&run);
    let calls = started(&events, "order_status");
    assert_eq!(calls.len(), 2, "{events:?}");
    // Both calls of the one answer ran, and each finished.
    let finished = events
        .iter()
        .filter(|e| e["event"] == "tool_finished" && e["error_kind"].is_null())
        .count();
    assert_eq!(finished, 2, "{events:?}");
}

#[test]
fn an_approval_pause_is_saved_and_resumed_against_the_real_server() {
    let server = LlamaServer::start();
    let dir = tempfile::tempdir().unwrap();
    agent(
        dir.path(),
        &server,
        "anthropic",
        false,
        "  builtin: [file.write]",
        "permissions:\n  write: ask\n",
    );
    let waiting = iris(
        dir.path(),
        &[
            "run",
            "--agent",
            "agent.yaml",
            "Write a note saying 'buy milk' to todo.txt.",
        ],
    );
    assert_eq!(waiting.status.code(), Some(4), "{}", text(&waiting.stderr));
    assert!(
        text(&waiting.stderr).contains("waiting: `write_file`"),
        "{}",
        text(&waiting.stderr)
    );
    let written = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|entry| entry.path().extension().is_some_and(|e| e == "txt"))
            .map(|entry| std::fs::read_to_string(entry.path()).unwrap())
            .collect::<Vec<_>>()
    };
    assert!(
        written().is_empty(),
        "nothing is written before the approval"
    );
    // Another process resumes the saved run, and approves.
    let resumed = iris(
        dir.path(),
        &[
            "run",
            "--agent",
            "agent.yaml",
            "--resume",
            "iris-run.json",
            "--approve",
        ],
    );
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    let files = written();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].to_lowercase().contains("milk"), "{files:?}");
}

/// A meeting, as the model reads it from a note: nested, each list and
/// text bounded, so the grammar the server builds from the schema ends.
#[derive(Debug, serde::Deserialize, iris_core::schemars::JsonSchema)]
#[schemars(crate = "iris_core::schemars")]
struct Meeting {
    /// The day it is on.
    #[schemars(length(max = 12))]
    day: String,
    /// Who comes.
    #[schemars(length(min = 1, max = 3))]
    attendees: Vec<Attendee>,
    /// Whether it is held online.
    #[allow(dead_code, reason = "its type is what the test checks")]
    online: bool,
}

/// One person at a meeting.
#[derive(Debug, serde::Deserialize, iris_core::schemars::JsonSchema)]
#[schemars(crate = "iris_core::schemars")]
struct Attendee {
    /// Their name.
    #[schemars(length(max = 16))]
    name: String,
}

const NOTE: &str = "Read this note and fill in the meeting: 'Thursday: Ada and Grace meet online.'";

#[test]
fn a_typed_output_comes_back_as_a_value_through_the_servers_grammar() {
    let server = LlamaServer::start();
    // Through `iris run`: the agent file names the schema, and the value is
    // printed as JSON.
    let dir = tempfile::tempdir().unwrap();
    let schema = iris_core::schema::input_schema_for::<Meeting>();
    let output = format!(
        "output:\n  name: meeting\n  retries: 1\n  schema: {}\n",
        serde_json::to_string(&schema).unwrap()
    );
    agent(
        dir.path(),
        &server,
        "openai_chat",
        true,
        "  builtin: []",
        &output,
    );
    let run = iris(
        dir.path(),
        &["run", "--agent", "agent.yaml", NOTE, "--jsonl"],
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let events = events(&run);
    let Some(run_output) = events.iter().find(|e| e["event"] == "run_output") else {
        panic!("no output: {events:?}");
    };
    let value = run_output["output"].clone();
    let meeting: Meeting = serde_json::from_value(value.clone()).unwrap();
    assert!(!meeting.attendees.is_empty(), "{value}");
    // The value streamed in as it was written.
    assert!(
        events.iter().any(|e| e["event"] == "output_partial"),
        "{events:?}"
    );

    // Through the library: a Rust type, on the same server.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let meeting: Meeting = runtime.block_on(async {
        let model = iris_model::OpenAiChat::new(
            "smollm2-135m",
            "",
            &server.base_url,
            std::time::Duration::from_secs(120),
        )
        .unwrap()
        .with_profile(iris_model::ServerProfile::LlamaCpp);
        let executor = iris_runtime::ToolExecutor::builder(iris_runtime::ToolRegistry::new())
            .build()
            .unwrap();
        let agent = iris_agent::Agent::builder(executor)
            .name("reader")
            .instructions("Answer with the meeting the note describes.")
            .build()
            .unwrap();
        let runner = iris_agent::AgentRunner::new(agent, model);
        let cx = iris_agent::RunContext::new(dir.path(), iris_core::RunId::new("typed"));
        runner.run_for(NOTE, &cx).await.unwrap()
    });
    assert!(meeting.attendees.len() <= 3, "{meeting:?}");
    assert!(meeting.day.chars().count() <= 12, "{meeting:?}");
    assert!(
        meeting
            .attendees
            .iter()
            .all(|a| a.name.chars().count() <= 16),
        "{meeting:?}"
    );
}
