//! The Iris client against the Iris server: every page listed, calls
//! through both executors, a structured result carried as data.

use iris::mcp::client::{McpClient, McpExposure, McpServerConfig};
use iris::{RulePolicy, ToolContext, ToolExecutor, ToolOutcome, ToolRegistry, ToolUseBlock};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_is_listed_and_calls_cross_both_executors() {
    let server = env!("CARGO_BIN_EXE_iris-mcp-test-server");
    let config = McpServerConfig::stdio("iris", server, ["stdio", "--padding", "40"]);
    let client = McpClient::connect(config).await.expect("connects");
    // 10 tools and 40 padding tools, 3 to a page: 17 pages.
    assert_eq!(client.definitions().count(), 50);
    // More than 20 tools: deferred behind `tool_search`.
    assert!(
        client
            .definitions()
            .all(|d| d.exposure() == iris::definition::Exposure::Deferred)
    );
    client.close();
    let eager = McpServerConfig::stdio("iris", server, ["stdio"]).with_exposure(McpExposure::Eager);
    let client = McpClient::connect(eager).await.expect("connects");
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(iris::Rule::Allow))
        .build()
        .unwrap();
    let cx = ToolContext::builder(std::env::temp_dir(), iris::RunId::new("iris-to-iris")).build();
    let run = |id: &str, name: &str, input| {
        let call = ToolUseBlock::new(id, name, input);
        let executor = &executor;
        let cx = &cx;
        async move {
            match executor.execute_one(call, cx).await {
                ToolOutcome::Finished { result, .. } => result,
                ToolOutcome::Waiting(request) => panic!("asked: {request:?}"),
            }
        }
    };
    let square = run("a", "iris__square", json!({"value": 12})).await;
    assert_eq!(square.text_content(), "144");
    let weather = run("b", "iris__weather", json!({"city": "Oslo"})).await;
    assert_eq!(
        weather.data(),
        Some(&json!({"city": "Oslo", "celsius": 21.5}))
    );
    // The Iris server asks a person for `delete_note`; this client cannot
    // answer elicitation, so the remote side refuses.
    let refused = run("c", "iris__delete_note", json!({"title": "x"})).await;
    assert!(refused.is_error());
    assert!(
        refused.text_content().contains("approval required"),
        "{refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_reaches_a_server_over_streamable_http() {
    let server = crate::peers::HttpTestServer::start(&["--page-size", "2"]);
    let config = McpServerConfig::http("remote", &server.url).with_exposure(McpExposure::Eager);
    let client = McpClient::connect(config)
        .await
        .expect("connects over HTTP");
    assert_eq!(client.definitions().count(), 10);
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry).build().unwrap();
    let cx = ToolContext::builder(std::env::temp_dir(), iris::RunId::new("over-http")).build();
    // Untrusted: even `square` asks first.
    let outcome = executor
        .execute_one(
            ToolUseBlock::new("s", "remote__square", json!({"value": 9})),
            &cx,
        )
        .await;
    let ToolOutcome::Waiting(request) = outcome else {
        panic!("an untrusted remote tool asks first: {outcome:?}");
    };
    let done = executor
        .resume("s", iris::ApprovalDecision::approve(&request), &cx)
        .await
        .unwrap();
    assert_eq!(done.result().unwrap().text_content(), "81");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_be_reached_keeps_the_cause_as_its_source() {
    use std::error::Error as _;

    // A command that does not exist: the spawn's own error is the source.
    let missing = McpServerConfig::stdio("ghost", "/nonexistent/iris-mcp-server", ["stdio"]);
    let Err(error) = McpClient::connect(missing).await else {
        panic!("a command that does not exist started");
    };
    assert!(
        error.to_string().contains("could not be started"),
        "{error}"
    );
    let cause = error.source().expect("the spawn's error is kept");
    let io = cause
        .downcast_ref::<std::io::Error>()
        .unwrap_or_else(|| panic!("an io::Error, not {cause:?}"));
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);

    // A loopback port nobody listens on: rmcp's error of the `initialize`
    // that could not be sent is the source, naming the address.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = McpServerConfig::http("closed", format!("http://127.0.0.1:{port}/mcp"))
        .with_startup_timeout(std::time::Duration::from_secs(20));
    let Err(error) = McpClient::connect(closed).await else {
        panic!("a closed port was reached");
    };
    let cause = error
        .source()
        .expect("the initialize error is kept")
        .to_string();
    assert!(
        cause.contains("initialize") && cause.contains(&format!("127.0.0.1:{port}")),
        "{cause}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_collision_names_both_tools_and_registers_none() {
    /// Return the square of an integer (a native tool whose name an MCP
    /// tool will want).
    #[iris::tool(name = "iris__square")]
    fn native_square(value: i64) -> i64 {
        value * value
    }

    let server = env!("CARGO_BIN_EXE_iris-mcp-test-server");
    let config =
        McpServerConfig::stdio("iris", server, ["stdio"]).with_exposure(McpExposure::Eager);
    let client = McpClient::connect(config).await.unwrap();
    let mut registry = ToolRegistry::new();
    registry.register(NativeSquare).unwrap();
    let error = client.register_into(&mut registry).unwrap_err().to_string();
    assert!(
        error.contains(
            "tool `iris__square` (`square` of MCP server `iris`) collides with the Rust tool"
        ),
        "{error}"
    );
    assert_eq!(
        registry.len(),
        1,
        "none of the server's tools was registered"
    );
}

