//! A server written to misbehave: bad names, a duplicate, a 10 MB
//! description, schemas that are not objects or are cyclic, a false PNG,
//! 50 MB of text, a call never answered, garbage on stdout, an
//! `initialize` never answered. Each gives a clear error or a report; the
//! rest of the catalog stays usable; nothing panics or hangs.

use std::time::Duration;

use iris::mcp::client::{McpClient, McpExposure, McpServerConfig};
use iris::{
    Rule, RulePolicy, ToolContext, ToolErrorKind, ToolExecutor, ToolRegistry, ToolResult,
    ToolUseBlock,
};
use serde_json::json;

use crate::peers::{folder, python};

fn hostile(mode: &str) -> McpServerConfig {
    let script = folder().join("hostile_server.py");
    McpServerConfig::stdio(
        "hostile",
        python(),
        [script.to_string_lossy().into_owned(), mode.to_owned()],
    )
    .with_exposure(McpExposure::Eager)
    .with_timeout(Duration::from_secs(3))
    .with_startup_timeout(Duration::from_secs(5))
}

async fn call(executor: &ToolExecutor, id: &str, name: &str) -> ToolResult {
    let dir = std::env::temp_dir();
    let cx = ToolContext::builder(&dir, iris::RunId::new("hostile")).build();
    executor
        .execute_one(ToolUseBlock::new(id, name, json!({})), &cx)
        .await
        .result()
        .cloned()
        .expect("allowed by policy")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_catalog_is_reported_and_the_rest_stays_usable() {
    let client = McpClient::connect(hostile("catalog"))
        .await
        .expect("connects");
    let report = client.report();
    let skipped: Vec<&str> = report
        .skipped
        .iter()
        .map(|s| s.wire_name.as_str())
        .collect();
    assert!(skipped.contains(&"not_an_object"), "{report:#?}");
    assert!(
        skipped.contains(&"dup"),
        "the second `dup` is reported: {report:#?}"
    );
    assert_eq!(report.renamed.len(), 1, "{report:#?}");
    assert_eq!(report.renamed[0].wire_name, "bad name!");
    assert!(
        report.notes.iter().any(|n| n.contains("long_description")),
        "{report:#?}"
    );
    let names: Vec<String> = client.definitions().map(|d| d.name().to_string()).collect();
    for usable in [
        "hostile__ok",
        "hostile__dup",
        "hostile__cyclic",
        "hostile__silent",
    ] {
        assert!(names.iter().any(|n| n == usable), "{usable} in {names:?}");
    }
    let long = client
        .definitions()
        .find(|d| d.name() == "hostile__long_description")
        .unwrap();
    assert_eq!(
        long.description().len(),
        iris::mcp::client::McpClient::MAX_DESCRIPTION_CHARS
    );
    // The cyclic schema still projects, with its recursion reported.
    let cyclic = client
        .definitions()
        .find(|d| d.name() == "hostile__cyclic")
        .unwrap();
    let _ = iris::provider::openai_chat(&cyclic.spec().with_strict(true));
    let _ = iris::provider::gemini(&cyclic.spec());

    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Allow))
        .max_result_chars(10_000)
        .build()
        .unwrap();
    let renamed = report.renamed[0].name.clone();
    assert_eq!(
        call(&executor, "a", &renamed).await.text_content(),
        "bad name! ran"
    );
    let fake = call(&executor, "b", "hostile__fake_png").await;
    assert_eq!(
        fake.error_kind(),
        Some(ToolErrorKind::UnsupportedContent),
        "{fake:?}"
    );
    let silent = call(&executor, "c", "hostile__silent").await;
    assert_eq!(
        silent.error_kind(),
        Some(ToolErrorKind::Timeout),
        "{silent:?}"
    );
    let huge = call(&executor, "d", "hostile__huge_text").await;
    assert!(!huge.is_error(), "{:?}", huge.error_kind());
    assert!(
        huge.text_content().len() < 20_000,
        "50 MB reach the model as a preview, not whole"
    );
    let cyclic = call(&executor, "e", "hostile__cyclic").await;
    assert_eq!(cyclic.text_content(), "cyclic ran");
    // The server still answers after all that.
    assert_eq!(
        call(&executor, "f", "hostile__ok").await.text_content(),
        "ok ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_stdout_and_a_mute_server_end_in_clear_errors() {
    let started = std::time::Instant::now();
    let mute = McpClient::connect(hostile("mute"))
        .await
        .expect_err("never initializes");
    let message = mute.to_string();
    assert!(
        message.contains("did not finish `initialize` within 5 s"),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(15));

    // Lines that are not JSON-RPC are skipped; the session goes on.
    let client = McpClient::connect(hostile("garbage"))
        .await
        .expect("garbage lines are skipped");
    let names: Vec<String> = client.definitions().map(|d| d.name().to_string()).collect();
    assert_eq!(names, ["hostile__ok"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_cancels_its_request_on_the_wire() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut config = hostile("catalog");
    if let iris::mcp::client::McpTransport::Stdio { env, .. } = &mut config.transport {
        env.insert(
            "HOSTILE_LOG".to_owned(),
            log.path().to_string_lossy().into_owned(),
        );
    }
    let client = McpClient::connect(config.with_timeout(Duration::from_secs(30)))
        .await
        .unwrap();
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()
        .unwrap();
    let cancel = iris::executor::CancellationToken::new();
    let cx = ToolContext::builder(std::env::temp_dir(), iris::RunId::new("cancelled"))
        .extension(cancel.clone())
        .build();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let started = std::time::Instant::now();
    let outcome = executor
        .execute_one(ToolUseBlock::new("s", "hostile__silent", json!({})), &cx)
        .await;
    canceller.await.unwrap();
    let result = outcome.result().unwrap();
    assert_eq!(
        result.error_kind(),
        Some(ToolErrorKind::Cancelled),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5), "not waited out");
    // The server hears about it.
    let mut heard = String::new();
    for _ in 0..50 {
        heard = std::fs::read_to_string(log.path()).unwrap();
        if heard.contains("notifications/cancelled") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(heard.contains("notifications/cancelled"), "{heard}");
}
