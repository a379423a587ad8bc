//! The MCP HTTP server under load from one client (findings: 1,624
//! sessions, each with a search index of its own, aborted a 3 GiB server,
//! and ended sessions kept their runs): sessions past the cap are refused
//! with a clear error, and an ended session frees its place and its run.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a scenario against a real server fails loudly"
)]

use std::sync::Arc;
use std::time::Duration;

use iris::mcp::{McpClient, McpExposure, McpHttpServer, McpServerConfig, ServeOptions};
use iris::serde_json::json;
use iris::{Rule, RulePolicy, RunId, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};

/// Return the square of an integer.
#[iris::tool(read_only)]
fn square(
    /// The integer.
    value: i64,
) -> i64 {
    value * value
}

/// An `initialize` request sent by hand, and the whole answer.
async fn raw_initialize(url: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let connect = tokio::net::TcpStream::connect(&address);
    let Ok(Ok(mut stream)) = tokio::time::timeout(Duration::from_secs(2), connect).await else {
        return "no connection".to_owned();
    };
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    if !matches!(read, Ok(Ok(_))) {
        return format!("no whole answer: {}", String::from_utf8_lossy(&answer));
    }
    String::from_utf8_lossy(&answer).into_owned()
}

fn config(url: &str) -> McpServerConfig {
    McpServerConfig::http("capped", url.to_owned())
        .with_exposure(McpExposure::Eager)
        .with_startup_timeout(Duration::from_secs(5))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_past_the_cap_are_refused_and_an_ended_one_frees_its_place() {
    let mut tools = ToolRegistry::new();
    tools.register(Square).unwrap();
    let executor = Arc::new(ToolExecutor::builder(tools).build().unwrap());
    let options = ServeOptions {
        max_sessions: 2,
        ..ServeOptions::default()
    };
    let http = McpHttpServer::bind(Arc::clone(&executor), ([127, 0, 0, 1], 0).into(), options)
        .await
        .unwrap();
    let url = http.url();
    let stop = http.shutdown_token();
    tokio::spawn(http.run());

    let first = McpClient::connect(config(&url)).await.unwrap();
    let _second = McpClient::connect(config(&url)).await.unwrap();
    let refused = McpClient::connect(config(&url))
        .await
        .expect_err("a third session is over the cap");
    let message = refused.to_string();
    assert!(message.contains("HTTP 500"), "{message}");
    // The client library shows the status only; the body says why.
    let answer = raw_initialize(&url).await;
    assert!(
        answer.starts_with("HTTP/1.1 500") && answer.contains("maximum of 2 MCP sessions"),
        "{answer}"
    );

    // A call through the first session gives it a run on the server.
    let mut local = ToolRegistry::new();
    first.register_into(&mut local).unwrap();
    let calls = ToolExecutor::builder(local)
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()
        .unwrap();
    let cx = ToolContext::builder(std::env::temp_dir(), RunId::new("client")).build();
    let outcome = calls
        .execute_one(
            ToolUseBlock::new("c1", "capped__square", json!({"value": 3})),
            &cx,
        )
        .await;
    assert_eq!(outcome.result().unwrap().text_content(), "9");
    assert_eq!(executor.ledger().len(), 1, "the session's run is held");

    // The first session ends: its place is free again, and its run is
    // forgotten.
    first.close();
    let mut third = None;
    for _ in 0..100 {
        if let Ok(client) = McpClient::connect(config(&url)).await {
            third = Some(client);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(third.is_some(), "an ended session frees its place");
    assert_eq!(
        executor.ledger().len(),
        0,
        "the ended session's run is gone"
    );
    stop.cancel();
}

/// CPU seconds `pid` has used, from `/proc`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command's closing parenthesis; utime and stime
    // are the 12th and 13th of them, in clock ticks (100 a second).
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    #[allow(clippy::cast_precision_loss, reason = "a few seconds of ticks")]
    let seconds = ticks as f64 / 100.0;
    seconds
}

/// Finding: when file descriptors ran out, the accept loop spun a full core
/// with no back-off, serving no one. A server limited to 64 descriptors is
/// flooded with connections: it waits between failed accepts, and serves
/// again once the flood ends.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_descriptor_table_does_not_spin_the_accept_loop() {
    use tokio::io::AsyncBufReadExt as _;
    let server = env!("CARGO_BIN_EXE_iris-mcp-test-server");
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -n 64 && exec '{server}' http"))
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let url = lines.next_line().await.unwrap().expect("the server's URL");
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();

    // More connections than the server has descriptors, held open.
    let mut flood = Vec::new();
    for _ in 0..200 {
        // Once the backlog is full too, a connect waits: the flood is done.
        let connect = tokio::net::TcpStream::connect(&address);
        match tokio::time::timeout(Duration::from_millis(200), connect).await {
            Ok(Ok(stream)) => flood.push(stream),
            Ok(Err(_)) | Err(_) => break,
        }
    }
    assert!(
        flood.len() > 64,
        "only {} connections were made",
        flood.len()
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = cpu_seconds(pid);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let used = cpu_seconds(pid) - before;
    assert!(
        used < 0.5,
        "the server used {used:.2} s of CPU in 2 s while it could not accept"
    );

    // The flood ends: the server serves again.
    drop(flood);
    let mut answered = false;
    for _ in 0..100 {
        if raw_initialize(&url).await.starts_with("HTTP/1.1 200") {
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        answered,
        "the server accepts again once descriptors are free"
    );
    child.kill().await.unwrap();
}
