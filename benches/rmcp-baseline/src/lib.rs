//! The `square` tool both servers serve, and what the benchmarks share.
#![allow(missing_docs)]

use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct SquareArgs {
    /// The integer to square.
    pub value: i64,
}

/// rmcp's way: a `#[tool]` in a `#[tool_router]`.
#[derive(Clone)]
pub struct Calc {
    tool_router: ToolRouter<Calc>,
}

impl Default for Calc {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_router]
impl Calc {
    pub fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    /// The router, for in-process calls.
    pub fn router(&self) -> &ToolRouter<Calc> {
        &self.tool_router
    }

    #[tool(description = "Return the square of an integer.")]
    async fn square(&self, Parameters(SquareArgs { value }): Parameters<SquareArgs>) -> Json<i64> {
        Json(value * value)
    }
}

#[tool_handler]
impl ServerHandler for Calc {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
    }
}

/// Serves rmcp's `Calc` over streamable HTTP on `address` (the same hyper
/// setup as Iris's server), printing the URL first.
pub async fn serve_rmcp_http(address: SocketAddr) -> std::io::Result<()> {
    use std::io::Write as _;
    let listener = tokio::net::TcpListener::bind(address).await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{url}")?;
    stdout.flush()?;
    let service = StreamableHttpService::new(
        || Ok(Calc::new()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    loop {
        let (stream, _) = listener.accept().await?;
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
