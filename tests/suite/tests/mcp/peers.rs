//! Where the MCP peers are, installed on first use.

use std::path::PathBuf;

#[path = "../../../support/installed.rs"]
mod installed;

/// The folder holding the peers (`tests/mcp-peers`), installed on first
/// use (see `tests/support/installed.rs`).
pub(crate) fn folder() -> PathBuf {
    installed::MCP_PEERS.folder()
}

/// The folder holding the `OpenID` provider (`tests/oidc-provider`),
/// installed on first use.
pub(crate) fn oidc_provider_folder() -> PathBuf {
    installed::OIDC_PROVIDER.folder()
}

/// The folder holding the MCP conformance suite
/// (`tests/mcp-conformance`), installed on first use.
pub(crate) fn conformance_folder() -> PathBuf {
    installed::MCP_CONFORMANCE.folder()
}

/// A program installed from npm, such as `mcp-server-everything`.
pub(crate) fn npm_bin(name: &str) -> String {
    let path = folder().join("node_modules/.bin").join(name);
    assert!(
        path.exists(),
        "{} is missing: run tests/mcp-peers/install.sh",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// The Python of the virtual environment holding the `mcp` package.
pub(crate) fn python() -> String {
    folder()
        .join(".venv/bin/python")
        .to_string_lossy()
        .into_owned()
}

/// The Iris test server over HTTP on a free local port, stopped on drop.
pub(crate) struct HttpTestServer {
    child: std::process::Child,
    /// The endpoint's URL.
    pub(crate) url: String,
}

impl HttpTestServer {
    /// Starts `iris-mcp-test-server http` with `args`.
    pub(crate) fn start(args: &[&str]) -> Self {
        use std::io::BufRead as _;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_iris-mcp-test-server"))
            .arg("http")
            .args(args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut url = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        Self {
            child,
            url: url.trim().to_owned(),
        }
    }
}

impl Drop for HttpTestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Keeps the progress events it sees, for tests of progress reports.
#[derive(Default)]
pub(crate) struct Progress(pub(crate) std::sync::Mutex<Vec<iris::observe::RunEvent>>);

impl Progress {
    /// The events seen once there are `count` of them, or after 5 s (
    /// observers run on their own threads, so events trail the call).
    pub(crate) async fn events(&self, count: usize) -> Vec<iris::observe::RunEvent> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while self.0.lock().unwrap().len() < count && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        self.0.lock().unwrap().clone()
    }
}

impl iris::observe::RunEventObserver for Progress {
    fn on_event(&self, event: &iris::observe::RunEvent) {
        if matches!(event, iris::observe::RunEvent::ToolProgress { .. }) {
            self.0.lock().unwrap().push(event.clone());
        }
    }
}

/// A person behind an MCP client that elicits: approves every call,
/// declines every one, or is away (never answers); asked questions, picks
/// the first option of the first.
#[derive(Clone, Copy)]
pub(crate) enum Person {
    Approves,
    Declines,
    Away,
}

impl rmcp::ClientHandler for Person {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        capabilities.elicitation = Some(rmcp::model::ElicitationCapability::default());
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("person", "1.0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::service::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
        if matches!(self, Self::Away) {
            tokio::time::sleep(std::time::Duration::from_secs(3_600)).await;
        }
        let ElicitRequestParams::FormElicitationParams {
            requested_schema, ..
        } = request
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap();
        if schema["properties"].get("approve").is_some() {
            return Ok(match self {
                Self::Declines => ElicitResult::new(ElicitationAction::Decline),
                Self::Approves | Self::Away => ElicitResult::new(ElicitationAction::Accept)
                    .with_content(serde_json::json!({"approve": true})),
            });
        }
        let first = schema["properties"]["q1"]["enum"][0].clone();
        Ok(ElicitResult::new(ElicitationAction::Accept)
            .with_content(serde_json::json!({"q1": first})))
    }
}

/// `executor` served over streamable HTTP on a free loopback port with
/// `options`: the endpoint's URL, and the token that stops it.
pub(crate) async fn serve_http(
    executor: std::sync::Arc<iris::ToolExecutor>,
    options: iris::mcp::server::ServeOptions,
) -> (String, iris::executor::CancellationToken) {
    let http =
        iris::mcp::server::McpHttpServer::bind(executor, ([127, 0, 0, 1], 0).into(), options)
            .await
            .unwrap();
    let url = http.url();
    let stop = http.shutdown_token();
    tokio::spawn(http.run());
    (url, stop)
}
