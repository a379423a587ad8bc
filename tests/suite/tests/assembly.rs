//! Agents assembled from YAML: every key, names found in the catalog across
//! crates or listed by hand, and the exact text of every kind of error.

use std::fmt::Write as _;
use std::path::Path;

use iris::agent::Agent;
use iris::assembly::{Assembly, AssemblyError};
use iris::hooks::HookFactory as _;
use iris::hooks::{AfterAnswer, Hook, HookInput};
use iris::middleware::MiddlewareError;
use iris::serde_json::json;
use iris::{Next, RunId, ToolCall, ToolResult, ToolUseBlock};

/// Return twice an integer.
#[iris::tool(read_only, concurrency_safe)]
fn double(
    /// The integer to double.
    value: i64,
) -> i64 {
    value * 2
}

/// Return the cube of an integer.
#[iris::tool(read_only)]
fn cube(
    /// The integer to cube.
    value: i64,
) -> i64 {
    value * value * value
}

/// Two functions answering to one name: only their paths tell them apart.
mod first {
    /// Answer `pong`.
    #[iris::tool(read_only)]
    pub(super) fn ping() -> &'static str {
        "pong"
    }
}

mod second {
    /// Answer `pong` too.
    #[iris::tool(read_only)]
    pub(super) fn ping() -> &'static str {
        "pong"
    }
}

/// Adds a sentence after a tool's result.
#[iris::hook_factory]
fn create_feedback(
    /// The sentence to add.
    text: String,
    /// How many times to say it.
    #[serde(default = "once")]
    times: u8,
) -> Hook {
    let text = vec![text; usize::from(times)].join(" ");
    Hook::after(move |_input: &HookInput| AfterAnswer::feedback(&text))
}

fn once() -> u8 {
    1
}

/// Counts finished runs into nothing: a run hook made by a factory.
#[iris::hook_factory]
fn create_run_log() -> Hook {
    Hook::run(|_input: &HookInput| {})
}

/// Adds how long the rest of the stack took to the result's stats.
#[iris::middleware]
async fn timing(call: ToolCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
    let started = std::time::Instant::now();
    let result = next.run(call).await?;
    Ok(result.with_stat("wrapped_seconds", started.elapsed().as_secs_f64()))
}

/// Times every call.
#[iris::middleware_factory]
fn create_timing() -> Timing {
    Timing
}

const ORIGIN: &str = "agents/agent.yaml";

/// The error of `yaml`, assembled from the catalog at a fixed origin.
fn error_of(yaml: &str) -> AssemblyError {
    match Assembly::from_catalog().parse(yaml, Path::new(ORIGIN)) {
        Ok(agent) => panic!("assembled {agent:?}"),
        Err(err) => err,
    }
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the temporary folder is writable");
    path
}

/// The tools of the every-key file, `cube` deferred behind `tool_search`.
fn check_tools_and_deferral(agent: &Agent) -> iris::discovery::ToolRequest {
    let registry = agent.registry();
    for tool in ["read_file", "write_file", "double", "cube", "tool_search"] {
        assert!(registry.resolve(tool).is_some(), "{tool}");
    }
    let cube = registry.resolve("cube").expect("cube");
    assert_eq!(
        cube.definition_dyn().exposure(),
        iris::definition::Exposure::Deferred
    );
    let discovery = agent.discovery().expect("deferral needs discovery");
    let request = discovery.request(&registry.view(), &RunId::new("r"));
    let offered: Vec<&str> = request
        .offered
        .iter()
        .map(iris::definition::ToolName::as_str)
        .collect();
    assert!(
        offered.contains(&"double") && !offered.contains(&"cube"),
        "{offered:?}"
    );
    request
}

