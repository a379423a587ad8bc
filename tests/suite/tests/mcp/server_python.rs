//! The Iris server checked by the official Python SDK's client over stdio:
//! pages of `tools/list` with annotations and schemas, calls answering
//! text, an image, structured content and errors, and a call the policy
//! asks about: refused without elicitation, run once a person approves.

use serde_json::{Value, json};

use crate::peers::{HttpTestServer, folder, python};

fn check(args: &[&str]) -> Value {
    let output = std::process::Command::new(python())
        .arg(folder().join("check_iris_server.py"))
        .args(args)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "the Python client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("not a report ({e}): {stdout}"))
}

fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("`{name}` is not listed"))
}

#[test]
fn the_python_client_lists_and_calls_over_stdio() {
    let server = env!("CARGO_BIN_EXE_iris-mcp-test-server");
    let workspace = tempfile::tempdir().unwrap();
    let workspace = workspace.path().to_string_lossy();
    assert_report(&check(&["stdio", server, "--workspace", &workspace]));
}

#[test]
fn the_python_client_lists_and_calls_over_http() {
    let workspace = tempfile::tempdir().unwrap();
    let server = HttpTestServer::start(&["--workspace", &workspace.path().to_string_lossy()]);
    assert_report(&check(&["http", &server.url]));
}

fn assert_report(report: &Value) {
    let report = report.clone();
    assert_eq!(report["server"]["name"], "iris");
    // Ten tools, three to a page.
    assert_eq!(report["pages"], 4);
    assert_eq!(report["tools"].as_array().unwrap().len(), 10);

    let square = tool(&report, "square");
    assert_eq!(square["inputSchema"]["required"], json!(["value"]));
    assert_eq!(square["annotations"]["readOnlyHint"], true);
    assert_eq!(square["annotations"]["openWorldHint"], false);
    let delete = tool(&report, "delete_note");
    assert_eq!(delete["annotations"]["readOnlyHint"], false);
    assert_eq!(
        tool(&report, "weather")["outputSchema"]["required"],
        json!(["city", "celsius"])
    );

    assert_eq!(report["square"]["content"][0]["text"], "49");
    assert_eq!(report["square"]["isError"], false);
    assert_eq!(report["chart"]["content"][1]["type"], "image");
    assert_eq!(report["chart"]["content"][1]["mimeType"], "image/png");
    assert_eq!(report["fail"]["isError"], true);
    assert_eq!(report["fail"]["content"][0]["text"], "the disk is full");
    assert_eq!(
        report["weather"]["structuredContent"],
        json!({"city": "Oslo", "celsius": 21.5})
    );
    // A typed return is listed with its output schema, and its result
    // validates against it (checked by the client with `jsonschema`).
    let forecast = tool(&report, "forecast");
    assert_eq!(forecast["outputSchema"]["type"], "object");
    assert_eq!(
        forecast["outputSchema"]["required"],
        json!(["city", "celsius", "conditions"])
    );
    assert_eq!(
        report["forecast"]["structuredContent"],
        json!({"city": "Oslo", "celsius": 18.5, "conditions": ["sun", "clouds"]})
    );
    assert_eq!(report["forecast_validates"], true);
    assert_eq!(report["bad_arguments"]["isError"], true);
    let text = report["bad_arguments"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("$.value"), "{text}");

    // A long result reaches the client as a preview naming its artifact,
    // which `resources/read` gives back whole.
    let preview = report["long_report"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(preview.len() <= 41_000, "a preview, not the whole");
    let whole = report["artifact"]["text"].as_str().unwrap();
    assert!(whole.starts_with("line 0\n") && whole.ends_with("line 19999\n"));

    let refused = &report["asked_without_elicitation"];
    assert_eq!(refused["isError"], true);
    let text = refused["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("approval required"), "{text}");
    assert_eq!(
        report["asked_with_elicitation"]["content"][0]["text"],
        "deleted groceries"
    );
}

#[test]
fn a_deferred_tool_is_callable_once_tool_search_found_it() {
    let server = env!("CARGO_BIN_EXE_iris-mcp-test-server");
    let report = check(&["search", server, "--padding", "5", "--deferred", "--search"]);
    let before = &report["before"];
    assert_eq!(before["isError"], true);
    let text = before["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("tool_search"), "{text}");
    let found = report["search"]["content"][0]["text"].as_str().unwrap();
    assert!(found.contains("padding_0003"), "{found}");
    assert_eq!(report["after"]["content"][0]["text"], "padding 3");
}
