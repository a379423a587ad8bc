//! The MCP HTTP server under load from one client (findings: 1,624
//! sessions, each with a search index of its own, aborted a 3 GiB server,
//! and ended sessions kept their runs): sessions past the cap are refused
//! with a clear error, and an ended session frees its place and its run.

use std::sync::Arc;
use std::time::Duration;

use iris::mcp::client::{McpClient, McpExposure, McpServerConfig};
use iris::mcp::server::ServeOptions;
use iris::serde_json::json;
use iris::{Rule, RulePolicy, RunId, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};

use super::peers;

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
    raw_initialize_with(url, "").await
}

/// As [`raw_initialize`], with extra header lines.
async fn raw_initialize_with(url: &str, headers: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    raw_post(url, headers, body).await
}

/// A POST of `body` sent by hand, with extra header lines, and the whole
/// answer.
async fn raw_post(url: &str, headers: &str, body: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\n{headers}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
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
    let (url, stop) = peers::serve_http(Arc::clone(&executor), options).await;

    let first = McpClient::connect(config(&url)).await.unwrap();
    let _second = McpClient::connect(config(&url)).await.unwrap();
    let refused = McpClient::connect(config(&url))
        .await
        .expect_err("a third session is over the cap");
    let message = refused.to_string();
    assert!(message.contains("HTTP 503"), "{message}");
    // The client library shows the status only; the answer says why, and
    // when to come back (a full server is not a broken one).
    let answer = raw_initialize(&url).await;
    assert!(
        answer.starts_with("HTTP/1.1 503")
            && answer.to_ascii_lowercase().contains("retry-after: 5")
            && answer.contains("maximum of 2 MCP sessions"),
        "{answer}"
    );

    // A call through the first session gives it a run on the server.
    assert_eq!(square_through(&first, 3).await, "9");
    assert_eq!(executor.ledger().len(), 1, "the session's run is held");

    // The first session ends: its place is free again, and its run is
    // forgotten.
    first.close();
    assert!(
        connect_once_free(&url).await.is_some(),
        "an ended session frees its place"
    );
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

async fn served(options: ServeOptions) -> (String, iris::executor::CancellationToken) {
    let mut tools = ToolRegistry::new();
    tools.register(Square).unwrap();
    serving(ToolExecutor::builder(tools).build().unwrap(), options).await
}

/// `executor` served on a free loopback port: its URL, and what stops it.
async fn serving(
    executor: ToolExecutor,
    options: ServeOptions,
) -> (String, iris::executor::CancellationToken) {
    serving_shared(Arc::new(executor), options).await
}

/// As [`serving`], for an executor the test keeps a handle on.
async fn serving_shared(
    executor: Arc<ToolExecutor>,
    options: ServeOptions,
) -> (String, iris::executor::CancellationToken) {
    let (url, stop) = peers::serve_http(executor, options).await;
    (url, stop)
}

/// A page from another site (DNS rebinding, a malicious tab) cannot call
/// the server; a page on this machine and a client that is no browser can.
#[tokio::test]
async fn requests_from_unlisted_origins_are_refused() {
    let (url, stop) = served(ServeOptions::default()).await;
    let foreign = raw_initialize_with(&url, "Origin: http://attacker.example\r\n").await;
    assert!(foreign.starts_with("HTTP/1.1 403"), "{foreign}");
    let local = raw_initialize_with(&url, "Origin: http://localhost:5173\r\n").await;
    assert!(local.starts_with("HTTP/1.1 200"), "{local}");
    assert!(raw_initialize(&url).await.starts_with("HTTP/1.1 200"));
    stop.cancel();

    let (url, stop) = served(ServeOptions {
        allowed_origins: vec!["https://app.example.com:443".to_owned()],
        ..ServeOptions::default()
    })
    .await;
    let listed = raw_initialize_with(&url, "Origin: https://app.example.com\r\n").await;
    assert!(listed.starts_with("HTTP/1.1 200"), "{listed}");
    let local = raw_initialize_with(&url, "Origin: http://localhost:5173\r\n").await;
    assert!(local.starts_with("HTTP/1.1 403"), "{local}");
    stop.cancel();
}

/// Slowloris: connections that send nothing, or a request a byte at a
/// time, hold at most the connection cap, and only until the deadline; a
/// connection still waiting for its first whole request gives its place
/// to a newcomer when the server is full.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_cannot_hold_the_server() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let deadline = Duration::from_millis(400);
    let (url, stop) = served(ServeOptions {
        max_connections: 2,
        request_timeout: deadline,
        ..ServeOptions::default()
    })
    .await;
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    // One sends half a head, one a whole head and a byte of its body.
    let mut half_head = tokio::net::TcpStream::connect(&address).await.unwrap();
    half_head
        .write_all(b"POST /mcp HTTP/1.1\r\n")
        .await
        .unwrap();
    let mut slow_body = tokio::net::TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{"
    );
    slow_body.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;

    // Both places are held: a third connection takes the half head's
    // place (it sent no whole request), which is cut at once.
    let served = raw_initialize(&url).await;
    assert!(served.starts_with("HTTP/1.1 200"), "{served}");
    let mut answer = Vec::new();
    let read = tokio::time::timeout(
        Duration::from_millis(300),
        half_head.read_to_end(&mut answer),
    );
    assert!(read.await.is_ok(), "the half head gave its place");

    // Past the deadline the slow body is refused with 408.
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), slow_body.read_to_end(&mut answer));
    assert!(read.await.is_ok(), "the slow body is cut off");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    stop.cancel();
}