#[tokio::test]
async fn every_key_assembles() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    write(dir.path(), "prompt.md", "Keep the numbers right.");
    let file = write(
        dir.path(),
        "agent.yaml",
        r#"
name: every-key
instructions_file: prompt.md
model:
  provider: openai_chat
  model: gpt-4.1-mini
  base_url: http://127.0.0.1:9/v1
  api_key_env: IRIS_TEST_API_KEY
  temperature: 0.2
  max_tokens: 400
tools:
  builtin: [file.read, file.write]
  functions: [double, "suite::assembly::cube"]
  deferred: [cube]
hooks:
  - name: explain
    event: tool.after
    tools: [double]
    timeout: 2s
    handler: { type: factory, factory: create_feedback, options: { text: "Checked.", times: 2 } }
  - name: audit
    event: tool.before
    tools: [write_file]
    handler: { type: command, command: ["echo", "{}"], timeout: 2s, env: { AUDIT: "on" }, cwd: "." }
  - name: log
    event: run.finished
    handler: { type: factory, factory: create_run_log }
middleware:
  tools:
    - factory: create_timing
      options: {}
permissions:
  read_only: allow
  write: ask
  exec: deny
  other: ask
  tools: { write_file: allow }
limits: { max_steps: 12, max_concurrency: 4, timeout: 60s, max_result_chars: 30000 }
context_policy: { enabled: true, deferred_tools: true }
"#,
    );
    let agent = Agent::from_path(&file).expect("every key assembles");
    assert_eq!(agent.name(), "every-key");
    assert_eq!(agent.instructions(), Some("Keep the numbers right."));
    let model = agent.model().expect("a model");
    assert_eq!(model.model, "gpt-4.1-mini");
    assert_eq!(model.max_tokens, Some(400));
    assert_eq!(agent.max_steps(), Some(12));
    let request = check_tools_and_deferral(&agent);

    let cx = agent
        .context_builder(dir.path(), RunId::new("r"))
        .expect("the workspace opens")
        .offered(request.offered.clone())
        .build();
    let executor = agent.executor();
    executor.start_run(&cx).await;
    let outcome = executor
        .execute_one(
            ToolUseBlock::new("double-1", "double", json!({"value": 4})),
            &cx,
        )
        .await;
    let result = outcome.result().expect("read-only calls are allowed");
    let text = result.text_content();
    assert!(text.starts_with('8'), "{text}");
    assert!(text.contains("Checked. Checked."), "{text}");
    assert!(result.stats().contains_key("wrapped_seconds"));
    // `write_file` is allowed by its own rule, past the `write: ask` class rule.
    let written = executor
        .execute_one(
            ToolUseBlock::new(
                "w-1",
                "write_file",
                json!({"path": "out.txt", "content": "hi"}),
            ),
            &cx,
        )
        .await;
    let written = written.result().expect("write_file is allowed by name");
    assert_eq!(written.error_kind(), None, "{}", written.text_content());
    executor.finish_run(&cx).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).expect("written"),
        "hi"
    );
}

/// A hook's `tools` names a built-in tool as the model calls it.
#[tokio::test]
async fn a_hook_filters_a_builtin_tool_by_its_call_name() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    write(dir.path(), "notes.txt", "one\n");
    let file = write(
        dir.path(),
        "agent.yaml",
        r#"
name: reader
tools: { builtin: [file.read], functions: [double] }
hooks:
  - name: remind
    event: tool.after
    tools: [read_file]
    handler: { type: factory, factory: create_feedback, options: { text: "Quote the file." } }
"#,
    );
    let agent = Agent::from_path(&file).expect("assembles");
    let cx = agent
        .context_builder(dir.path(), RunId::new("r"))
        .expect("opens")
        .build();
    let read = agent
        .executor()
        .execute_one(
            ToolUseBlock::new("r-1", "read_file", json!({"path": "notes.txt"})),
            &cx,
        )
        .await;
    assert!(
        read.result()
            .expect("allowed")
            .text_content()
            .contains("Quote the file.")
    );
    let doubled = agent
        .executor()
        .execute_one(ToolUseBlock::new("s-1", "double", json!({"value": 3})), &cx)
        .await;
    assert!(
        !doubled
            .result()
            .expect("allowed")
            .text_content()
            .contains("Quote")
    );
}

