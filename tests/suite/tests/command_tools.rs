//! Tools whose body is a program (`tools.command` in an agent file): the
//! arguments checked and sent as JSON on stdin, stdout as the result, a
//! failure's stderr in the error, and the same bounds and cleanup as
//! command hooks.

use std::path::Path;
use std::time::{Duration, Instant};

use iris::agent::Agent;
use iris::assembly::Assembly;
use iris::serde_json::{Value, json};
use iris::{RunId, ToolErrorKind, ToolResult, ToolUseBlock};

const AGENT: &str = r#"
name: programs
tools:
  command:
    - name: count_words
      description: Count the words of a text and say which is longest.
      command: [./count.sh]
      capabilities: [read_only]
      parameters:
        text: { type: string, description: The text to count }
        unit: { type: string, optional: true, enum: [words, lines], description: What to count }
    - name: echo_input
      description: Answer the arguments it was given, as text.
      command: [cat]
      output: text
      env: { GREETING: hello }
      input_schema:
        type: object
        properties: { note: { type: string, maxLength: 8 } }
        required: [note]
        additionalProperties: false
    - name: environment
      description: Report the run it serves and its own settings.
      command: [sh, -c, 'printf "%s %s" "$IRIS_RUN_ID" "$GREETING"']
      env: { GREETING: hello }
      output: text
    - name: fail
      description: Always fails, explaining why on stderr.
      command: [sh, -c, 'echo "the disk is full" >&2; exit 4']
    - name: linger
      description: Starts a child that outlives it, then sleeps.
      command: [sh, -c, 'sleep 30 & echo $! > child.pid; sleep 30']
      timeout: 300ms
    - name: flood
      description: Writes far more than a tool may.
      command: [sh, -c, 'yes flood | head -c 8000000']
permissions:
  other: allow
"#;

const COUNT: &str = r#"#!/bin/sh
# Reads the arguments as JSON and answers JSON.
input=$(cat)
printf '{"received": %s, "words": 3}' "$input"
"#;

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(dir.path().join("agent.yaml"), AGENT).expect("writable");
    let script = dir.path().join("count.sh");
    std::fs::write(&script, COUNT).expect("writable");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .expect("executable");
    }
    dir
}

async fn call(agent: &Agent, dir: &Path, tool: &str, arguments: Value) -> ToolResult {
    // Each call its own run: a run refuses a call id it has seen.
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let cx = agent
        .context_builder(dir, RunId::new(format!("run-{run}")))
        .expect("opens")
        .build();
    let outcome = agent
        .executor()
        .execute_one(ToolUseBlock::new("c-1", tool, arguments), &cx)
        .await;
    outcome.result().cloned().expect("the call ran")
}

#[tokio::test]
async fn a_program_answers_json_or_text_from_the_arguments_on_its_stdin() {
    let dir = workspace();
    let agent = Agent::from_path(dir.path().join("agent.yaml")).expect("assembles");
    let counted = call(&agent, dir.path(), "count_words", json!({"text": "a b c"})).await;
    assert!(!counted.is_error(), "{counted:?}");
    assert_eq!(
        counted.data(),
        Some(&json!({"received": {"text": "a b c"}, "words": 3}))
    );
    // Quotes and shell syntax arrive as data: no shell ever sees them.
    let tricky = json!({"note": "$(rm)'\""});
    let echoed = call(&agent, dir.path(), "echo_input", tricky.clone()).await;
    assert_eq!(echoed.text_content(), tricky.to_string());
    assert_eq!(echoed.data(), None, "configured as text");
    let environment = call(&agent, dir.path(), "environment", json!({})).await;
    let reported = environment.text_content();
    assert!(
        reported.starts_with("run-") && reported.ends_with(" hello"),
        "{reported}"
    );
    let definition = agent
        .registry()
        .resolve("count_words")
        .expect("registered")
        .definition_dyn()
        .clone();
    assert_eq!(
        definition.input_schema()["required"],
        json!(["text"]),
        "`optional` parameters are not required"
    );
    assert!(
        definition
            .capabilities()
            .contains(iris::definition::Capability::ReadOnly)
    );
}

#[tokio::test]
async fn arguments_that_break_the_schema_never_reach_the_program() {
    let dir = workspace();
    let agent = Agent::from_path(dir.path().join("agent.yaml")).expect("assembles");
    for (tool, arguments, expected) in [
        ("count_words", json!({"txt": "a"}), "unknown field `txt`"),
        ("count_words", json!({"text": 3}), "$.text"),
        (
            "count_words",
            json!({"text": "a", "unit": "pages"}),
            "$.unit",
        ),
        ("echo_input", json!({"note": "far too long"}), "$.note"),
    ] {
        let refused = call(&agent, dir.path(), tool, arguments.clone()).await;
        assert_eq!(
            refused.error_kind(),
            Some(ToolErrorKind::InvalidArguments),
            "{arguments}: {refused:?}"
        );
        assert!(
            refused.text_content().contains(expected),
            "{arguments}: {}",
            refused.text_content()
        );
    }
}

#[tokio::test]
async fn a_failing_slow_or_flooding_program_is_an_error_and_leaves_nothing_running() {
    let dir = workspace();
    let agent = Agent::from_path(dir.path().join("agent.yaml")).expect("assembles");
    let failed = call(&agent, dir.path(), "fail", json!({})).await;
    assert_eq!(failed.error_kind(), Some(ToolErrorKind::Execution));
    assert!(
        failed.text_content().contains("the disk is full")
            && failed.text_content().contains("exit status: 4"),
        "{}",
        failed.text_content()
    );

    let started = Instant::now();
    let slow = call(&agent, dir.path(), "linger", json!({})).await;
    assert_eq!(slow.error_kind(), Some(ToolErrorKind::Timeout), "{slow:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    let pid = std::fs::read_to_string(dir.path().join("child.pid")).expect("the child started");
    // Killed when the call ended; the kernel may take a moment to reap it.
    #[cfg(target_os = "linux")]
    {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !crate::support::process_gone(pid.trim()) {
            assert!(
                Instant::now() < deadline,
                "the program's child {pid} was left running"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    let flood = call(&agent, dir.path(), "flood", json!({})).await;
    assert_eq!(flood.error_kind(), Some(ToolErrorKind::Execution));
    assert!(
        flood.text_content().contains("wrote more than"),
        "{}",
        flood.text_content()
    );
}

#[test]
fn a_command_tool_with_problems_is_reported_at_its_key() {
    for (yaml, expected) in [
        (
            "name: a\ntools:\n  command:\n    - { name: t, description: d, command: [] }\n",
            "tools.command[0].command",
        ),
        (
            "name: a\ntools:\n  command:\n    - { name: t, description: d, command: [x], input_schema: {type: string} }\n",
            "must be a JSON Schema of `type: object`",
        ),
        (
            "name: a\ntools:\n  command:\n    - { name: t, description: d, command: [x], input_schema: {type: object}, parameters: {} }\n",
            "not both",
        ),
        (
            "name: a\ntools:\n  command:\n    - { name: t, description: d, command: [x], capabilities: [readonly] }\n",
            "readonly",
        ),
        (
            "name: a\ntools:\n  command:\n    - { name: t, description: d, command: [x], parameters: { p: { type: text } } }\n",
            "text",
        ),
    ] {
        let Err(error) = Assembly::builder()
            .build()
            .parse(yaml, Path::new("agent.yaml"))
        else {
            panic!("{yaml} assembled");
        };
        assert!(error.to_string().contains(expected), "{yaml}: {error}");
    }
}
