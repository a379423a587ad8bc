//! `iris run`, for real: the binary against a model endpoint on loopback
//! that answers from a script; a finished task, JSON Lines events, a run
//! that waits, is saved and resumed in another process, and an approval
//! asked through a real terminal.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

#[path = "support/http.rs"]
mod http;
#[path = "support/model.rs"]
mod model;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use model::{ModelServer, calls, says, streams};
use serde_json::{Value, json};

fn agent(dir: &Path, base_url: &str) {
    agent_streaming(dir, base_url, false);
}

fn agent_streaming(dir: &Path, base_url: &str, stream: bool) {
    let yaml = format!(
        "name: scribe
instructions: Write what you are asked to.
model:
  provider: openai_chat
  model: scripted
  base_url: {base_url}
  api_key_env: SCRIPTED_API_KEY
  stream: {stream}
tools:
  builtin: [file.write]
  command:
    - name: count_words
      description: Count the words of a text.
      command: [wc, -w]
      output: text
      capabilities: [read_only]
      parameters:
        text: {{ type: string, description: The text }}
permissions:
  write: ask
"
    );
    std::fs::write(dir.join("agent.yaml"), yaml).unwrap();
}

fn iris(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iris"))
        .args(args)
        .current_dir(dir)
        .env("SCRIPTED_API_KEY", "sk-test")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_task_runs_to_its_answer_and_streams_events_as_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![
        calls("count_words", &json!({"text": "one two three"})),
        says("It has 3 words."),
    ]);
    agent(dir.path(), &server.base_url);
    let done = iris(
        dir.path(),
        &[
            "run",
            "--agent",
            "agent.yaml",
            "How many words in 'one two three'?",
        ],
    );
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    assert_eq!(text(&done.stdout).trim(), "It has 3 words.");
    assert!(
        text(&done.stderr).contains("finished in 2 step(s)"),
        "{}",
        text(&done.stderr)
    );
    let requests = server.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    let tool_answer = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert_eq!(tool_answer["content"].as_str().unwrap().trim(), "3");

    let server = ModelServer::start(vec![
        calls("count_words", &json!({"text": "a b"})),
        says("Two."),
    ]);
    agent(dir.path(), &server.base_url);
    let streamed = iris(
        dir.path(),
        &["run", "--agent", "agent.yaml", "Count 'a b'", "--jsonl"],
    );
    assert_eq!(
        streamed.status.code(),
        Some(0),
        "{}",
        text(&streamed.stderr)
    );
    let events: Vec<Value> = text(&streamed.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    for expected in [
        "run_started",
        "tool_started",
        "tool_finished",
        "run_finished",
    ] {
        assert!(kinds.contains(&expected), "{kinds:?}");
    }
}

#[test]
fn a_run_that_waits_is_saved_and_resumed_by_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![
        calls(
            "write_file",
            &json!({"path": "poem.txt", "content": "roses\n"}),
        ),
        says("Written."),
    ]);
    agent(dir.path(), &server.base_url);
    let waiting = iris(
        dir.path(),
        &[
            "run",
            "--agent",
            "agent.yaml",
            "Write a poem",
            "--save",
            "paused.json",
        ],
    );
    assert_eq!(waiting.status.code(), Some(4), "{}", text(&waiting.stderr));
    assert!(
        text(&waiting.stderr).contains("--resume paused.json"),
        "{}",
        text(&waiting.stderr)
    );
    assert!(
        !dir.path().join("poem.txt").exists(),
        "nothing ran before the approval"
    );

    let denied_copy = dir.path().join("copy.json");
    std::fs::copy(dir.path().join("paused.json"), &denied_copy).unwrap();
    let resumed = iris(
        dir.path(),
        &[
            "run",
            "--agent",
            "agent.yaml",
            "--resume",
            "paused.json",
            "--approve",
        ],
    );
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    assert_eq!(text(&resumed.stdout).trim(), "Written.");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("poem.txt")).unwrap(),
        "roses\n"
    );

    // The same pause again, from the copy saved before the first resume:
    // the store refuses it, and the write does not run twice (finding: the
    // same expense was filed twice, exit 0 both times).
    std::fs::write(dir.path().join("poem.txt"), "kept\n").unwrap();
    let again = iris(
        dir.path(),
        &[
            "run",
            "--agent",
            "agent.yaml",
            "--resume",
            "copy.json",
            "--approve",
        ],
    );
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    assert!(
        text(&again.stderr).contains("finished"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("poem.txt")).unwrap(),
        "kept\n",
        "the approved write ran once"
    );
    assert!(
        dir.path().join(".iris/runs.db").is_file(),
        "kept in the store"
    );

    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"not\": \"a run\"}").unwrap();
    let refused = iris(
        dir.path(),
        &[
            "run",
            "--agent",
            "agent.yaml",
            "--resume",
            "broken.json",
            "--approve",
        ],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("is not a saved run"));
}