/// Calls `name` through a fresh client of the test server started with
/// `args`, which trusts nothing, so every call is approved by policy.
async fn remote(args: &[&str]) -> (McpClient, ToolExecutor) {
    let server = env!("CARGO_BIN_EXE_iris-mcp-test-server");
    let mut all = vec!["stdio"];
    all.extend_from_slice(args);
    let config = McpServerConfig::stdio("s", server, all).with_exposure(McpExposure::Eager);
    let client = McpClient::connect(config).await.unwrap();
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(iris::Rule::Allow))
        .build()
        .unwrap();
    (client, executor)
}

async fn call(
    executor: &ToolExecutor,
    id: &str,
    name: &str,
    input: serde_json::Value,
) -> iris::ToolResult {
    let cx = ToolContext::builder(std::env::temp_dir(), iris::RunId::new("deferred")).build();
    executor
        .execute_one(ToolUseBlock::new(id, name, input), &cx)
        .await
        .result()
        .cloned()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deferred_tools_are_served_listed_or_behind_tool_search() {
    // Listed (the default): a client calls them as listed.
    let (client, executor) = remote(&["--padding", "5", "--deferred"]).await;
    assert!(client.definitions().any(|d| d.name() == "s__padding_0003"));
    let direct = call(&executor, "a", "s__padding_0003", json!({})).await;
    assert_eq!(direct.text_content(), "padding 3", "{direct:?}");

    // Behind `tool_search`: not listed, not callable until found.
    let (client, executor) = remote(&["--padding", "5", "--deferred", "--search"]).await;
    let names: Vec<String> = client.definitions().map(|d| d.name().to_string()).collect();
    assert!(names.contains(&"s__tool_search".to_owned()), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("padding")), "{names:?}");
    let found = call(
        &executor,
        "b",
        "s__tool_search",
        json!({"intents": ["padding tool number 3"]}),
    )
    .await;
    assert!(found.text_content().contains("padding_0003"), "{found:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_tools_progress_crosses_to_the_clients_observers() {
    let server = env!("CARGO_BIN_EXE_iris-mcp-test-server");
    let config = McpServerConfig::stdio("s", server, ["stdio", "--progress"])
        .with_exposure(McpExposure::Eager);
    let client = McpClient::connect(config).await.unwrap();
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).unwrap();
    let seen = std::sync::Arc::new(crate::peers::Progress::default());
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(iris::Rule::Allow))
        .shared_observer(
            std::sync::Arc::clone(&seen) as std::sync::Arc<dyn iris::observe::RunEventObserver>
        )
        .build()
        .unwrap();
    let cx = ToolContext::builder(std::env::temp_dir(), iris::RunId::new("progress")).build();
    let done = executor
        .execute_one(
            ToolUseBlock::new("count", "s__count_slowly", json!({"steps": 3})),
            &cx,
        )
        .await;
    assert_eq!(done.result().unwrap().text_content(), "counted to 3");
    let events = seen.events(3).await;
    let reports: Vec<(f64, Option<f64>, Option<String>)> = events
        .iter()
        .map(|event| match event {
            iris::observe::RunEvent::ToolProgress {
                call_id,
                progress,
                total,
                message,
                ..
            } => {
                assert_eq!(call_id, "count");
                (*progress, *total, message.clone())
            }
            _ => unreachable!("only progress is kept"),
        })
        .collect();
    assert_eq!(
        reports,
        [
            (1.0, Some(3.0), Some("step 1".to_owned())),
            (2.0, Some(3.0), Some("step 2".to_owned())),
            (3.0, Some(3.0), Some("step 3".to_owned())),
        ]
    );
}