/// A tool and a factory from another library crate of the workspace are
/// found by name and by path.
#[tokio::test]
async fn names_from_another_crate_are_found() {
    assert_eq!(iris_test_factories::linked(), "iris-test-factories");
    let yaml = r#"
name: cross-crate
tools: { functions: [iris_test_factories::reverse_text] }
hooks:
  - name: refuse
    event: tool.before
    handler: { type: factory, factory: create_refusal, options: { reason: "read-only day" } }
"#;
    let agent = Assembly::from_catalog()
        .parse(yaml, Path::new(ORIGIN))
        .expect("found across crates");
    let cx = agent
        .context_builder(".", RunId::new("r"))
        .expect("opens")
        .build();
    let outcome = agent
        .executor()
        .execute_one(
            ToolUseBlock::new("c-1", "reverse_text", json!({"text": "abc"})),
            &cx,
        )
        .await;
    let result = outcome.result().expect("denied by the hook, not held");
    assert!(
        result.text_content().contains("read-only day"),
        "{}",
        result.text_content()
    );
}

/// Hosts that want no link-time collection list names by hand.
#[test]
fn a_hand_made_list_serves_as_well() {
    let assembly = Assembly::builder()
        .tool(Double)
        .hook_factory("explain", CreateFeedback)
        .middleware_factory("timing", CreateTiming)
        .build();
    let yaml = r#"
name: by-hand
tools: { functions: [double] }
hooks: [ { name: e, event: tool.after, handler: { type: factory, factory: explain, options: { text: "ok" } } } ]
middleware: { tools: [ { factory: timing } ] }
"#;
    assembly
        .parse(yaml, Path::new(ORIGIN))
        .expect("the listed names assemble");
    let err = assembly
        .parse("name: x\ntools: { functions: [cube] }\n", Path::new(ORIGIN))
        .expect_err("cube is not listed");
    assert!(
        err.to_string()
            .contains("no `#[tool]` function is named `cube`"),
        "{err}"
    );
}

#[test]
fn factory_options_are_typed_and_documented() {
    let schema = CreateFeedback.options_schema();
    insta::assert_json_snapshot!("assembly_options_create_feedback", schema);
    assert_eq!(
        schema["properties"]["text"]["description"],
        "The sentence to add."
    );
    assert_eq!(schema["required"], json!(["text"]));
    let err = CreateFeedback
        .build(&json!({"text": 3}))
        .expect_err("a number is not a sentence");
    assert_eq!(err.path(), "$.text");
}

/// The decision file is found beside the agent file, wherever the host runs.
#[test]
fn the_decision_path_is_relative_to_the_agent_file() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let agent = write(
        dir.path(),
        "agent.yaml",
        "name: d\ntools: { functions: [double], deferred: [double] }\ndecision: { path: decision.yaml }\n",
    );
    let missing = Agent::from_path(&agent).expect_err("no decision.yaml yet");
    let expected = dir.path().join("decision.yaml");
    assert!(
        missing
            .to_string()
            .contains(&expected.display().to_string()),
        "{missing}"
    );
    write(
        dir.path(),
        "decision.yaml",
        "tools: {discovery: true}\nprovider: assembly_test_nobody\nmodel: m\nendpoint: http://127.0.0.1:9/v1/chat/completions\n",
    );
    let found = Agent::from_path(&agent).expect_err("its key is not set");
    assert!(
        found
            .to_string()
            .contains("IRIS_PROVIDER_API_KEYS__ASSEMBLY_TEST_NOBODY"),
        "{found}"
    );
}

