//! A server's catalog that changes while it is used: after
//! `notifications/tools/list_changed` the registry is swapped at once, a
//! call in flight finishes, a removed tool answers `unknown_tool`, a new
//! deferred tool is found by `tool_search`; and an Iris registry that
//! changes tells its MCP clients so.

use std::sync::Arc;
use std::time::Duration;

use iris::definition::{ToolDefinition, ToolName};
use iris::discovery::{Discovery, ToolSearch};
use iris::mcp::client::{McpClient, McpExposure, McpServerConfig};
use iris::mcp::server::{McpHttpServer, ServeOptions};
use iris::registry::SharedRegistry;
use iris::tool::DynamicTool;
use iris::{
    Rule, RulePolicy, ToolContext, ToolErrorKind, ToolExecutor, ToolRegistry, ToolResult,
    ToolUseBlock,
};
use serde_json::{Value, json};

use crate::peers::{folder, python};

/// Return the square of an integer.
#[iris::tool(read_only)]
fn square(
    /// The integer to square.
    value: i64,
) -> i64 {
    value * value
}

/// Waits until `registry` has (or no longer has) a tool called `name`.
async fn until(registry: &SharedRegistry, name: &str, present: bool) {
    let mut changes = registry.subscribe();
    let waited = tokio::time::timeout(Duration::from_secs(20), async {
        while registry.snapshot().resolve(name).is_some() != present {
            changes.changed().await.unwrap();
        }
    })
    .await;
    assert!(
        waited.is_ok(),
        "`{name}` {} within 20 s: {:?}",
        if present {
            "did not appear"
        } else {
            "did not go"
        },
        registry.snapshot()
    );
}

