//! The `iris` binary, run for real: its output, its JSON shapes and its
//! exit codes, on an agent file with the built-in file tools.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const AGENT: &str = "name: keeper
instructions: Keep the files tidy.
tools:
  builtin: [file.read, file.write, file.edit]
permissions:
  read_only: allow
  write: ask
";

fn iris(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iris"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("agent.yaml"), AGENT).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "first line\nsecond line\n").unwrap();
    dir
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(output)))
}

#[test]
fn list_prints_a_table_or_json() {
    let dir = workspace();
    let table = iris(dir.path(), &["list"]);
    assert_eq!(table.status.code(), Some(0), "{}", stderr(&table));
    let text = stdout(&table);
    assert!(text.starts_with("NAME"), "{text}");
    assert!(
        text.contains("read_file") && text.contains("read_only"),
        "{text}"
    );
    assert!(stderr(&table).contains("3 tool(s)"));

    let listed = json(&iris(
        dir.path(),
        &["list", "--json", "--agent", "agent.yaml"],
    ));
    assert_eq!(listed["format"], 1);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["edit_file", "read_file", "write_file"]);
    assert_eq!(listed["tools"][1]["capabilities"][0], "read_only");
}

#[test]
fn schema_shows_what_each_provider_receives() {
    let dir = workspace();
    let strict = iris(
        dir.path(),
        &["schema", "read_file", "--provider", "openai-strict"],
    );
    assert_eq!(strict.status.code(), Some(0), "{}", stderr(&strict));
    let tool: Value = serde_json::from_str(&stdout(&strict)).unwrap();
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["function"]["name"], "read_file");

    let anthropic = json(&iris(
        dir.path(),
        &["schema", "read_file", "--provider", "anthropic", "--json"],
    ));
    assert_eq!(anthropic["provider"], "anthropic");
    assert_eq!(anthropic["tool"]["name"], "read_file");
    assert!(anthropic["report"]["notes"].is_array());

    let misspelt = iris(dir.path(), &["schema", "red_file"]);
    assert_eq!(misspelt.status.code(), Some(2));
    assert!(
        stderr(&misspelt).contains("did you mean `read_file`?"),
        "{}",
        stderr(&misspelt)
    );
    let unknown = iris(dir.path(), &["schema", "read_file", "--provider", "cohere"]);
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
}