/// The committed `agent.schema.json` (what example files point editors at)
/// is the one the types generate. Run with `UPDATE_AGENT_SCHEMA=1` to write
/// it after changing the file's shape.
#[test]
fn the_committed_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../agent.schema.json");
    let generated = iris::serde_json::to_string_pretty(&Assembly::builder().build().schema())
        .expect("a schema serializes")
        + "\n";
    if std::env::var_os("UPDATE_AGENT_SCHEMA").is_some() {
        std::fs::write(&path, &generated).expect("the schema is writable");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "agent.schema.json is out of date; run `UPDATE_AGENT_SCHEMA=1 cargo test -p iris-test-suite --test suite assembly` and commit it"
    );
    let with_factories = Assembly::from_catalog().schema();
    let rules = &with_factories["$defs"]["HandlerSection"]["allOf"];
    assert!(
        rules.as_array().is_some_and(|r| r
            .iter()
            .any(|rule| rule["if"]["properties"]["factory"]["const"] == "create_feedback")),
        "{rules}"
    );
}

/// The exact text of each kind of error, at a fixed origin.
/// A service whose methods are tools.
struct Billing {
    cents: u64,
}

#[iris::toolbox]
impl Billing {
    /// Look up an invoice's amount, in cents.
    #[tool(read_only)]
    fn invoice_amount(
        &self,
        /// The invoice id.
        id: String,
    ) -> String {
        format!("{id}: {}", self.cents)
    }

    /// Refund an invoice.
    #[tool(write)]
    fn refund(
        &self,
        /// The invoice id.
        id: String,
    ) -> String {
        format!("refunded {id} of {} cents", self.cents)
    }
}

#[tokio::test]
async fn toolbox_methods_are_named_by_tool_name_or_type_and_method() {
    let service = std::sync::Arc::new(Billing { cents: 1200 });
    let agent = Assembly::from_catalog()
        .with_toolbox(service)
        .parse(
            "name: a\ntools: { functions: [invoice_amount, Billing::refund] }\n",
            Path::new(ORIGIN),
        )
        .expect("both methods are found");
    let registry = agent.registry();
    assert!(registry.resolve("invoice_amount").is_some());
    assert!(registry.resolve("refund").is_some());
    let cx = agent
        .context_builder(".", RunId::new("r"))
        .expect("a context")
        .build();
    let outcome = agent
        .executor()
        .execute_one(
            ToolUseBlock::new("c", "invoice_amount", json!({"id": "INV-1"})),
            &cx,
        )
        .await;
    assert_eq!(
        outcome.result().expect("finished").text_content(),
        "INV-1: 1200"
    );
}

#[test]
fn a_toolbox_method_without_its_service_says_which_service_to_hand_over() {
    for named in ["refund", "Billing::refund"] {
        let err = error_of(&format!("name: a\ntools: {{ functions: [{named}] }}\n"));
        let message = &err.issues[0].message;
        assert!(
            message.contains(&format!(
                "`{named}` is a method of the toolbox service `suite::assembly::Billing`"
            )) && message.contains("with_toolbox(Arc::new(the_billing))")
                && message.contains("iris::cli::Host"),
            "{message}"
        );
        assert!(!message.contains("linker"), "{message}");
    }
}

#[test]
fn the_hosts_own_hooks_and_middleware_reach_every_assembled_agent() {
    use iris::hooks::{BeforeAnswer, HookInput, HookRegistration};
    let guard = HookRegistration::before("host-guard", |input: &HookInput| {
        if input.tool.as_ref().is_some_and(|t| t.as_str() == "double") {
            BeforeAnswer::deny("the host refuses doubling")
        } else {
            BeforeAnswer::Allow
        }
    });
    let agent = Assembly::from_catalog()
        .with_hook(guard)
        .with_middleware(Timing)
        .parse(
            "name: a\ntools: { functions: [double, cube] }\n",
            Path::new(ORIGIN),
        )
        .expect("assembles");
    let cx = agent
        .context_builder(".", RunId::new("host-hooks"))
        .expect("a context")
        .build();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (refused, cubed) = runtime.block_on(async {
        let executor = agent.executor();
        let refused = executor
            .execute_one(ToolUseBlock::new("1", "double", json!({"value": 2})), &cx)
            .await;
        let cubed = executor
            .execute_one(ToolUseBlock::new("2", "cube", json!({"value": 2})), &cx)
            .await;
        (refused, cubed)
    });
    let refused = refused.result().expect("finished");
    assert_eq!(
        refused.error_kind(),
        Some(iris::ToolErrorKind::DeniedByHook)
    );
    assert!(refused.text_content().contains("the host refuses doubling"));
    let cubed = cubed.result().expect("finished");
    assert!(cubed.stats().contains_key("wrapped_seconds"), "{cubed:?}");
}

