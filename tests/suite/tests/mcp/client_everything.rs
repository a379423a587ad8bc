//! The client against `@modelcontextprotocol/server-everything` over
//! stdio, through the executor: the catalog listed and named, calls with
//! text, numbers, an image, resources and structured content, arguments
//! refused before they leave, a timeout, progress passed to observers,
//! and a server killed mid-call.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use iris::definition::Capability;
use iris::mcp::client::{McpClient, McpServerConfig};
use iris::{
    ApprovalDecision, RulePolicy, ToolContext, ToolErrorKind, ToolExecutor, ToolOutcome,
    ToolRegistry, ToolUseBlock,
};
use serde_json::json;

use crate::peers::npm_bin;

fn everything() -> McpServerConfig {
    // Node takes a while to start on a busy machine.
    McpServerConfig::stdio("everything", npm_bin("mcp-server-everything"), ["stdio"])
        .with_timeout(Duration::from_secs(20))
        .with_startup_timeout(Duration::from_secs(120))
}

fn executor(client: &McpClient) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).unwrap();
    // Every remote tool asks by default; these tests approve by policy.
    ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(iris::Rule::Allow))
        .build()
        .unwrap()
}

fn cx() -> ToolContext {
    ToolContext::builder(std::env::temp_dir(), iris::RunId::new("mcp")).build()
}