#[test]
fn call_runs_through_the_executor_with_its_exit_codes() {
    let dir = workspace();
    let read = iris(dir.path(), &["call", "read_file", "path=notes.txt"]);
    assert_eq!(read.status.code(), Some(0), "{}", stderr(&read));
    assert!(stdout(&read).contains("first line"), "{}", stdout(&read));

    // A write asks: without a decision it waits (4); denied, it is refused (3).
    let write = ["call", "write_file", "path=new.txt", "content=hello"];
    let waiting = iris(dir.path(), &write);
    assert_eq!(waiting.status.code(), Some(4), "{}", stderr(&waiting));
    assert!(
        stderr(&waiting).contains("--approve"),
        "{}",
        stderr(&waiting)
    );
    assert!(!dir.path().join("new.txt").exists());
    let denied = iris(dir.path(), &[&write[..], &["--deny"]].concat());
    assert_eq!(denied.status.code(), Some(3), "{}", stderr(&denied));
    let approved = iris(dir.path(), &[&write[..], &["--approve", "--json"]].concat());
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));
    assert_eq!(json(&approved)["outcome"], "ok");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new.txt")).unwrap(),
        "hello"
    );

    // The tool's own error (1), with one JSON error line on stderr.
    let missing = iris(
        dir.path(),
        &["call", "read_file", "path=absent.txt", "--json"],
    );
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
    assert_eq!(json(&missing)["error_kind"], "not_found");
    let line: Value = serde_json::from_str(stderr(&missing).trim()).unwrap();
    assert_eq!(line["error"]["code"], "tool_error");

    // Arguments the schema refuses, and a pair that is not one (2).
    let bad = iris(dir.path(), &["call", "read_file", "path:=7"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    let loose = iris(dir.path(), &["call", "read_file", "notes.txt"]);
    assert_eq!(loose.status.code(), Some(2));
    assert!(stderr(&loose).contains("key=text"), "{}", stderr(&loose));

    // Arguments from a file.
    std::fs::write(dir.path().join("args.json"), r#"{"path": "notes.txt"}"#).unwrap();
    let from_file = iris(
        dir.path(),
        &["call", "read_file", "--args-file", "args.json"],
    );
    assert_eq!(from_file.status.code(), Some(0), "{}", stderr(&from_file));
}

#[test]
fn check_says_how_the_model_takes_the_output_schema() {
    let dir = tempfile::tempdir().unwrap();
    let file = |model: &str| {
        format!(
            "name: clerk\nmodel:\n  provider: anthropic\n  model: {model}\noutput:\n  name: invoice\n  schema: {{type: object, properties: {{total: {{type: integer, minimum: 0}}}}, required: [total]}}\n"
        )
    };
    std::fs::write(
        dir.path().join("old.yaml"),
        file("claude-3-5-haiku-20241022"),
    )
    .unwrap();
    let old = iris(dir.path(), &["check", "--agent", "old.yaml"]);
    assert_eq!(old.status.code(), Some(0), "{}", stderr(&old));
    let said = stdout(&old);
    assert!(
        said.contains("claude-3-5-haiku-20241022 has no structured outputs")
            && said.contains("sent as a tool `invoice` the model must call"),
        "{said}"
    );
    assert!(!said.contains("at ``"), "{said}");

    std::fs::write(dir.path().join("new.yaml"), file("claude-sonnet-4-5")).unwrap();
    let new = iris(dir.path(), &["check", "--agent", "new.yaml"]);
    let said = stdout(&new);
    assert!(!said.contains("the model must call"), "{said}");
    assert!(said.contains("is not sent `minimum`"), "{said}");
}

#[test]
fn check_reports_every_problem_with_its_place() {
    let dir = workspace();
    let good = iris(dir.path(), &["check", "--agent", "agent.yaml"]);
    assert_eq!(good.status.code(), Some(0), "{}", stderr(&good));
    assert!(stdout(&good).contains("agent `keeper` assembles, with 3 tool(s)"));

    std::fs::write(
        dir.path().join("broken.yaml"),
        "name: broken\ntools:\n  builtin: [file.read]\npermissions: { write: maybe }\n",
    )
    .unwrap();
    let bad = iris(dir.path(), &["check", "--agent", "broken.yaml"]);
    assert_eq!(bad.status.code(), Some(5), "{}", stderr(&bad));
    assert!(
        stdout(&bad).contains(
            "broken.yaml:4:23: `permissions.write`: `maybe` is not one of `allow`, `ask`, `deny`"
        ),
        "{}",
        stdout(&bad)
    );
    assert!(
        stderr(&bad).contains("1 problem(s) in broken.yaml"),
        "{}",
        stderr(&bad)
    );
    // Three faults that do not depend on each other: an unknown key, a
    // value of the wrong type, a name nothing has. One run finds all three.
    std::fs::write(
        dir.path().join("typos.yaml"),
        "name: typos\ninstructons: Keep it tidy.\ntools:\n  builtin: [file.read]\n  functions: [tidy_up]\nlimits:\n  max_steps: forty\n",
    )
    .unwrap();
    let typos = iris(dir.path(), &["check", "--agent", "typos.yaml"]);
    assert_eq!(typos.status.code(), Some(5), "{}", stderr(&typos));
    let found: Vec<String> = stdout(&typos).lines().map(str::to_owned).collect();
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(
        found[0].starts_with(
            "typos.yaml:2:1: `instructons`: unknown key `instructons`; did you mean `instructions`?"
        ),
        "{found:#?}"
    );
    assert!(
        found[1].starts_with(
            "typos.yaml:5:15: `tools.functions[0]`: no `#[tool]` function is named `tidy_up`"
        ),
        "{found:#?}"
    );
    assert!(
        found[2].starts_with("typos.yaml:7:14: `limits.max_steps`: expected a whole number"),
        "{found:#?}"
    );
    let missing = iris(dir.path(), &["check", "--agent", "nowhere.yaml", "--json"]);
    assert_eq!(missing.status.code(), Some(6));
}

#[test]
fn help_fits_a_screen_and_usage_errors_exit_2() {
    let dir = workspace();
    let help = iris(dir.path(), &["--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(stdout(&help).lines().count() <= 24, "{}", stdout(&help));
    let nothing = iris(dir.path(), &[]);
    assert_eq!(nothing.status.code(), Some(2));
    let both = iris(dir.path(), &["list", "--agent", "agent.yaml", "--mcp", "x"]);
    assert_eq!(both.status.code(), Some(2));
    let empty = tempfile::tempdir().unwrap();
    let none = iris(empty.path(), &["list"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(stderr(&none).contains("no catalog"), "{}", stderr(&none));
}

#[test]
fn search_ranks_the_tools_for_an_intent() {
    let dir = workspace();
    let intent = "write a whole file, creating its folders";
    let ranked = iris(dir.path(), &["search", intent, "--json"]);
    assert_eq!(ranked.status.code(), Some(0), "{}", stderr(&ranked));
    let answer = json(&ranked);
    assert_eq!(answer["intent"], intent);
    assert_eq!(answer["candidates"][0]["name"], "write_file", "{answer}");
    assert!(
        answer["candidates"][0]["coverage"].as_f64().unwrap() > 0.5,
        "{answer}"
    );
    let table = iris(dir.path(), &["search", intent]);
    assert!(
        stdout(&table).starts_with("write_file"),
        "{}",
        stdout(&table)
    );
}

#[tokio::test]
async fn serve_is_one_mcp_server_over_stdio() {
    use iris_mcp::client::{McpClient, McpServerConfig};
    let dir = workspace();
    let agent = dir.path().join("agent.yaml").display().to_string();
    let config = McpServerConfig::stdio(
        "served",
        env!("CARGO_BIN_EXE_iris"),
        ["serve", "--agent", agent.as_str()].map(str::to_owned),
    );
    let client = McpClient::connect(config).await.unwrap();
    let mut names: Vec<String> = client.definitions().map(|d| d.name().to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "served__edit_file",
            "served__read_file",
            "served__write_file"
        ]
    );
    client.close();
}

/// A `tools/call` whose params are not a call's is answered -32602 over
/// stdio too, saying what is wrong (finding: -32601 "method not found", as
/// if the server could not call tools).
#[test]
fn serve_over_stdio_answers_a_malformed_call_with_invalid_params() {
    use std::io::{BufRead as _, Write as _};
    let dir = workspace();
    let mut child = Command::new(env!("CARGO_BIN_EXE_iris"))
        .args(["serve", "--agent", "agent.yaml"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file","arguments":[1]}}"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    let mut answers = std::collections::HashMap::new();
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let value: Value = serde_json::from_str(&line.unwrap()).unwrap();
        answers.insert(value["id"].as_u64().unwrap(), value);
        if answers.len() == 4 {
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    for (id, says) in [
        (2, "`name` must be the tool's name"),
        (3, "needs `params` naming the tool"),
        (4, "`arguments` must be an object"),
    ] {
        let error = &answers[&id]["error"];
        assert_eq!(error["code"], -32602, "{error}");
        assert!(error["message"].as_str().unwrap().contains(says), "{error}");
    }
}

#[test]
fn a_dry_run_says_what_a_call_would_meet_and_runs_nothing() {
    let dir = workspace();
    std::fs::write(
        dir.path().join("hooked.yaml"),
        "name: hooked
tools:
  builtin: [file.read, file.write]
hooks:
  - name: audit
    event: tool.before
    tools: [write_file]
    handler: { type: command, command: [\"cat\"] }
permissions: { read_only: allow, write: deny, tools: { write_file: ask } }
",
    )
    .unwrap();
    let args = |extra: &[&'static str]| {
        let mut args = vec![
            "call",
            "write_file",
            "path=new.txt",
            "content=hi",
            "--agent",
            "hooked.yaml",
            "--dry-run",
        ];
        args.extend_from_slice(extra);
        args
    };
    let explained = iris(dir.path(), &args(&["--explain"]));
    assert_eq!(explained.status.code(), Some(4), "{}", stderr(&explained));
    let text = stdout(&explained);
    assert!(
        text.starts_with("`write_file` would wait for approval"),
        "{text}"
    );
    assert!(text.contains("policy asks before this tool"), "{text}");
    assert!(
        text.contains("hook `audit` (tool.before): may deny it"),
        "{text}"
    );
    assert!(
        !dir.path().join("new.txt").exists(),
        "a dry run runs nothing"
    );

    let planned = json(&iris(dir.path(), &args(&["--json"])));
    assert_eq!(planned["would"], "wait_for_approval");
    assert_eq!(planned["plan"]["hooks"][0]["name"], "audit");
    assert_eq!(planned["plan"]["read_only"], false);

    let read = iris(
        dir.path(),
        &[
            "call",
            "read_file",
            "path=notes.txt",
            "--agent",
            "hooked.yaml",
            "--dry-run",
        ],
    );
    assert_eq!(read.status.code(), Some(0));
    assert_eq!(stdout(&read).trim(), "`read_file` would run");
    let wrong = iris(
        dir.path(),
        &[
            "call",
            "read_file",
            "pth=notes.txt",
            "--agent",
            "hooked.yaml",
            "--dry-run",
        ],
    );
    assert_eq!(wrong.status.code(), Some(2));
    assert!(stdout(&wrong).contains("would be refused: invalid arguments"));
    let explain_alone = iris(dir.path(), &["call", "read_file", "--explain"]);
    assert_eq!(
        explain_alone.status.code(),
        Some(2),
        "--explain needs --dry-run"
    );
}

#[test]
fn serve_refuses_an_open_address_without_auth_and_checks_the_auth_section() {
    let dir = workspace();
    // Another host could reach it, and nobody said who may call.
    let open = iris(
        dir.path(),
        &[
            "serve",
            "--agent",
            "agent.yaml",
            "--http",
            "0.0.0.0:0",
            "--workspace",
            ".",
        ],
    );
    assert_ne!(open.status.code(), Some(0));
    assert!(
        stderr(&open).contains("0.0.0.0:0 is not a loopback address"),
        "{}",
        stderr(&open)
    );

    // Every problem of an `auth:` section at once, each naming its key.
    std::fs::write(
        dir.path().join("guarded.yaml"),
        "name: guarded\ntools:\n  builtin: [file.read]\nauth:\n  audience: tools.example.com\n  issuers:\n    - issuer: https://idp.example.com\n      algorithms: [HS256]\n  rules:\n    - scopes: [files]\n",
    )
    .unwrap();
    let bad = iris(dir.path(), &["check", "--agent", "guarded.yaml"]);
    assert_eq!(bad.status.code(), Some(5), "{}", stderr(&bad));
    let found = stdout(&bad);
    assert!(
        found.contains(
            "guarded.yaml:5:3: `auth.audience`: `tools.example.com` is not an absolute http(s) URI"
        ),
        "{found}"
    );
    assert!(
        found.contains("`auth.issuers[0].algorithms`: `HS256` is never accepted"),
        "{found}"
    );
    assert!(found.contains("`auth.rules[0]`: grants no tool"), "{found}");

    std::fs::write(
        dir.path().join("guarded.yaml"),
        "name: guarded\ntools:\n  builtin: [file.read]\nauth:\n  audience: https://tools.example.com/mcp\n  issuers:\n    - issuer: https://idp.example.com\n  rules:\n    - scopes: [files]\n      capabilities: [read_only]\n",
    )
    .unwrap();
    let good = iris(dir.path(), &["check", "--agent", "guarded.yaml"]);
    assert_eq!(good.status.code(), Some(0), "{}", stdout(&good));
    let both = iris(
        dir.path(),
        &[
            "serve",
            "--agent",
            "guarded.yaml",
            "--http",
            "127.0.0.1:0",
            "--no-auth",
            "--workspace",
            ".",
        ],
    );
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
    assert!(
        stderr(&both).contains("remove one of them"),
        "{}",
        stderr(&both)
    );
}

#[test]
fn login_names_the_servers_and_what_a_server_lacks() {
    let dir = workspace();
    std::fs::write(
        dir.path().join("remote.yaml"),
        "name: remote\ntools:\n  mcp:\n    - name: docs\n      transport: { type: http, url: \"http://127.0.0.1:9/mcp\" }\n    - name: local\n      transport: { type: stdio, command: some-server }\n",
    )
    .unwrap();
    let unknown = iris(dir.path(), &["login", "wiki", "--agent", "remote.yaml"]);
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    assert!(
        stderr(&unknown).contains("names no MCP server `wiki`; it names: docs, local"),
        "{}",
        stderr(&unknown)
    );
    let no_section = iris(dir.path(), &["login", "docs", "--agent", "remote.yaml"]);
    assert_eq!(no_section.status.code(), Some(6), "{}", stderr(&no_section));
    assert!(
        stderr(&no_section).contains("has no `login:` section"),
        "{}",
        stderr(&no_section)
    );
    let process = iris(dir.path(), &["login", "local", "--agent", "remote.yaml"]);
    assert!(
        stderr(&process).contains("signing in is for servers reached over HTTP"),
        "{}",
        stderr(&process)
    );
}

#[test]
fn lint_reads_the_skills_strictly_and_finds_the_ones_that_shadow_each_other() {
    let dir = workspace();
    let skill = |folder: &str, text: &str| {
        let at = dir.path().join(".agents/skills").join(folder);
        std::fs::create_dir_all(&at).unwrap();
        std::fs::write(at.join("SKILL.md"), text).unwrap();
    };
    skill(
        "notes",
        "---\nname: Notes\ndescription: Write release notes from the merged changes of a release.\n---\nGroup by kind.\n",
    );
    skill(
        "changelog",
        "---\nname: changelog\ndescription: Write release notes from the merged changes of a release.\n---\nKeep a changelog.\n",
    );
    std::fs::write(
        dir.path().join("skilled.yaml"),
        "name: skilled\ntools:\n  builtin: [file.read]\nskills:\n  roots: [.agents/skills]\n",
    )
    .unwrap();
    let checked = iris(dir.path(), &["check", "--agent", "skilled.yaml"]);
    assert_eq!(checked.status.code(), Some(0), "{}", stdout(&checked));
    assert!(
        stdout(&checked).contains("notes/SKILL.md:2:7: warning: `name`: `Notes` may hold only"),
        "{}",
        stdout(&checked)
    );
    let linted = iris(dir.path(), &["lint", "--agent", "skilled.yaml"]);
    let said = stdout(&linted);
    assert!(
        said.contains("skill:Notes: warning[skill-format]")
            && said.contains("`Notes` may hold only lowercase ASCII letters"),
        "{said}"
    );
    assert!(
        said.contains("skill:changelog: warning[skill-shadowed]")
            && said.contains("with skill `Notes`'s"),
        "{said}"
    );
}

/// A parent's catalog is what its children can do too (finding: `check`,
/// `list` and `lint` on a parent said "0 tool(s)" and skipped the
/// children).
#[test]
fn check_and_list_show_a_parents_child_agents_and_their_tools() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("lead.yaml"),
        "name: lead\ninstructions: Delegate.\nagents:\n  - name: keeper\n    description: Keeps the files tidy.\n    file: agent.yaml\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("agent.yaml"), AGENT).unwrap();

    let checked = iris(dir.path(), &["check", "--agent", "lead.yaml"]);
    assert_eq!(checked.status.code(), Some(0), "{}", stderr(&checked));
    assert!(
        stdout(&checked).contains("with 0 tool(s) and 1 child agent(s): `keeper` (3 tool(s))"),
        "{}",
        stdout(&checked)
    );

    let listed = iris(dir.path(), &["list", "--agent", "lead.yaml"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let table = stdout(&listed);
    assert!(table.contains("keeper"), "{table}");
    assert!(
        table.contains("its tools: edit_file, read_file, write_file"),
        "{table}"
    );
    assert!(
        stderr(&listed).contains("0 tool(s), 1 child agent(s) with 3 tool(s) of their own"),
        "{}",
        stderr(&listed)
    );

    let json = iris(dir.path(), &["list", "--agent", "lead.yaml", "--json"]);
    let value: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["agents"][0]["name"], "keeper");
    assert_eq!(value["agents"][0]["tools"].as_array().unwrap().len(), 3);

    // `lint` lints the children's tools as theirs.
    let lint = iris(dir.path(), &["lint", "--agent", "lead.yaml", "--json"]);
    let value: Value = serde_json::from_slice(&lint.stdout).unwrap();
    assert_eq!(value["tools"], 3, "{value}");
    let named: Vec<&str> = value["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["tool"].as_str())
        .collect();
    assert!(named.iter().all(|t| t.starts_with("keeper/")), "{named:?}");
}

/// Callers over the network get the file tools only in a folder the
/// operator names; the agent's own file is never one of their files.
#[test]
fn serving_over_http_names_its_workspace_and_the_agent_file_is_never_a_tools_file() {
    let dir = workspace();
    let unnamed = iris(
        dir.path(),
        &["serve", "--agent", "agent.yaml", "--http", "127.0.0.1:0"],
    );
    assert_eq!(unnamed.status.code(), Some(2), "{}", stderr(&unnamed));
    assert!(
        stderr(&unnamed).contains("--workspace DIR"),
        "{}",
        stderr(&unnamed)
    );
    let read = iris(
        dir.path(),
        &[
            "call",
            "--agent",
            "agent.yaml",
            "read_file",
            "path=agent.yaml",
        ],
    );
    let text = format!("{}{}", stdout(&read), stderr(&read));
    assert!(
        text.contains("it is the file of agent `keeper`, which the file tools never read or write"),
        "{text}"
    );
    assert!(!text.contains("Keep the files tidy"), "{text}");
    let notes = iris(
        dir.path(),
        &[
            "call",
            "--agent",
            "agent.yaml",
            "read_file",
            "path=notes.txt",
        ],
    );
    assert!(stdout(&notes).contains("first line"), "{}", stdout(&notes));
}

/// A parent's children are served as tools that run them, with their
/// model or their parent's: `serve` says which, and refuses a child that
/// no model can run, naming it (finding: a parent with no tool of its own
/// served `ask_question` and `activate_skill` alone, without a word).
#[test]
fn serve_serves_a_parents_children_or_says_why_it_cannot() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("lead.yaml"),
        "name: lead\ninstructions: Delegate.\nagents:\n  - name: keeper\n    description: Keeps the files tidy.\n    file: agent.yaml\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("agent.yaml"), AGENT).unwrap();
    let refused = iris(dir.path(), &["serve", "--agent", "lead.yaml"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains("child agent `keeper` names no model and its parent none either"),
        "{said}"
    );

    // With a model the child is served beside the parent's own tools.
    std::fs::write(
        dir.path().join("lead.yaml"),
        format!("{AGENT}model:\n  provider: openai_chat\n  model: local\n  base_url: http://127.0.0.1:9/v1\nagents:\n  - name: keeper\n    description: Keeps the files tidy.\n    file: agent.yaml\n"),
    )
    .unwrap();
    let said = serve_says(
        dir.path(),
        &[
            "serve",
            "--agent",
            "lead.yaml",
            "--http",
            "127.0.0.1:0",
            "--workspace",
            ".",
        ],
    );
    assert!(said.contains("serving MCP at"), "{said}");
    assert!(
        said.contains("serving the child agents `keeper` as tools"),
        "{said}"
    );
}

/// The first lines `iris serve` writes on standard error before it is
/// stopped (it serves until killed).
fn serve_says(dir: &Path, args: &[&str]) -> String {
    use std::io::{BufRead as _, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_iris"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (lines, heard) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut said = String::new();
    while let Ok(line) = heard.recv_timeout(std::time::Duration::from_secs(5)) {
        said.push_str(&line);
        said.push('\n');
        if line.contains("serving MCP at") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    said
}

/// `serve --http` says where it listens, and a server without
/// authentication on an address other hosts can reach says so at every
/// start (the binary's warnings reach standard error).
#[test]
fn serving_over_http_says_where_and_warns_when_open_to_anyone() {
    let dir = workspace();
    let said = serve_says(
        dir.path(),
        &[
            "serve",
            "--agent",
            "agent.yaml",
            "--http",
            "127.0.0.1:0",
            "--workspace",
            ".",
        ],
    );
    assert!(said.contains("serving MCP at http://127.0.0.1:"), "{said}");
    assert!(!said.contains("without authentication"), "{said}");
    let open = serve_says(
        dir.path(),
        &[
            "serve",
            "--agent",
            "agent.yaml",
            "--http",
            "0.0.0.0:0",
            "--no-auth",
            "--workspace",
            ".",
        ],
    );
    assert!(open.contains("WARN"), "{open}");
    assert!(open.contains("without authentication"), "{open}");
    assert!(open.contains("serving MCP at"), "{open}");
}
