//! The gateway under load, side by side in one run: N concurrent clients
//! (1, 10, 100), each an rmcp client over streamable HTTP calling the
//! read-only `square`, against
//!
//! - rmcp's plain `StreamableHttpService` serving the same function with no
//!   authentication (the baseline),
//! - Iris's gateway with authentication on (a JWT from a real OpenID
//!   provider on loopback, `tests/oidc-provider`, checked against its
//!   cached keys, the rules and the per-principal limits on every request),
//! - Iris's gateway without authentication (what the checks cost).
//!
//! Reported: calls per second and p50/p99 latency per side, and the ratios.
//! Goals: with auth on, >= 0.8x rmcp's throughput and p99 <= 1.5x; the
//! token check adds < 50 us per request (p50 at one client, auth on
//! against off). Each side runs three alternating rounds; the best round
//! of each counts.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    reason = "a benchmark harness"
)]

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

const RMCP_SQUARE: &str = env!("CARGO_BIN_EXE_rmcp_square");
const IRIS_SQUARE: &str = env!("CARGO_BIN_EXE_iris_square");
const AUDIENCE: &str = "https://bench.test/mcp";
/// How long each round calls.
const ROUND: Duration = Duration::from_secs(3);
/// Rounds per side and concurrency.
const ROUNDS: usize = 3;

type Client = RunningService<RoleClient, ()>;

/// A child process killed on drop.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `program` with `args` and reads the first line it prints.
fn start(
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
    cwd: Option<&Path>,
) -> (Running, String) {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Running(child), line.trim().to_owned())
}

fn provider_folder() -> PathBuf {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/oidc-provider");
    let installed = Command::new("bash")
        .arg(folder.join("install.sh"))
        .status()
        .unwrap();
    assert!(
        installed.success(),
        "the OpenID provider could not be installed"
    );
    folder
}

async fn token(issuer: &str) -> String {
    let answer: Value = reqwest::Client::new()
        .post(format!("{issuer}/token"))
        .basic_auth("alice", Some("alice-secret"))
        .form(&[
            ("grant_type", "client_credentials"),
            ("scope", "tools:read"),
            ("resource", AUDIENCE),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["access_token"].as_str().unwrap().to_owned()
}

async fn connect(url: &str, token: Option<&str>) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap()
}

/// One side's round: calls per second, p50 and p99.
#[derive(Clone, Copy, Debug)]
struct Round {
    per_second: f64,
    p50: Duration,
    p99: Duration,
}

async fn round(clients: &[std::sync::Arc<Client>]) -> Round {
    let deadline = Instant::now() + ROUND;
    let started = Instant::now();
    // Spawned all at once (collected before any is awaited), so that the
    // clients really call side by side.
    let calls: Vec<_> = clients
        .iter()
        .map(|client| {
            let client = std::sync::Arc::clone(client);
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let arguments = json!({"value": 4}).as_object().unwrap().clone();
                while Instant::now() < deadline {
                    let call =
                        CallToolRequestParams::new("square").with_arguments(arguments.clone());
                    let began = Instant::now();
                    let result = client.peer().call_tool(call).await.unwrap();
                    assert_ne!(result.is_error, Some(true), "{result:?}");
                    latencies.push(began.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies: Vec<Duration> = Vec::new();
    for finished in futures_join(calls.into_iter()).await {
        latencies.extend(finished);
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    let at = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q).round() as usize];
    Round {
        per_second: latencies.len() as f64 / elapsed.as_secs_f64(),
        p50: at(0.50),
        p99: at(0.99),
    }
}

async fn futures_join<T: Send + 'static>(
    handles: impl Iterator<Item = tokio::task::JoinHandle<T>>,
) -> Vec<T> {
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.unwrap());
    }
    out
}

fn best(rounds: &[Round]) -> Round {
    let mut best = rounds[0];
    for r in rounds {
        if r.per_second > best.per_second {
            best.per_second = r.per_second;
        }
        best.p50 = best.p50.min(r.p50);
        best.p99 = best.p99.min(r.p99);
    }
    best
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let keys = std::env::temp_dir().join(format!("iris-gateway-bench-{}", std::process::id()));
    let folder = provider_folder();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let (_provider, ready) = start(
        "node",
        &[folder.join("provider.mjs").to_str().unwrap()],
        &[
            ("PORT", &port),
            ("KEYS_DIR", keys.to_str().unwrap()),
            ("KEY_ID", "bench"),
            ("TOKEN_TTL", "3600"),
        ],
        Some(&folder),
    );
    assert_eq!(ready, "ready");
    let issuer = format!("http://127.0.0.1:{port}");
    let (_rmcp, rmcp_url) = start(RMCP_SQUARE, &["http"], &[], None);
    let (_iris_auth, auth_url) = start(IRIS_SQUARE, &["http", "--auth", &issuer], &[], None);
    let (_iris_open, open_url) = start(IRIS_SQUARE, &["http"], &[], None);

    println!("gateway under load: {ROUNDS} rounds of {ROUND:?} a side, best round each");
    println!(
        "{:>7}  {:>28}  {:>28}  {:>28}  {:>7}  {:>7}",
        "clients", "rmcp (no auth)", "iris (auth)", "iris (no auth)", "thrpt", "p99"
    );
    runtime.block_on(async {
        let token = token(&issuer).await;
        for clients in [1_usize, 10, 100] {
            let mut sides: Vec<Vec<std::sync::Arc<Client>>> = Vec::new();
            for (url, token) in [(&rmcp_url, None), (&auth_url, Some(token.as_str())), (&open_url, None)] {
                let mut side = Vec::new();
                for _ in 0..clients {
                    side.push(std::sync::Arc::new(connect(url, token).await));
                }
                sides.push(side);
            }
            let mut rounds: Vec<Vec<Round>> = vec![Vec::new(); 3];
            for _ in 0..ROUNDS {
                for (side, clients) in sides.iter().enumerate() {
                    rounds[side].push(round(clients).await);
                }
            }
            let [rmcp, auth, open] = [best(&rounds[0]), best(&rounds[1]), best(&rounds[2])];
            let show = |r: Round| {
                format!(
                    "{:>8.0}/s p50 {:>5.0}us p99 {:>5.0}us",
                    r.per_second,
                    micros(r.p50),
                    micros(r.p99)
                )
            };
            println!(
                "{clients:>7}  {}  {}  {}  {:>6.2}x  {:>6.2}x",
                show(rmcp),
                show(auth),
                show(open),
                auth.per_second / rmcp.per_second,
                micros(auth.p99) / micros(rmcp.p99),
            );
            if clients == 1 {
                println!(
                    "         token check and rules at one client: p50 {:+.0}us (auth on against off)",
                    micros(auth.p50) - micros(open.p50)
                );
            }
        }
    });
    let _ = std::fs::remove_dir_all(&keys);
}