/// A hook has one deadline: the file may say it beside the hook or inside
/// its handler, never both (the command is killed at it).
#[test]
fn a_hook_deadline_is_said_once() {
    let both = "name: a\nhooks:\n  - name: audit\n    event: tool.before\n    timeout: 2s\n    handler: { type: command, command: [echo, \"{}\"], timeout: 5s }\n";
    let err = error_of(both).to_string();
    assert!(err.contains("hooks[0].handler.timeout"), "{err}");
    assert!(err.contains("sets it twice"), "{err}");
    let one = "name: a\nhooks:\n  - name: audit\n    event: tool.before\n    handler: { type: command, command: [echo, \"{}\"], timeout: 5s }\n";
    Assembly::from_catalog()
        .parse(one, Path::new(ORIGIN))
        .expect("a deadline said once assembles");
}

#[test]
fn configuration_errors_read_the_same_through_debug() {
    let err = error_of("name: a\ntools: { functions: [doubel] }\n");
    assert_eq!(format!("{err:?}"), err.to_string());
    assert!(format!("{err:?}").contains("did you mean `double`?"));
}

/// Return the square of an integer.
#[iris::tool(read_only)]
fn square(
    /// The integer to square.
    value: i64,
) -> i64 {
    value * value
}

/// The guide's sample of errors is what assembling its sample file prints.
#[test]
fn the_guide_error_samples_are_true() {
    let readme = include_str!("../../../src/guide/06-agents.md");
    let after = |marker: &str, fence: &str| -> String {
        let at = readme.find(marker).expect("the guide has the sample");
        let start = readme[at..].find(fence).expect("a fenced block") + at + fence.len();
        let end = readme[start..].find("```").expect("the block ends") + start;
        readme[start..end].to_owned()
    };
    let yaml = after("This file has\nthree mistakes:", "```yaml\n");
    let all = after("This file has\nthree mistakes:", "```text\n");
    let names = Assembly::builder()
        .tool(Square)
        .hook_factory("create_feedback", CreateFeedback)
        .build();
    let err = |text: &str| match names.parse(text, Path::new("agent.yaml")) {
        Ok(agent) => panic!("assembled {agent:?}"),
        Err(err) => format!("{err}\n"),
    };
    assert_eq!(err(&yaml), all);
}

