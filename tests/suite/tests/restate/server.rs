//! A Restate server of the test's own, on loopback ports of its own, from
//! the pinned npm package (installed on first use by
//! `tests/restate-server/install.sh`), stopped on drop. Shared by the
//! tests and the durable-run benchmark.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a server that does not start fails the test or benchmark loudly"
)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use iris::serde_json::{Value, json};

#[path = "../../../support/installed.rs"]
mod installed;

/// The server binary, installed on first use; a failed install fails the
/// test saying what is missing and how to install it.
fn binary() -> PathBuf {
    installed::RESTATE_SERVER
        .folder()
        .join("node_modules/@restatedev/restate-server-linux-x64/bin/restate-server")
}

/// A free loopback port.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) struct RestateServer {
    child: Child,
    pub(crate) ingress: String,
    admin: String,
    http: reqwest::Client,
    /// This server's turn among the binary's tests.
    turn: Option<tokio::sync::MutexGuard<'static, ()>>,
    _data: tempfile::TempDir,
}

impl RestateServer {
    /// A server of its own, up and answering. One server runs at a time
    /// in a test binary (each holds the turn until dropped); a server that
    /// exits or does not come up (a port taken meanwhile) is started again
    /// on other ports, twice at most, and the last one's log is shown.
    pub(crate) async fn start() -> Self {
        static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
        let turn = TURN.lock().await;
        // Plain HTTP on loopback, but the client is built with TLS support.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut log = String::new();
        for _ in 0..3 {
            match Self::try_start().await {
                Ok(mut server) => {
                    server.turn = Some(turn);
                    return server;
                }
                Err(why) => log = why,
            }
        }
        panic!("the Restate server did not come up in three tries; the last one's log:\n{log}");
    }

    /// One try: the server on free ports, or its log when it exited or did
    /// not answer within 30 s.
    async fn try_start() -> Result<Self, String> {
        let data = tempfile::tempdir().unwrap();
        let (ingress, admin, fabric) = (free_port(), free_port(), free_port());
        let log_path = data.path().join("server.log");
        let child = Command::new(binary())
            .arg("--base-dir")
            .arg(data.path())
            .args(["--node-name", "iris-test"])
            .env("RESTATE_LISTEN_MODE", "tcp")
            .env(
                "RESTATE_INGRESS__BIND_ADDRESS",
                format!("127.0.0.1:{ingress}"),
            )
            .env("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{admin}"))
            .env("RESTATE_BIND_ADDRESS", format!("127.0.0.1:{fabric}"))
            .env(
                "RESTATE_ADVERTISED_ADDRESS",
                format!("http://127.0.0.1:{fabric}"),
            )
            .env("RESTATE_LOG_FORMAT", "compact")
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log_path).unwrap())
            .spawn()
            .unwrap();
        let mut server = Self {
            child,
            ingress: format!("http://127.0.0.1:{ingress}"),
            admin: format!("http://127.0.0.1:{admin}"),
            http: reqwest::Client::new(),
            turn: None,
            _data: data,
        };
        let tail = |path: &Path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(40)..].join("\n")
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let up = server
                .http
                .get(format!("{}/health", server.admin))
                .send()
                .await;
            let ingress_up = server
                .http
                .get(format!("{}/restate/health", server.ingress))
                .send()
                .await;
            if up.is_ok_and(|r| r.status().is_success())
                && ingress_up.is_ok_and(|r| r.status().is_success())
            {
                return Ok(server);
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("it exited ({status}):\n{}", tail(&log_path)));
            }
            if Instant::now() > deadline {
                return Err(format!("it did not answer in 30 s:\n{}", tail(&log_path)));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Registers the endpoint at `uri` (again, when it changed).
    pub(crate) async fn register(&self, uri: &str) {
        let response = self
            .http
            .post(format!("{}/deployments", self.admin))
            .header("content-type", "application/json")
            .body(json!({"uri": uri, "force": true}).to_string())
            .send()
            .await
            .unwrap();
        let status = response.status();
        let body = response.text().await.unwrap();
        assert!(status.is_success(), "registering {uri}: {status} {body}");
    }

    /// The rows the admin API's SQL query `sql` answers.
    #[allow(dead_code, reason = "not every test binary queries the server")]
    pub(crate) async fn query(&self, sql: &str) -> Vec<Value> {
        let request = self
            .http
            .post(format!("{}/query", self.admin))
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .body(json!({ "query": sql }).to_string());
        let (status, answer) = self.send(request).await;
        assert_eq!(status, 200, "the query {sql}: {answer}");
        answer["rows"].as_array().cloned().unwrap_or_default()
    }

    /// A POST to the ingress (with a JSON body, or none): its status and
    /// JSON answer.
    pub(crate) async fn post(&self, path: &str, body: Option<&Value>) -> (u16, Value) {
        let request = self.http.post(format!("{}{path}", self.ingress));
        let request = match body {
            Some(body) => request
                .header("content-type", "application/json")
                .body(body.to_string()),
            None => request,
        };
        self.send(request).await
    }

    /// A GET of the ingress: its status and JSON answer.
    pub(crate) async fn get(&self, path: &str) -> (u16, Value) {
        self.send(self.http.get(format!("{}{path}", self.ingress)))
            .await
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> (u16, Value) {
        let response = request
            .timeout(Duration::from_secs(90))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let value = iris::serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    }
}

impl Drop for RestateServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
