//! The commands CI gates on, run for real: `lint` (text, JSON, SARIF,
//! `--strict`), `eval` against a baseline, `lock` and `diff`, and the
//! helpers around them (`search --explain`, `doctor`, `completions`), on
//! agent files whose tools are programs.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Two tools that describe themselves well, one that does not, and two
/// that a search cannot tell apart.
const AGENT: &str = "name: gates
tools:
  builtin: [file.read]
  command:
    - name: count_words
      description: Count the words of a text and report the total.
      command: [wc, -w]
      capabilities: [read_only]
      parameters:
        text: { type: string, description: The text whose words are counted }
        unit: { type: string, optional: true, enum: [words, lines], description: What to count }
    - name: shout
      description: Loud
      command: [tr, a-z, A-Z]
      input_schema: { type: object, properties: { word: { type: string } } }
    - name: send_invoice_email
      description: Send an invoice to a customer by email.
      command: [cat]
      parameters:
        customer: { type: string, description: The customer }
    - name: email_invoice
      description: Email an invoice to a customer.
      command: [cat]
      parameters:
        customer: { type: string, description: The customer }
";

fn iris(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iris"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("agent.yaml"), AGENT).unwrap();
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&output.stdout), text(&output.stderr)))
}

#[test]
fn lint_reports_weak_descriptions_and_confusable_tools_and_fails_strict_ci() {
    let dir = workspace();
    let plain = iris(dir.path(), &["lint"]);
    assert_eq!(
        plain.status.code(),
        Some(0),
        "warnings alone pass: {}",
        text(&plain.stderr)
    );
    let report = text(&plain.stdout);
    assert!(
        report.contains("shout: warning[description-short]"),
        "{report}"
    );
    assert!(
        report.contains("shout: warning[parameter-undescribed] at /properties/word"),
        "{report}"
    );
    assert!(report.contains("warning[confusable]"), "{report}");
    assert!(
        report.contains("`email_invoice`") || report.contains("`send_invoice_email`"),
        "{report}"
    );
    assert!(
        report.contains("shared terms: ") && report.contains("invoic"),
        "{report}"
    );
    assert!(
        !report.contains("count_words"),
        "a well-described tool has nothing: {report}"
    );

    let strict = iris(dir.path(), &["lint", "--strict"]);
    assert_eq!(strict.status.code(), Some(7));

    let listed = json(&iris(dir.path(), &["lint", "--json"]));
    assert_eq!(listed["format"], 1);
    assert_eq!(listed["tools"], 5);
    let rules: Vec<&str> = listed["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(
        rules.contains(&"projection"),
        "projection notes are listed in JSON: {rules:?}"
    );

    let sarif = json(&iris(dir.path(), &["lint", "--format", "sarif"]));
    assert_eq!(sarif["version"], "2.1.0");
    let run = &sarif["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "iris");
    let result = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "description-short")
        .unwrap();
    assert_eq!(result["level"], "warning");
    assert_eq!(
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "agent.yaml"
    );
    assert_eq!(
        result["locations"][0]["logicalLocations"][0]["name"],
        "shout"
    );
}

#[test]
fn search_explains_each_terms_part_in_each_score() {
    let dir = workspace();
    let explained = iris(dir.path(), &["search", "count the words", "--explain"]);
    assert_eq!(explained.status.code(), Some(0));
    let shown = text(&explained.stdout);
    let first = shown.lines().next().unwrap();
    assert!(
        first.starts_with("count_words") && first.contains("selected"),
        "{shown}"
    );
    assert!(shown.lines().nth(1).unwrap().contains("word +"), "{shown}");
    let answer = json(&iris(
        dir.path(),
        &["search", "count the words zzyzx", "--explain", "--json"],
    ));
    let terms = answer["candidates"][0]["terms"].as_array().unwrap();
    assert!(
        terms
            .iter()
            .any(|t| t["term"] == "zzyzx" && t["source"]["kind"] == "unseen"),
        "{terms:?}"
    );
}