#[test]
fn an_approval_is_asked_on_a_real_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![
        calls(
            "write_file",
            &json!({"path": "yes.txt", "content": "approved\n"}),
        ),
        says("Done."),
    ]);
    agent(dir.path(), &server.base_url);
    // `script` gives the command a pseudo-terminal: stdin and stderr are a
    // terminal to it, and what is typed arrives through the terminal.
    let iris = env!("CARGO_BIN_EXE_iris");
    let mut terminal = Command::new("script")
        .args([
            "-qec",
            &format!("{iris} run 'Write yes.txt' --agent agent.yaml"),
            "/dev/null",
        ])
        .current_dir(dir.path())
        .env("SCRIPTED_API_KEY", "sk-test")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Typed ahead: the terminal keeps it until the question reads it.
    terminal.stdin.take().unwrap().write_all(b"y\n").unwrap();
    let output = terminal.wait_with_output().unwrap();
    let shown = text(&output.stdout);
    assert!(output.status.success(), "{shown}{}", text(&output.stderr));
    assert!(shown.contains("`write_file` wants to run"), "{shown}");
    assert!(shown.contains("approve? [y]es / [n]o"), "{shown}");
    assert!(shown.contains("Done."), "{shown}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("yes.txt")).unwrap(),
        "approved\n"
    );
}

#[test]
fn a_streamed_answer_is_printed_as_it_arrives_and_whole() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![streams(&["Roses ", "are ", "red."])]);
    agent_streaming(dir.path(), &server.base_url, true);
    let done = iris(
        dir.path(),
        &["run", "--agent", "agent.yaml", "A line of a poem"],
    );
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    assert_eq!(text(&done.stdout), "Roses are red.\n");
    assert_eq!(server.requests.lock().unwrap()[0]["stream"], true);

    let server = ModelServer::start(vec![streams(&["Roses ", "are ", "red."])]);
    agent_streaming(dir.path(), &server.base_url, true);
    let events = iris(
        dir.path(),
        &[
            "run",
            "--agent",
            "agent.yaml",
            "A line of a poem",
            "--jsonl",
        ],
    );
    let pieces: Vec<String> = text(&events.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|e| e["event"] == "model_text")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(pieces.concat(), "Roses are red.");
    assert!(pieces.len() >= 2, "streamed in pieces: {pieces:?}");
}

#[test]
fn an_answer_cut_off_by_its_token_limit_says_so_and_is_not_a_success() {
    let dir = tempfile::tempdir().unwrap();
    let mut cut = says("The three words are one, two and");
    cut["choices"][0]["finish_reason"] = json!("length");
    let server = ModelServer::start(vec![cut.clone(), cut]);
    agent(dir.path(), &server.base_url);
    let ended = iris(dir.path(), &["run", "--agent", "agent.yaml", "List them."]);
    assert_eq!(ended.status.code(), Some(10), "{}", text(&ended.stderr));
    // What the model wrote is shown, and said to be cut.
    assert_eq!(
        text(&ended.stdout).trim(),
        "The three words are one, two and"
    );
    assert!(
        text(&ended.stderr).contains("cut off by its token limit")
            && text(&ended.stderr).contains("max_tokens"),
        "{}",
        text(&ended.stderr)
    );
    let lines = iris(
        dir.path(),
        &["run", "--agent", "agent.yaml", "List them.", "--jsonl"],
    );
    assert_eq!(lines.status.code(), Some(10), "{}", text(&lines.stderr));
    let last: Value = serde_json::from_str(text(&lines.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "run_cut_off");
    assert_eq!(last["text"], "The three words are one, two and");
    let error: Value = serde_json::from_str(text(&lines.stderr).lines().last().unwrap()).unwrap();
    assert_eq!(error["error"]["code"], "incomplete");
}

#[test]
fn a_model_that_cannot_be_reached_ends_with_the_unreachable_exit() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    agent(dir.path(), &format!("http://127.0.0.1:{port}/v1"));
    let ended = iris(dir.path(), &["run", "--agent", "agent.yaml", "Hello"]);
    assert_eq!(ended.status.code(), Some(6), "{}", text(&ended.stderr));
    assert!(
        text(&ended.stderr).contains("could not be reached"),
        "{}",
        text(&ended.stderr)
    );
}