/// Connects to `address` from the loopback address `from` and sends half
/// a request head, holding the connection.
async fn half_sent_from(address: &str, from: [u8; 4]) -> Option<tokio::net::TcpStream> {
    use tokio::io::AsyncWriteExt as _;
    let socket = tokio::net::TcpSocket::new_v4().ok()?;
    socket
        .bind((std::net::Ipv4Addr::from(from), 0).into())
        .ok()?;
    let mut stream = socket.connect(address.parse().ok()?).await.ok()?;
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")
        .await
        .ok()?;
    Some(stream)
}

/// A flood of half-sent requests without a token, from one address
/// (1,100 connections) and then from twenty (more than every place),
/// shuts no caller out: one address holds its share of anonymous
/// connections, and a caller who sends a whole request takes the place of
/// the oldest connection that sent none, at once, each time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_half_sent_requests_shuts_no_caller_out() {
    let (url, stop) = served(ServeOptions {
        max_connections: 64,
        max_anonymous_per_address: 16,
        ..ServeOptions::default()
    })
    .await;
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut held = Vec::new();
    for at in 0..1_100 {
        // The first ones are those the server may keep; the rest are
        // refused, and let go here too (descriptors are few on some hosts).
        if let Some(stream) = half_sent_from(&address, [127, 0, 0, 2]).await
            && at < 64
        {
            held.push(stream);
        }
    }
    for last in 3..23 {
        for _ in 0..16 {
            if let Some(stream) = half_sent_from(&address, [127, 0, 0, last]).await {
                held.push(stream);
            }
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = std::time::Instant::now();
    for _ in 0..10 {
        let answer = raw_initialize(&url).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "ten callers got in under the flood, in {took:?} (never waiting out the header deadline)"
    );
    drop(held);
    stop.cancel();
}

/// Return a long report.
#[iris::tool(read_only)]
fn long_report() -> String {
    (0..2_000)
        .flat_map(|i| ["line ".to_owned(), i.to_string(), "\n".to_owned()])
        .collect()
}

/// Two clients of one server: each reads only the artifacts its own calls
/// produced, by `resources/read` or by `read_file`, never the other's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_reads_only_the_artifacts_its_own_calls_produced() {
    use rmcp::ServiceExt as _;
    use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams};
    use rmcp::transport::StreamableHttpClientTransport;

    // The raw MCP client's reqwest needs a TLS provider, as Iris's own
    // clients install.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let workspace = tempfile::tempdir().unwrap();
    let mut tools = ToolRegistry::new();
    tools.register(LongReport).unwrap();
    iris::fs::register_file_tools(&mut tools).unwrap();
    let executor = ToolExecutor::builder(tools)
        .max_result_chars(500)
        .build()
        .unwrap();
    let options = ServeOptions {
        workspace: workspace.path().to_owned(),
        ..ServeOptions::default()
    };
    let (url, stop) = serving(executor, options).await;

    let owner = ().serve(StreamableHttpClientTransport::from_uri(url.clone())).await.unwrap();
    let other = ().serve(StreamableHttpClientTransport::from_uri(url.clone())).await.unwrap();
    let preview = owner
        .call_tool(CallToolRequestParams::new("long_report"))
        .await
        .unwrap();
    let preview = serde_json::to_value(&preview).unwrap();
    let text = preview["content"][0]["text"].as_str().unwrap();
    let start = text
        .find("artifact://")
        .expect("the preview names its artifact");
    let handle: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '/'))
        .collect();

    let whole = owner
        .read_resource(ReadResourceRequestParams::new(handle.clone()))
        .await
        .expect("the session that made it reads it");
    assert!(serde_json::to_string(&whole).unwrap().contains("line 1999"));

    let refused = other
        .read_resource(ReadResourceRequestParams::new(handle.clone()))
        .await
        .expect_err("another session cannot read it");
    assert!(
        refused
            .to_string()
            .contains("not named by a result of this session"),
        "{refused}"
    );
    let by_file = other
        .call_tool(
            CallToolRequestParams::new("read_file")
                .with_arguments(json!({"path": handle}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let by_file = serde_json::to_value(&by_file).unwrap();
    assert_eq!(by_file["isError"], true, "{by_file}");
    assert!(
        by_file["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("no result of this run named it"),
        "{by_file}"
    );
    stop.cancel();
}

/// Finding: each request without a session built a whole server (22× the
/// cost of a request in a session). Requests without a session take no
/// session's place and leave no run behind: with the one place held, they
/// are answered, the held session keeps working, and after it ends a new
/// session connects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_a_session_take_no_place() {
    let mut tools = ToolRegistry::new();
    tools.register(Square).unwrap();
    let executor = Arc::new(ToolExecutor::builder(tools).build().unwrap());
    let options = ServeOptions {
        max_sessions: 1,
        ..ServeOptions::default()
    };
    let (url, stop) = serving_shared(Arc::clone(&executor), options).await;
    let held = McpClient::connect(config(&url)).await.unwrap();

    let versioned = "MCP-Protocol-Version: 2026-07-28\r\n";
    let discover = r#"{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let call = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"square","arguments":{"value":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let list = r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers = |method: &str| format!("{versioned}Mcp-Method: {method}\r\n");
    for _ in 0..50 {
        let answer = raw_post(&url, &headers("server/discover"), discover).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        let answer = raw_post(&url, &headers("tools/call\r\nMcp-Name: square"), call).await;
        assert!(
            answer.starts_with("HTTP/1.1 200") && answer.contains(r#""text":"9""#),
            "{answer}"
        );
        let answer = raw_post(&url, &headers("tools/list"), list).await;
        assert!(answer.contains(r#""name":"square""#), "{answer}");
    }
    // Each request's run ended with it; only the held session's remains.
    assert!(executor.ledger().len() <= 1, "{}", executor.ledger().len());

    // The held session still works, and holds the only place.
    assert_eq!(square_through(&held, 4).await, "16");
    let refused = raw_initialize(&url).await;
    assert!(refused.contains("maximum of 1 MCP sessions"), "{refused}");
    held.close();
    assert!(
        connect_once_free(&url).await.is_some(),
        "the ended session's place is free"
    );
    stop.cancel();
}

/// `square(value)` called through `client`'s session, as text.
async fn square_through(client: &McpClient, value: i64) -> String {
    let mut local = ToolRegistry::new();
    client.register_into(&mut local).unwrap();
    let calls = ToolExecutor::builder(local)
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()
        .unwrap();
    let cx = ToolContext::builder(std::env::temp_dir(), RunId::new("client")).build();
    let call = ToolUseBlock::new("c1", "capped__square", json!({ "value": value }));
    let outcome = calls.execute_one(call, &cx).await;
    outcome.result().unwrap().text_content()
}

/// A new session, once a place is free (an ended session's place frees a
/// moment after it closes); `None` after 5 s.
async fn connect_once_free(url: &str) -> Option<McpClient> {
    for _ in 0..100 {
        if let Ok(client) = McpClient::connect(config(url)).await {
            return Some(client);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

/// Rereading the public metadata over kept-alive connections pins no
/// place: a connection never let in is closed with that answer too, so a
/// caller with a token still gets in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rereading_the_metadata_over_kept_connections_pins_no_place() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let _ = rustls::crypto::ring::default_provider().install_default();
    let auth = iris::mcp::gateway::GatewayAuth::new(
        "https://gateway.test/mcp",
        vec![iris::mcp::gateway::TokenIssuer::new("http://127.0.0.1:9")],
    )
    .rule(iris::mcp::gateway::AccessRule {
        tools: vec!["*".to_owned()],
        ..iris::mcp::gateway::AccessRule::default()
    });
    let (url, stop) = served(ServeOptions {
        auth: Some(auth),
        max_connections: 4,
        ..ServeOptions::default()
    })
    .await;
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let request = format!(
        "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {address}\r\n\r\n"
    );
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        let read =
            tokio::time::timeout(Duration::from_secs(3), stream.read_to_end(&mut answer)).await;
        assert!(read.is_ok(), "the metadata answer closes the connection");
        assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200"));
        held.push(stream);
    }
    // A newcomer is answered (401 for its made-up token), not shut out.
    let answer = raw_initialize_with(&url, "Authorization: Bearer made-up\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    drop(held);
    stop.cancel();
}

/// A `tools/call` whose params are not a call's (no name, a name that is
/// not a string, arguments that are not an object) is an invalid-params
/// error (-32602) naming what is wrong, not "method not found".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_with_malformed_params_is_invalid_params() {
    let (url, stop) = served(ServeOptions::default()).await;
    let versioned = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n";
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    for params in [
        format!(r#"{{"arguments":{{"value":3}},{meta}}}"#),
        format!(r#"{{"name":5,{meta}}}"#),
        format!(r#"{{"name":"square","arguments":"value=3",{meta}}}"#),
    ] {
        let call = format!(r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{params}}}"#);
        let answer = raw_post(&url, versioned, &call).await;
        assert!(answer.contains("-32602"), "{params}: {answer}");
        assert!(!answer.contains("-32601"), "{params}: {answer}");
    }
    stop.cancel();
}

/// Write a line.
#[iris::tool(write)]
fn write_line(
    /// The line.
    text: String,
) -> String {
    format!("written: {text}")
}

/// Finding: sessions without a principal shared one executor-wide cap of
/// waiting calls: one client's unanswered approvals made another session's
/// approved write refused ("3 calls already wait for one"). With no
/// principal, the cap holds for each session alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_principal_each_session_has_its_own_cap_of_waiting_calls() {
    use rmcp::ServiceExt as _;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;

    use super::peers::Person;

    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut tools = ToolRegistry::new();
    tools.register(WriteLine).unwrap();
    let executor = ToolExecutor::builder(tools)
        .max_pending_approvals(2)
        .build()
        .unwrap();
    let (url, stop) = serving(executor, ServeOptions::default()).await;
    let write = |text: &str| {
        CallToolRequestParams::new("write_line").with_arguments(
            json!({"text": text})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        )
    };

    // The first client's person is away: two writes wait, a third is
    // refused (its own cap).
    let away = Arc::new(
        Person::Away
            .serve(StreamableHttpClientTransport::from_uri(url.clone()))
            .await
            .unwrap(),
    );
    let mut waiting = Vec::new();
    for i in 0..2 {
        let away = Arc::clone(&away);
        let call = write(&format!("away {i}"));
        waiting.push(tokio::spawn(async move { away.call_tool(call).await }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let third = away.call_tool(write("away 3")).await.unwrap();
    let third = serde_json::to_value(&third).unwrap();
    assert_eq!(third["isError"], true, "{third}");

    // Another client's approved write runs.
    let present = Person::Approves
        .serve(StreamableHttpClientTransport::from_uri(url.clone()))
        .await
        .unwrap();
    let written = present.call_tool(write("present")).await.unwrap();
    let written = serde_json::to_value(&written).unwrap();
    assert_eq!(
        written["content"][0]["text"], "written: present",
        "{written}"
    );
    for call in waiting {
        call.abort();
    }
    stop.cancel();
}