async fn call(
    executor: &ToolExecutor,
    cx: &ToolContext,
    id: &str,
    name: &str,
    input: Value,
) -> ToolResult {
    executor
        .execute_one(ToolUseBlock::new(id, name, input), cx)
        .await
        .result()
        .cloned()
        .expect("allowed by policy")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_catalog_is_swapped_in_while_a_call_finishes() {
    let script = folder().join("changing_server.py");
    let config = McpServerConfig::stdio("c", python(), [script.to_string_lossy().into_owned()])
        .with_exposure(McpExposure::Deferred)
        .with_timeout(Duration::from_secs(10));
    let client = McpClient::connect(config).await.expect("connects");

    let mut registry = ToolRegistry::new();
    registry
        .register(Square)
        .unwrap()
        .register(ToolSearch)
        .unwrap();
    let shared = SharedRegistry::new(registry);
    client.register_shared(&shared).unwrap();
    let executor = ToolExecutor::builder(shared.clone())
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()
        .unwrap();
    let discovery = Arc::new(
        Discovery::builder(executor.shared_registry())
            .build()
            .unwrap(),
    );
    let run = iris::RunId::new("changing");
    let offered = ["c__old", "c__change", "c__stay", "c__fresh", "tool_search"];
    let cx = ToolContext::builder(std::env::temp_dir(), run)
        .offered(offered.map(|n| ToolName::new(n).unwrap()))
        .shared_state(Arc::clone(&discovery))
        .build();

    // `old` answers after a second; the catalog changes meanwhile.
    let in_flight = {
        let (executor, cx) = (executor.clone(), cx.clone());
        tokio::spawn(async move { call(&executor, &cx, "1", "c__old", json!({})).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let changed = call(&executor, &cx, "2", "c__change", json!({})).await;
    assert_eq!(changed.text_content(), "changed", "{changed:?}");
    until(&shared, "c__fresh", true).await;
    assert!(shared.snapshot().resolve("c__old").is_none());

    // The call that started before the swap finishes with its tool.
    let old = in_flight.await.unwrap();
    assert_eq!(old.text_content(), "old ran", "{old:?}");
    // The next one finds no such tool, and nothing is sent.
    let gone = call(&executor, &cx, "3", "c__old", json!({})).await;
    assert_eq!(
        gone.error_kind(),
        Some(ToolErrorKind::UnknownTool),
        "{gone:?}"
    );
    // Untouched tools and new ones run.
    let stay = call(&executor, &cx, "4", "c__stay", json!({})).await;
    assert_eq!(stay.text_content(), "stay ran", "{stay:?}");
    let fresh = call(&executor, &cx, "5", "c__fresh", json!({})).await;
    assert_eq!(fresh.text_content(), "fresh ran", "{fresh:?}");

    // The new deferred tool is found by `tool_search`.
    let found = call(
        &executor,
        &cx,
        "6",
        "tool_search",
        json!({"intents": ["convert a temperature from Celsius to Fahrenheit"]}),
    )
    .await;
    assert!(
        found
            .data()
            .is_some_and(|d| d["loaded"] == json!(["c__fresh"])),
        "{found:?}"
    );
    // The client's own view follows.
    let names: Vec<String> = client.definitions().map(|d| d.name().to_string()).collect();
    assert!(names.contains(&"c__fresh".to_owned()), "{names:?}");
    assert!(!names.contains(&"c__old".to_owned()), "{names:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_registry_that_changes_tells_its_clients() {
    let mut tools = ToolRegistry::new();
    tools.register(Square).unwrap();
    let served = SharedRegistry::new(tools);
    let executor = Arc::new(ToolExecutor::builder(served.clone()).build().unwrap());
    let http = McpHttpServer::bind(
        executor,
        ([127, 0, 0, 1], 0).into(),
        ServeOptions::default(),
    )
    .await
    .unwrap();
    let url = http.url();
    let stop = http.shutdown_token();
    tokio::spawn(http.run());

    let client =
        McpClient::connect(McpServerConfig::http("served", url).with_exposure(McpExposure::Eager))
            .await
            .unwrap();
    let local = SharedRegistry::new(ToolRegistry::new());
    client.register_shared(&local).unwrap();
    assert!(local.snapshot().resolve("served__square").is_some());

    // The serving side gains a tool: the client's registry follows.
    served
        .update(|registry| {
            let definition =
                ToolDefinition::builder(ToolName::new("cube")?, "Return the cube of an integer.")
                    .input_schema(json!({
                        "type": "object",
                        "properties": {"value": {"type": "integer"}},
                        "required": ["value"],
                    }))
                    .capability(iris::definition::Capability::ReadOnly)
                    .build()?;
            registry.register(DynamicTool::new(definition, |input, _cx| async move {
                let value = input["value"].as_i64().unwrap_or_default();
                ToolResult::text((value * value * value).to_string())
            }))?;
            Ok::<_, Box<dyn std::error::Error>>(())
        })
        .unwrap();
    until(&local, "served__cube", true).await;

    let executor = ToolExecutor::builder(local.clone())
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()
        .unwrap();
    let cx = ToolContext::builder(std::env::temp_dir(), iris::RunId::new("served")).build();
    let cube = call(&executor, &cx, "1", "served__cube", json!({"value": 3})).await;
    assert_eq!(cube.text_content(), "27", "{cube:?}");
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keeping_tools_current_outside_a_runtime_says_what_to_do() {
    let server = env!("CARGO_BIN_EXE_iris-mcp-test-server");
    let client = McpClient::connect(McpServerConfig::stdio("s", server, ["stdio"]))
        .await
        .unwrap();
    let shared = SharedRegistry::new(ToolRegistry::new());
    // A plain thread has no Tokio runtime for the refresh to run on.
    let refused = std::thread::scope(|scope| {
        scope
            .spawn(|| client.register_shared(&shared))
            .join()
            .unwrap()
    });
    let message = refused.unwrap_err().to_string();
    assert!(message.contains("needs a Tokio runtime"), "{message}");
    assert!(shared.snapshot().is_empty(), "nothing registered half-way");
    client.register_shared(&shared).unwrap();
    assert!(shared.snapshot().resolve("s__square").is_some());
}