async fn call(executor: &ToolExecutor, name: &str, input: serde_json::Value) -> iris::ToolResult {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let id = format!("c{}", NEXT.fetch_add(1, Ordering::Relaxed));
    match executor
        .execute_one(ToolUseBlock::new(id, name, input), &cx())
        .await
    {
        ToolOutcome::Finished { result, .. } => result,
        ToolOutcome::Waiting(request) => panic!("unexpected approval request {request:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalog_is_listed_named_and_untrusted_by_default() {
    let client = McpClient::connect(everything()).await.expect("connects");
    let names: Vec<String> = client.definitions().map(|d| d.name().to_string()).collect();
    assert!(names.contains(&"everything__echo".to_owned()), "{names:?}");
    assert!(
        names.contains(&"everything__get-sum".to_owned()),
        "{names:?}"
    );
    assert!(client.report().renamed.is_empty(), "{:?}", client.report());
    let echo = client
        .definitions()
        .find(|d| d.name() == "everything__echo")
        .unwrap();
    assert_eq!(echo.description(), "Echoes back the input string");
    assert_eq!(echo.input_schema()["required"], json!(["message"]));
    assert!(
        matches!(echo.origin(), iris::definition::ToolOrigin::Mcp { server, wire_name } if server == "everything" && wire_name == "echo")
    );
    // The server says read-only; untrusted, that is not believed.
    let caps = echo.capabilities();
    assert!(caps.contains(Capability::Write) && caps.contains(Capability::Network));

    let trusted = McpClient::connect(everything().with_trusted_annotations(true))
        .await
        .unwrap();
    let echo = trusted
        .definitions()
        .find(|d| d.name() == "everything__echo")
        .unwrap();
    assert!(echo.capabilities().is_read_only());
    assert!(echo.capabilities().is_concurrency_safe());
    assert!(!echo.capabilities().contains(Capability::Network));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_run_through_the_executor_and_results_map() {
    let client = McpClient::connect(everything()).await.unwrap();
    let executor = executor(&client);

    let echo = call(&executor, "everything__echo", json!({"message": "hi"})).await;
    assert!(!echo.is_error(), "{echo:?}");
    assert!(echo.text_content().contains("hi"), "{echo:?}");

    let sum = call(&executor, "everything__get-sum", json!({"a": 2, "b": 3})).await;
    assert!(sum.text_content().contains('5'), "{sum:?}");

    let image = call(&executor, "everything__get-tiny-image", json!({})).await;
    assert!(!image.is_error(), "{image:?}");
    assert!(
        image.content().iter().any(
            |b| matches!(b, iris::content::ContentBlock::Image(i) if i.media_type == "image/png")
        ),
        "{image:?}"
    );

    let structured = call(
        &executor,
        "everything__get-structured-content",
        json!({"location": "Chicago"}),
    )
    .await;
    assert!(structured.data().is_some(), "{structured:?}");

    let links = call(
        &executor,
        "everything__get-resource-links",
        json!({"count": 2}),
    )
    .await;
    assert!(
        links.text_content().contains("[resource link]"),
        "{links:?}"
    );

    // Checked against the server's schema before anything is sent.
    let refused = call(
        &executor,
        "everything__get-sum",
        json!({"a": "two", "b": 3}),
    )
    .await;
    assert_eq!(refused.error_kind(), Some(ToolErrorKind::InvalidArguments));
    assert!(refused.text_content().contains("$.a"), "{refused:?}");
    assert_eq!(client.stats().calls, 5, "the refused call never left");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_tool_waits_for_approval_under_the_default_policy() {
    let client = McpClient::connect(everything()).await.unwrap();
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry).build().unwrap();
    let cx = cx();
    let outcome = executor
        .execute_one(
            ToolUseBlock::new("w", "everything__echo", json!({"message": "x"})),
            &cx,
        )
        .await;
    let ToolOutcome::Waiting(request) = outcome else {
        panic!("a remote tool must ask first, got {outcome:?}");
    };
    assert_eq!(client.stats().calls, 0, "nothing sent before approval");
    let approved = executor
        .resume("w", ApprovalDecision::approve(&request), &cx)
        .await
        .unwrap();
    assert!(approved.result().unwrap().text_content().contains('x'));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_call_times_out_and_a_killed_server_is_reconnected() {
    let client = McpClient::connect(everything().with_timeout(Duration::from_secs(2)))
        .await
        .unwrap();
    let executor = Arc::new(executor(&client));
    let slow = call(
        &executor,
        "everything__trigger-long-running-operation",
        json!({"duration": 30, "steps": 3}),
    )
    .await;
    assert_eq!(slow.error_kind(), Some(ToolErrorKind::Timeout), "{slow:?}");
    assert!(slow.text_content().contains("within 2 s"), "{slow:?}");

    // Kill the server while a call is in flight.
    let in_flight = {
        let executor = Arc::clone(&executor);
        tokio::spawn(async move {
            call(
                &executor,
                "everything__trigger-long-running-operation",
                json!({"duration": 10, "steps": 2}),
            )
            .await
        })
    };
    // Once the call has gone out (and a little more), the server dies.
    while client.stats().calls < 2 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    kill(client.process_id().expect("a stdio server has a process"));
    let lost = in_flight.await.unwrap();
    assert_eq!(
        lost.error_kind(),
        Some(ToolErrorKind::Execution),
        "{lost:?}"
    );
    assert!(
        lost.text_content()
            .contains("MCP server `everything` went away"),
        "{lost:?}"
    );
    let again = call(&executor, "everything__echo", json!({"message": "back"})).await;
    assert!(again.text_content().contains("back"), "{again:?}");
    assert_eq!(again.stats().get("mcp_reconnected"), Some(&json!(true)));
    assert_eq!(client.stats().reconnects, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_progress_reaches_observers_as_tool_progress() {
    let client = McpClient::connect(everything()).await.unwrap();
    let seen = Arc::new(crate::peers::Progress::default());
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(iris::Rule::Allow))
        .shared_observer(Arc::clone(&seen) as Arc<dyn iris::observe::RunEventObserver>)
        .build()
        .unwrap();
    let done = executor
        .execute_one(
            ToolUseBlock::new(
                "slow",
                "everything__trigger-long-running-operation",
                json!({"duration": 2, "steps": 4}),
            ),
            &cx(),
        )
        .await;
    let done = done.result().unwrap();
    assert!(done.error_kind().is_none(), "{done:?}");
    let events = seen.events(4).await;
    assert_eq!(events.len(), 4, "one event per step: {events:?}");
    for (step, event) in events.iter().enumerate() {
        let iris::observe::RunEvent::ToolProgress {
            call_id,
            tool,
            progress,
            total,
            ..
        } = event
        else {
            unreachable!("only progress is kept");
        };
        assert_eq!(call_id, "slow");
        assert_eq!(tool.as_str(), "everything__trigger-long-running-operation");
        #[allow(clippy::cast_precision_loss, reason = "four steps")]
        let expected = (step + 1) as f64;
        assert!((progress - expected).abs() < f64::EPSILON, "{events:?}");
        assert_eq!(*total, Some(4.0), "{events:?}");
    }
}

/// Kills the process `pid` at once (as a crash would end it).
fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "process {pid} could not be killed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_reaches_server_everything_over_streamable_http() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = tokio::process::Command::new(npm_bin("mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // It says when it listens (on either stream, depending on the version);
    // Node takes a while to start on a busy machine. Both streams are read
    // to their end, so the server never blocks on a full pipe.
    let (listening, heard) = tokio::sync::oneshot::channel();
    let mut listening = Some(listening);
    let (stdout, stderr) = (server.stdout.take().unwrap(), server.stderr.take().unwrap());
    tokio::spawn(async move {
        use tokio::io::AsyncBufReadExt as _;
        let mut out = tokio::io::BufReader::new(stdout).lines();
        let mut err = tokio::io::BufReader::new(stderr).lines();
        let (mut out_open, mut err_open) = (true, true);
        while out_open || err_open {
            let line = tokio::select! {
                line = out.next_line(), if out_open => line.ok().flatten().or_else(|| { out_open = false; None }),
                line = err.next_line(), if err_open => line.ok().flatten().or_else(|| { err_open = false; None }),
            };
            if line.is_some_and(|l| l.contains("listening"))
                && let Some(listening) = listening.take()
            {
                let _ = listening.send(());
            }
        }
    });
    tokio::time::timeout(Duration::from_secs(120), heard)
        .await
        .expect("server-everything listens within two minutes")
        .expect("server-everything ended before it listened");
    let config = McpServerConfig::http("everything", format!("http://127.0.0.1:{port}/mcp"))
        .with_startup_timeout(Duration::from_secs(60));
    let client = McpClient::connect(config)
        .await
        .expect("server-everything answers over HTTP");
    let executor = executor(&client);
    let sum = call(&executor, "everything__get-sum", json!({"a": 20, "b": 22})).await;
    assert!(sum.text_content().contains("42"), "{sum:?}");
    server.kill().await.unwrap();
}