#[test]
fn error_messages() {
    let cases: &[(&str, &str)] = &[
        (
            "unknown_top_key",
            "name: a\ntool: { functions: [double] }\n",
        ),
        ("unknown_nested_key", "name: a\nlimits: { max_step: 3 }\n"),
        ("wrong_type", "name: a\nlimits: { max_steps: many }\n"),
        ("missing_name", "tools: { functions: [double] }\n"),
        (
            "unknown_function",
            "name: a\ntools: { functions: [doubel] }\n",
        ),
        (
            "shared_function_name",
            "name: a\ntools: { functions: [ping] }\n",
        ),
        (
            "unknown_builtin",
            "name: a\ntools: { builtin: [file.reed] }\n",
        ),
        (
            "unknown_function_linker_hint",
            "name: a\ntools: { functions: [lookup_weather] }\n",
        ),
        (
            "unknown_hook_factory",
            "name: a\nhooks: [ { name: h, event: tool.after, handler: { type: factory, factory: create_fedback } } ]\n",
        ),
        (
            "unknown_factory_option",
            "name: a\nhooks: [ { name: h, event: tool.after, handler: { type: factory, factory: create_feedback, options: { txt: hi } } } ]\n",
        ),
        (
            "wrong_factory_option",
            "name: a\nhooks: [ { name: h, event: tool.after, handler: { type: factory, factory: create_feedback, options: { text: hi, times: lots } } } ]\n",
        ),
        (
            "wrong_factory_option_in_block",
            "name: a\nhooks:\n  - name: h\n    event: tool.after\n    handler:\n      type: factory\n      factory: create_feedback\n      options:\n        text: hi\n        times: \"100k\"\n",
        ),
        (
            "factory_without_name",
            "name: a\nhooks: [ { name: h, event: tool.after, handler: { type: factory } } ]\n",
        ),
        (
            "command_without_command",
            "name: a\nhooks: [ { name: h, event: tool.before, handler: { type: command } } ]\n",
        ),
        (
            "run_event_with_tools",
            "name: a\ntools: { functions: [double] }\nhooks: [ { name: h, event: run.started, tools: [double], handler: { type: factory, factory: create_run_log } } ]\n",
        ),
        (
            "builtin_key_in_hook_filter",
            "name: a\ntools: { builtin: [file.write] }\nhooks: [ { name: h, event: tool.before, tools: [file.write], handler: { type: command, command: [\"true\"] } } ]\n",
        ),
        (
            "event_mismatch",
            "name: a\nhooks: [ { name: h, event: tool.before, handler: { type: factory, factory: create_feedback, options: { text: x } } } ]\n",
        ),
        (
            "unknown_deferred",
            "name: a\ntools: { functions: [double], deferred: [cube] }\n",
        ),
        (
            "missing_variable",
            "name: a\nmodel: { provider: openai_chat, model: m, api_key_env: IRIS_ASSEMBLY_TEST_UNSET_API_KEY }\n",
        ),
        (
            "secret_variable",
            "name: a\nmodel: { provider: openai_chat, model: m, base_url: \"https://collector.example.com/v1\", api_key_env: AWS_SECRET_ACCESS_KEY }\n",
        ),
        (
            "missing_variable_in_env",
            "name: a\nhooks: [ { name: h, event: tool.before, handler: { type: command, command: [\"true\"], env: { TOKEN: \"${IRIS_ASSEMBLY_TEST_UNSET_TOKEN}\" } } } ]\n",
        ),
        (
            "both_instructions",
            "name: a\ninstructions: hi\ninstructions_file: prompt.md\n",
        ),
        ("mcp", "name: a\ntools: { mcp: [ { name: fs } ] }\n"),
        (
            "unknown_middleware",
            "name: a\nmiddleware: { tools: [ { factory: create_timer } ] }\n",
        ),
        (
            "unknown_permission_tool",
            "name: a\ntools: { functions: [double] }\npermissions: { tools: { doubel: allow } }\n",
        ),
        ("bad_rule", "name: a\npermissions: { write: maybe }\n"),
        ("bad_duration", "name: a\nlimits: { timeout: soon }\n"),
        ("duplicate_key", "name: a\nname: b\n"),
        ("not_yaml", "name: [a\n"),
        (
            "deep_nesting",
            &format!(
                "name: a\nhooks: [ {{ name: h, event: tool.after, handler: {{ type: factory, factory: create_feedback, options: {{ text: x, deep: {}1{} }} }} }} ]\n",
                "[".repeat(40),
                "]".repeat(40)
            ),
        ),
        (
            "several_at_once",
            "name: a\ntools: { functions: [doubel, cub], builtin: [file.reed] }\nhooks: [ { name: h, event: tool.after, tools: [nothing], handler: { type: factory, factory: create_feedback, options: { txt: x } } } ]\n",
        ),
    ];
    for (name, yaml) in cases {
        insta::assert_snapshot!(format!("assembly_error_{name}"), error_of(yaml).to_string());
    }
}

