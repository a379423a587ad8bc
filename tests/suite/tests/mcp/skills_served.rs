//! Agent Skills served over MCP (`ServeOptions::skills`, `iris serve` on an
//! agent file with `skills:`): the catalog as `activate_skill`, answered
//! beside the executor, each session's activations its own, and each
//! skill's files as read-only resources.

use std::sync::Arc;

use iris::mcp::server::ServeOptions;

use super::peers;
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
    let (url, stop) = peers::serve_http(Arc::new(executor), options).await;
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
    // The caller sees the skill's address, never a path of the server's.
    let shown = text(&first);
    let served_path = project.path().to_string_lossy();
    assert!(
        shown.contains("folder=\"skill://release-notes/\"") && !shown.contains(&*served_path),
        "{shown}"
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

/// A served workspace never serves what the agent is made of: the agent
/// file (`ServeOptions::hidden`), a served skill's folder, `.iris/`. A
/// caller who may write cannot rewrite them, nor read them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_file_tools_never_touch_the_agent_its_skills_or_iris_state() {
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::write(root.join("agent.yaml"), "name: desk\nauth: {}\n").unwrap();
    let folder = root.join("skills/release-notes");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Write release notes.\n---\nGroup them.\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".iris")).unwrap();
    std::fs::write(root.join(".iris/runs.db"), "runs").unwrap();
    std::fs::write(root.join("notes.txt"), "open\n").unwrap();
    let found = SkillRoots::new()
        .with_root(root.join("skills"), SkillScope::User, Strictness::Strict)
        .find();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut registry = ToolRegistry::new();
    iris::fs::register_file_tools(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(iris::RulePolicy::new().write(iris::Rule::Allow))
        .build()
        .unwrap();
    let options = ServeOptions {
        workspace: root.to_path_buf(),
        skills: Some(Skills::new(found.skills)),
        hidden: vec![(
            root.join("agent.yaml"),
            "the file of agent `desk`".to_owned(),
        )],
        ..ServeOptions::default()
    };
    let (url, stop) = peers::serve_http(Arc::new(executor), options).await;
    let client = ().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap();
    let call = |name: &str, arguments: Value| {
        CallToolRequestParams::new(name.to_owned())
            .with_arguments(arguments.as_object().unwrap().clone())
    };
    for (tool, arguments, what) in [
        (
            "read_file",
            json!({"path": "agent.yaml"}),
            "the file of agent `desk`",
        ),
        (
            "write_file",
            json!({"path": "agent.yaml", "content": "name: desk\n"}),
            "the file of agent `desk`",
        ),
        (
            "read_file",
            json!({"path": "skills/release-notes/SKILL.md"}),
            "the folder of skill `release-notes`",
        ),
        (
            "write_file",
            json!({"path": "skills/release-notes/SKILL.md", "content": "x"}),
            "the folder of skill `release-notes`",
        ),
        (
            "read_file",
            json!({"path": ".iris/runs.db"}),
            "Iris's own state",
        ),
    ] {
        let result = client.call_tool(call(tool, arguments)).await.unwrap();
        let said = text(&result);
        assert_eq!(result.is_error, Some(true), "{tool}: {said}");
        assert!(said.contains(what), "{tool}: {said}");
    }
    let open = client
        .call_tool(call("read_file", json!({"path": "notes.txt"})))
        .await
        .unwrap();
    assert!(text(&open).contains("open"), "{open:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("agent.yaml")).unwrap(),
        "name: desk\nauth: {}\n"
    );
    stop.cancel();
}
