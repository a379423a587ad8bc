//! Agent Skills served over MCP (`ServeOptions::skills`, `iris serve` on an
//! agent file with `skills:`): the catalog as `activate_skill`, answered
//! beside the executor, each session's activations its own, and each
//! skill's files as read-only resources.

use std::sync::Arc;

use iris::mcp::{McpHttpServer, ServeOptions};
use iris::skills::{SkillRoots, SkillScope, Skills, Strictness};
use iris::{ToolExecutor, ToolRegistry};
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams, ResourceContents};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

fn call(arguments: &Value) -> CallToolRequestParams {
    CallToolRequestParams::new("activate_skill")
        .with_arguments(arguments.as_object().unwrap().clone())
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_offered_activated_per_session_and_their_files_read() {
    let project = tempfile::tempdir().unwrap();
    let folder = project.path().join("skills/release-notes");
    std::fs::create_dir_all(folder.join("references")).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Write release notes from merged changes.\n---\nGroup the changes by kind.\n",
    )
    .unwrap();
    std::fs::write(folder.join("references/style.md"), "Short lines.\n").unwrap();
    let found = SkillRoots::new()
        .with_root(
            project.path().join("skills"),
            SkillScope::User,
            Strictness::Strict,
        )
        .find();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let executor = ToolExecutor::builder(ToolRegistry::new()).build().unwrap();
    let options = ServeOptions {
        skills: Some(Skills::new(found.skills)),
        ..ServeOptions::default()
    };
    let http = McpHttpServer::bind(Arc::new(executor), ([127, 0, 0, 1], 0).into(), options)
        .await
        .unwrap();
    let url = http.url();
    let stop = http.shutdown_token();
    tokio::spawn(http.run());
    let client = ().serve(StreamableHttpClientTransport::from_uri(url.clone())).await.unwrap();

    let listed = client.list_tools(None).await.unwrap();
    let tool = listed
        .tools
        .iter()
        .find(|t| t.name == "activate_skill")
        .expect("offered");
    assert!(
        tool.description
            .as_deref()
            .unwrap_or_default()
            .contains("- release-notes: Write release notes")
    );

    let first = client
        .call_tool(call(&json!({"name": "release-notes", "file": null})))
        .await
        .unwrap();
    assert!(
        text(&first).contains("Group the changes by kind."),
        "{first:?}"
    );
    let again = client
        .call_tool(call(&json!({"name": "release-notes", "file": null})))
        .await
        .unwrap();
    assert!(text(&again).contains("active already"), "{again:?}");
    let file = client
        .call_tool(call(
            &json!({"name": "release-notes", "file": "references/style.md"}),
        ))
        .await
        .unwrap();
    assert_eq!(text(&file), "Short lines.\n");

    // Another session starts with nothing active.
    let other = ().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap();
    let fresh = other
        .call_tool(call(&json!({"name": "release-notes", "file": null})))
        .await
        .unwrap();
    assert!(text(&fresh).contains("Group the changes"), "{fresh:?}");

    let resources = client.list_resources(None).await.unwrap();
    let uris: Vec<&str> = resources.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://release-notes/SKILL.md",
            "skill://release-notes/references/style.md"
        ]
    );
    let read = client
        .read_resource(ReadResourceRequestParams::new(
            "skill://release-notes/references/style.md",
        ))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("text: {read:?}");
    };
    assert_eq!(text, "Short lines.\n");
    let outside = client
        .read_resource(ReadResourceRequestParams::new(
            "skill://release-notes/../../etc/passwd",
        ))
        .await;
    assert!(outside.is_err(), "{outside:?}");
    stop.cancel();
}