/// Questions answered from the command line are held to the question: a
/// label that was not offered and an answer for an item that does not
/// wait are refused (findings: both were sent or dropped silently), and a
/// run kept in the store resumes by its id.
#[test]
fn answers_must_fit_the_question_that_waits_and_a_run_resumes_by_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let question = json!({"questions": [{
        "question": "Which database?", "header": "Database",
        "options": ["Postgres", "SQLite"], "multi_select": false
    }]});
    let server = ModelServer::start(vec![
        calls("ask_question", &question),
        says("SQLite it is."),
    ]);
    agent(dir.path(), &server.base_url);
    let waiting = iris(
        dir.path(),
        &["run", "--agent", "agent.yaml", "Pick one", "--questions"],
    );
    assert_eq!(waiting.status.code(), Some(4), "{}", text(&waiting.stderr));
    let saved: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("iris-run.json")).unwrap()).unwrap();
    let run_id = saved["run_id"].as_str().unwrap().to_owned();
    let resume = |answer: &str| {
        iris(
            dir.path(),
            &[
                "run",
                "--agent",
                "agent.yaml",
                "--resume",
                &run_id,
                "--answer",
                answer,
            ],
        )
    };

    let misspelled = resume("call_1=Postgress");
    assert_eq!(
        misspelled.status.code(),
        Some(2),
        "{}",
        text(&misspelled.stderr)
    );
    assert!(
        text(&misspelled.stderr).contains("`Postgress` is not an option"),
        "{}",
        text(&misspelled.stderr)
    );
    let stray = resume("q9=SQLite");
    assert_eq!(stray.status.code(), Some(2), "{}", text(&stray.stderr));
    assert!(
        text(&stray.stderr).contains("names no item that waits"),
        "{}",
        text(&stray.stderr)
    );

    let answered = resume("call_1=sqlite");
    assert_eq!(
        answered.status.code(),
        Some(0),
        "{}",
        text(&answered.stderr)
    );
    assert_eq!(text(&answered.stdout).trim(), "SQLite it is.");
    let again = resume("call_1=SQLite");
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    assert!(
        text(&again.stderr).contains("nothing to resume"),
        "{}",
        text(&again.stderr)
    );
}

/// A host that mounts the command line under its own binary's name sees
/// that name in every hint (finding: the hints said `iris`).
#[test]
fn hints_name_the_binary_the_command_line_runs_as() {
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("support-desk");
    std::fs::copy(env!("CARGO_BIN_EXE_iris"), &own).unwrap();
    agent(dir.path(), "http://127.0.0.1:9/v1");
    let output = Command::new(&own)
        .args(["run", "--agent", "agent.yaml"])
        .current_dir(dir.path())
        .env("SCRIPTED_API_KEY", "sk-test")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    let said = text(&output.stderr);
    assert!(said.starts_with("support-desk: "), "{said}");
    assert!(said.contains("`support-desk run \""), "{said}");
    assert!(!said.contains("iris"), "{said}");
}

/// A run can be tried without a provider: `--script FILE` answers for the
/// model (finding: trying `run` needed a fake server), and a bad script
/// says what is wrong with it.
#[test]
fn a_script_answers_for_the_model() {
    let dir = tempfile::tempdir().unwrap();
    agent(dir.path(), "http://127.0.0.1:9/v1");
    std::fs::write(
        dir.path().join("script.json"),
        r#"[
            {"calls": [{"name": "write_file", "input": {"path": "poem.txt", "content": "roses\n"}}]},
            {"text": "Written."}
        ]"#,
    )
    .unwrap();
    let ran = iris(
        dir.path(),
        &[
            "run",
            "--agent",
            "agent.yaml",
            "Write a poem",
            "--script",
            "script.json",
            "--approve",
        ],
    );
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran.stderr));
    assert_eq!(text(&ran.stdout).trim(), "Written.");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("poem.txt")).unwrap(),
        "roses\n"
    );

    std::fs::write(dir.path().join("bad.json"), r#"[{"say": "hi"}]"#).unwrap();
    let bad = iris(
        dir.path(),
        &["run", "--agent", "agent.yaml", "Go", "--script", "bad.json"],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
    assert!(
        text(&bad.stderr).contains("is not a JSON list of answers"),
        "{}",
        text(&bad.stderr)
    );
}

/// `--budget` bounds a run, says which bound ended it and keeps its state;
/// a run within its budget prints what it spent.
#[test]
fn a_budget_bounds_the_run_and_its_spend_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    agent(dir.path(), "http://127.0.0.1:9/v1");
    std::fs::write(
        dir.path().join("script.json"),
        r#"[
            {"calls": [{"name": "read_file", "input": {"path": "agent.yaml"}}]},
            {"text": "Read."}
        ]"#,
    )
    .unwrap();
    let run = |budget: &str| {
        iris(
            dir.path(),
            &[
                "run",
                "--agent",
                "agent.yaml",
                "Read it",
                "--script",
                "script.json",
                "--budget",
                budget,
            ],
        )
    };
    let over = run("requests=1");
    assert_eq!(over.status.code(), Some(10), "{}", text(&over.stderr));
    let said = text(&over.stderr);
    assert!(
        said.contains("the run's `requests` budget is spent"),
        "{said}"
    );
    assert!(said.contains("spent 1 request(s)"), "{said}");

    let within = run("requests=5, tool_calls=3");
    assert_eq!(within.status.code(), Some(0), "{}", text(&within.stderr));
    assert!(
        text(&within.stderr).contains("spent: 2 request(s)"),
        "{}",
        text(&within.stderr)
    );

    let unpriced = run("usd=0.10");
    assert_eq!(
        unpriced.status.code(),
        Some(2),
        "{}",
        text(&unpriced.stderr)
    );
    assert!(
        text(&unpriced.stderr).contains("budget.prices"),
        "{}",
        text(&unpriced.stderr)
    );

    let wrong = run("dollars=1");
    assert_eq!(wrong.status.code(), Some(2), "{}", text(&wrong.stderr));
    assert!(
        text(&wrong.stderr).contains("the keys are tokens"),
        "{}",
        text(&wrong.stderr)
    );
}
