//! The examples do what the README and their docs say. `cargo test` builds
//! them next to the test binaries; these tests run them.

use std::path::PathBuf;
use std::process::Command;

fn run_example(name: &str) -> String {
    let deps = std::env::current_exe().unwrap();
    let examples: PathBuf = deps.parent().unwrap().parent().unwrap().join("examples");
    let output = Command::new(examples.join(name))
        .output()
        .unwrap_or_else(|e| panic!("example `{name}` did not start: {e}"));
    assert!(
        output.status.success(),
        "example `{name}` failed: {output:?}"
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn quickstart_shows_the_result_then_the_hook_feedback() {
    let out = run_example("quickstart");
    let result = out.find("16").expect("the square of 4");
    let marker = out.find("[Hook feedback]").expect("the feedback marker");
    let text = out
        .find("Double-check the arithmetic")
        .expect("the hook's text");
    assert!(result < marker && marker < text, "{out}");
}

/// The quickstart's scene from YAML: `16`, then the factory hook's text from
/// the file, then the timing middleware's figure.
#[cfg(feature = "assembly")]
#[test]
fn extension_demo_assembles_the_quickstart_from_yaml() {
    let out = run_example("extension_demo");
    let result = out.find("16").expect("the square of 4");
    let marker = out.find("[Hook feedback]").expect("the feedback marker");
    let text = out
        .find("A square is never negative")
        .expect("the hook's text from the agent file");
    let stats = out
        .find("stats.wrapped_seconds: ")
        .expect("the timing middleware's stat");
    assert!(result < marker && marker < text && text < stats, "{out}");
}

/// A run pauses at the edit, is saved and resumed after approval, and the
/// file changes only then.
#[cfg(feature = "openai")]
#[test]
fn agent_pauses_for_the_edit_and_resumes_from_saved_state() {
    let out = run_example("agent");
    let waiting = out
        .find("waiting for approval: edit_file")
        .expect("the pause");
    let saved = out.find("saved the run's state").expect("the saved state");
    let edited = out
        .find("edit_file -> Edited `config.yaml`")
        .expect("the edit ran");
    let file = out.find("config.yaml now:").expect("the file printed");
    assert!(waiting < saved && saved < edited && edited < file, "{out}");
    assert!(out[file..].contains("log_level: INFO"), "{out}");
}

#[test]
fn middleware_adds_wrapped_seconds() {
    let out = run_example("middleware");
    assert!(
        out.contains("Lisbon: 21 °C") && out.contains("wrapped_seconds"),
        "{out}"
    );
}

#[test]
fn approval_waits_then_runs_and_then_denies() {
    let out = run_example("approval");
    let waiting = out.find("waiting: send_email").expect("a pause");
    let approved = out
        .find("approved -> sent `Q3 report`")
        .expect("the approved run");
    let denied = out
        .find("denied -> the user denied this call")
        .expect("the denial");
    assert!(waiting < approved && approved < denied, "{out}");
}

#[test]
fn file_edit_changes_the_log_level_and_refuses_a_stale_edit() {
    let out = run_example("file_edit");
    let edited = out.find("Edited `app.yaml`").expect("the edit");
    let reread = out[edited..]
        .find("2\tlog_level: INFO")
        .expect("the second read");
    let stale = out.find("[stale_read]").expect("the stale edit refused");
    assert!(edited + reread < stale, "{out}");
    assert!(
        out.ends_with("workers: 8\n\n") || out.ends_with("workers: 8\n"),
        "{out}"
    );
}

#[test]
fn discovery_searches_discloses_and_saves_tokens() {
    let out = run_example("discovery");
    assert!(
        out.contains("request 1 offers [\"tool_search\", \"current_time\"]"),
        "{out}"
    );
    assert!(out.contains("selected `cancel_flight_booking`"), "{out}");
    assert!(out.contains("request 2 offers 4 tools"), "{out}");
    assert!(out.contains("> cancel_flight_booking -> ok:"), "{out}");
    assert!(out.contains("% saved)"), "{out}");
}

#[test]
fn toolbox_reserves_from_the_shared_stock() {
    let out = run_example("toolbox");
    assert!(
        out.contains("tool `stock_level` from toolbox::Inventory::stock_level"),
        "{out}"
    );
    assert!(out.contains("c1: reserved 2 of `MUG-RED`; 3 left"), "{out}");
    assert!(out.contains("c2: only 1 of `MUG-BLUE` left"), "{out}");
    assert!(out.contains("c3: 3"), "{out}");
}

/// A lead delegates to two children at once; the researcher's question and
/// the writer's approval pause the run, listed by their paths; a second
/// process answers, approves and finishes it, and the report is written
/// once.
#[cfg(all(feature = "testing", feature = "skills"))]
#[test]
fn research_team_pauses_on_a_question_and_an_approval_and_finishes_elsewhere() {
    let out = run_example("research_team");
    assert!(out.contains("`r1/q1` (researcher) asks"), "{out}");
    assert!(
        out.contains("`w1/s1` (writer) wants to run `save_report`"),
        "{out}"
    );
    assert!(
        out.contains("Team report: sales in EU grew 4% / saved report.md"),
        "{out}"
    );
    assert!(out.contains("report.md holds 1 line(s)"), "{out}");
    assert!(
        out.contains("Summary / Figures / Risks"),
        "the writer followed its preloaded skill: {out}"
    );
    let processes: std::collections::BTreeSet<&str> = out
        .lines()
        .filter_map(|line| line.strip_prefix("[process ")?.split(']').next())
        .collect();
    assert_eq!(processes.len(), 2, "two processes: {out}");
}
