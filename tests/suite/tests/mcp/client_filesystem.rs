//! The client against `@modelcontextprotocol/server-filesystem` on a temp
//! folder, through the executor with an ask-on-write policy: reads run,
//! a write waits for a person and changes nothing until approved.

use iris::mcp::client::{McpClient, McpExposure, McpServerConfig};
use iris::{
    ApprovalDecision, Rule, RulePolicy, ToolContext, ToolExecutor, ToolOutcome, ToolRegistry,
    ToolUseBlock,
};
use serde_json::json;

use crate::peers::npm_bin;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_run_and_a_write_waits_for_approval() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "milk\n").unwrap();
    let config = McpServerConfig::stdio(
        "fs",
        npm_bin("mcp-server-filesystem"),
        [root.to_string_lossy().into_owned()],
    )
    .with_trusted_annotations(true)
    .with_exposure(McpExposure::Eager)
    // Node takes a while to start on a busy machine.
    .with_startup_timeout(std::time::Duration::from_secs(120));
    let client = McpClient::connect(config).await.expect("connects");
    let read = client
        .definitions()
        .find(|d| d.name() == "fs__read_text_file")
        .expect("read_text_file is listed");
    assert!(
        read.capabilities().is_read_only(),
        "trusted: reads are reads"
    );
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().read_only(Rule::Allow).write(Rule::Ask))
        .build()
        .unwrap();
    let cx = ToolContext::builder(&root, iris::RunId::new("fs")).build();

    let path = root.join("notes.txt").to_string_lossy().into_owned();
    let outcome = executor
        .execute_one(
            ToolUseBlock::new("r", "fs__read_text_file", json!({"path": path})),
            &cx,
        )
        .await;
    let text = outcome
        .result()
        .expect("a read runs at once")
        .text_content();
    assert!(text.contains("milk"), "{text}");

    let outcome = executor
        .execute_one(
            ToolUseBlock::new(
                "w",
                "fs__write_file",
                json!({"path": path, "content": "milk\neggs\n"}),
            ),
            &cx,
        )
        .await;
    let ToolOutcome::Waiting(request) = outcome else {
        panic!("a write must wait: {outcome:?}");
    };
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "milk\n",
        "nothing written before approval"
    );
    let done = executor
        .resume("w", ApprovalDecision::approve(&request), &cx)
        .await
        .unwrap();
    assert!(!done.result().unwrap().is_error(), "{done:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "milk\neggs\n"
    );
}