#[test]
fn eval_measures_the_ranker_and_fails_on_a_regression_from_its_baseline() {
    let dir = workspace();
    std::fs::write(
        dir.path().join("cases.yaml"),
        "cases:
  - { request: report the total of this text, expect: [count_words] }
  - { request: read the notes file, expect: [read_file] }
  - { request: email the invoice to the customer, expect: [email_invoice, send_invoice_email] }
  - { request: book a flight to Oslo, expect: [] }
",
    )
    .unwrap();
    let measured = iris(dir.path(), &["eval", "cases.yaml", "--json"]);
    assert_eq!(
        measured.status.code(),
        Some(0),
        "{}",
        text(&measured.stderr)
    );
    let report = json(&measured);
    assert_eq!(report["cases"], 4);
    assert_eq!(report["figures"]["top1"], 1.0);
    assert_eq!(report["figures"]["nothing_loaded_when_none_fits"], 1.0);
    std::fs::write(dir.path().join("baseline.json"), &measured.stdout).unwrap();

    // The catalog gets worse: `count_words` no longer says what it counts.
    let worse = AGENT
        .replace(
            "Count the words of a text and report the total.",
            "A utility.",
        )
        .replace("The text whose words are counted", "The input")
        .replace("What to count", "The mode");
    std::fs::write(dir.path().join("agent.yaml"), worse).unwrap();
    let gated = iris(
        dir.path(),
        &["eval", "cases.yaml", "--baseline", "baseline.json"],
    );
    assert_eq!(gated.status.code(), Some(8), "{}", text(&gated.stderr));
    assert!(
        text(&gated.stderr).contains("regression: available fell from 1.000 to 0.667"),
        "{}",
        text(&gated.stderr)
    );
    let allowed = iris(
        dir.path(),
        &[
            "eval",
            "cases.yaml",
            "--baseline",
            "baseline.json",
            "--fail-under",
            "50",
        ],
    );
    assert_eq!(allowed.status.code(), Some(0), "{}", text(&allowed.stderr));

    std::fs::write(
        dir.path().join("typo.yaml"),
        "cases:\n  - { request: x, expect: [count_word] }\n",
    )
    .unwrap();
    let typo = iris(dir.path(), &["eval", "typo.yaml"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(
        text(&typo.stderr).contains("did you mean `count_words`"),
        "{}",
        text(&typo.stderr)
    );
}

#[test]
fn diff_classifies_each_change_since_the_lockfile() {
    let dir = workspace();
    let locked = iris(dir.path(), &["lock"]);
    assert_eq!(locked.status.code(), Some(0), "{}", text(&locked.stderr));
    assert!(text(&locked.stderr).contains("5 tool(s) pinned in iris.lock.json"));
    let unchanged = iris(dir.path(), &["diff"]);
    assert_eq!(unchanged.status.code(), Some(0));
    assert!(
        text(&unchanged.stdout).is_empty(),
        "{}",
        text(&unchanged.stdout)
    );

    let edited = AGENT
        .replace("enum: [words, lines]", "enum: [words]")
        .replace("unit: { type: string, optional: true,", "unit: { type: string,")
        .replace("Send an invoice to a customer by email.", "Send an invoice by email.")
        .replace(
            "    - name: shout\n      description: Loud\n      command: [tr, a-z, A-Z]\n      input_schema: { type: object, properties: { word: { type: string } } }\n",
            "",
        );
    std::fs::write(dir.path().join("agent.yaml"), edited).unwrap();
    let diffed = iris(dir.path(), &["diff", "--json"]);
    assert_eq!(diffed.status.code(), Some(9), "{}", text(&diffed.stderr));
    let changes = json(&diffed)["changes"].as_array().unwrap().clone();
    let has = |tool: &str, kind: &str, what: &str| {
        changes.iter().any(|c| {
            c["tool"] == tool && c["kind"] == kind && c["what"].as_str().unwrap().contains(what)
        })
    };
    assert!(has("shout", "breaking", "removed"), "{changes:?}");
    assert!(
        has("count_words", "breaking", "`unit` is now required"),
        "{changes:?}"
    );
    assert!(
        has(
            "count_words",
            "breaking",
            "enum value(s) [\"lines\"] removed"
        ),
        "{changes:?}"
    );
    assert!(
        has("send_invoice_email", "cosmetic", "description changed"),
        "{changes:?}"
    );

    let lock_to_stdout = iris(dir.path(), &["lock", "-o", "-"]);
    std::fs::write(dir.path().join("new.lock.json"), &lock_to_stdout.stdout).unwrap();
    let between = iris(
        dir.path(),
        &["diff", "iris.lock.json", "--against", "new.lock.json"],
    );
    assert_eq!(between.status.code(), Some(9));
    assert!(
        text(&between.stdout).contains("breaking    shout: removed"),
        "{}",
        text(&between.stdout)
    );
}

#[test]
fn doctor_and_completions_help_set_a_machine_up() {
    let dir = workspace();
    let healthy = iris(dir.path(), &["doctor", "--json"]);
    assert_eq!(healthy.status.code(), Some(0), "{}", text(&healthy.stderr));
    let checks = json(&healthy)["checks"].as_array().unwrap().clone();
    let names: Vec<&str> = checks
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["iris", "catalog", "model", "lint", "workspace"]);
    std::fs::write(
        dir.path().join("offline.yaml"),
        "name: offline\nmodel: { provider: openai_chat, model: m, base_url: 'http://127.0.0.1:9/v1' }\n",
    )
    .unwrap();
    let sick = iris(dir.path(), &["doctor", "--agent", "offline.yaml"]);
    assert_eq!(sick.status.code(), Some(6));
    assert!(
        text(&sick.stdout).contains("FAIL  model"),
        "{}",
        text(&sick.stdout)
    );

    for shell in ["bash", "zsh", "fish"] {
        let script = iris(dir.path(), &["completions", shell]);
        assert_eq!(script.status.code(), Some(0));
        assert!(text(&script.stdout).contains("lint"), "{shell}");
    }
}

#[cfg(feature = "encoder")]
#[path = "../../tests/support/installed.rs"]
mod installed;

/// `iris eval --encoder` ranks with the sentence encoder (all-MiniLM-L6-v2,
/// pinned, from `PyPI`): a request in other words than any tool's is found,
/// the report names the encoder, and a folder that is no model is refused
/// with what it lacks.
#[cfg(feature = "encoder")]
#[test]
fn eval_with_the_encoder_finds_requests_in_other_words() {
    let model = installed::SENTENCE_ENCODER.folder().join("model");
    let dir = workspace();
    std::fs::write(
        dir.path().join("cases.yaml"),
        "cases:
  - { request: how long is this paragraph, expect: [count_words] }
  - { request: report the total of this text, expect: [count_words] }
  - { request: knead pizza dough until it is elastic, expect: [] }
",
    )
    .unwrap();
    let words = json(&iris(dir.path(), &["eval", "cases.yaml", "--json"]));
    assert_eq!(words["encoder"], Value::Null);
    let model_arg = model.to_str().unwrap();
    let measured = iris(
        dir.path(),
        &["eval", "cases.yaml", "--json", "--encoder", model_arg],
    );
    assert_eq!(
        measured.status.code(),
        Some(0),
        "{}",
        text(&measured.stderr)
    );
    let report = json(&measured);
    assert!(
        report["encoder"].as_str().unwrap().starts_with("model@"),
        "{report:#}"
    );
    assert_eq!(report["figures"]["top1"], 1.0, "{report:#}");
    assert_eq!(
        report["figures"]["nothing_loaded_when_none_fits"], 1.0,
        "{report:#}"
    );
    let first = &report["outcomes"][0];
    assert_eq!(first["first"], "count_words", "{report:#}");

    let shown = iris(dir.path(), &["eval", "cases.yaml", "--encoder", model_arg]);
    assert!(
        text(&shown.stdout).contains("encoder                    model@"),
        "{}",
        text(&shown.stdout)
    );

    let refused = iris(dir.path(), &["eval", "cases.yaml", "--encoder", "."]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("has no `config.json`"),
        "{}",
        text(&refused.stderr)
    );
}