#[test]
fn hostile_files_are_refused_in_bounded_time() {
    // A "billion laughs": each level doubles the one before.
    let mut laughs = String::from("a0: &a0 [\"lol\"]\n");
    for level in 1..40 {
        let previous = level - 1;
        let _ = writeln!(laughs, "a{level}: &a{level} [*a{previous}, *a{previous}]");
    }
    laughs.push_str("name: *a39\n");
    let err = error_of(&laughs).to_string();
    assert!(err.contains("agents/agent.yaml"), "{err}");

    let big = format!("name: a\ninstructions: \"{}\"\n", "x".repeat(1024 * 1024));
    let err = error_of(&big).to_string();
    assert!(err.contains("at most 1048576"), "{err}");
}

mod properties {
    use proptest::prelude::*;

    use super::{Assembly, ORIGIN, Path};

    const VALID: &str = "name: a\ntools: { builtin: [file.read], functions: [double], deferred: [double] }\nhooks:\n  - name: h\n    event: tool.after\n    tools: [double]\n    handler: { type: factory, factory: create_feedback, options: { text: hi } }\nmiddleware: { tools: [ { factory: create_timing } ] }\npermissions: { write: ask, tools: { double: allow } }\nlimits: { max_steps: 3, timeout: 5s }\n";

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any text gives an agent or an error, never a panic.
        #[test]
        fn arbitrary_text_never_panics(text in ".{0,400}") {
            let _ = Assembly::from_catalog().parse(&text, Path::new(ORIGIN));
        }

        /// A valid file with bytes changed, cut or repeated gives an agent or an error.
        #[test]
        fn mutated_files_never_panic(
            at in 0..VALID.len(),
            cut in 0..40usize,
            insert in "[-a-z:{}\\[\\], &*!\"'\n]{0,12}",
        ) {
            let mut text = VALID.to_owned();
            let at = (0..=at).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
            let end = (at + cut).min(text.len());
            let end = (end..=text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
            text.replace_range(at..end, &insert);
            let _ = Assembly::from_catalog().parse(&text, Path::new(ORIGIN));
        }

        /// Random JSON documents (YAML's subset) give an agent or an error.
        #[test]
        fn json_documents_never_panic(value in arb_json()) {
            let text = value.to_string();
            let _ = Assembly::from_catalog().parse(&text, Path::new(ORIGIN));
        }
    }

    fn arb_json() -> impl Strategy<Value = iris::serde_json::Value> {
        use iris::serde_json::Value;
        let keys = prop::sample::select(vec![
            "name",
            "tools",
            "functions",
            "hooks",
            "handler",
            "type",
            "factory",
            "options",
            "event",
            "limits",
            "permissions",
            "middleware",
            "deferred",
            "builtin",
            "x",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "[a-z._:]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(keys.clone(), inner, 0..5).prop_map(|m| {
                    Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }
}

/// An instructions file is read like the agent file, and only from its
/// folder: a path or link outside it, a FIFO or a file over the bound is
/// refused, quickly, with its key (findings: `/dev/zero` read until memory
/// ran out, `/etc/shadow` was read, a FIFO hung the host).
#[test]
fn an_instructions_file_is_bounded_and_never_waits() {
    let outer = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(outer.path().join("elsewhere.md"), "secret").expect("written");
    let dir = tempfile::TempDir::new_in(outer.path()).expect("a folder inside");
    write(dir.path(), "huge.md", &"x".repeat(2 << 20));
    let fifo = dir.path().join("fifo.md");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let origin = dir.path().join("agent.yaml");
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("linked.md")).expect("a link");
    for (named, expected) in [
        ("/dev/zero", "outside the agent file's folder"),
        ("/etc/shadow", "outside the agent file's folder"),
        ("linked.md", "outside the agent file's folder"),
        ("../elsewhere.md", "outside the agent file's folder"),
        ("fifo.md", "not a regular file"),
        ("huge.md", "at most 1048576"),
    ] {
        let text = format!("name: a\ninstructions_file: {named}\n");
        let origin = origin.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(Assembly::from_catalog().parse(&text, &origin).map(|_| ()));
        });
        let err = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("reading `{named}` never finished"))
            .expect_err("refused");
        let message = err.to_string();
        assert!(
            message.contains("instructions_file") && message.contains(expected),
            "{named}: {message}"
        );
    }
}
