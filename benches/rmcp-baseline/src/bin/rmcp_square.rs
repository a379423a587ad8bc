//! rmcp's `square` over stdio (`rmcp_square`) or HTTP (`rmcp_square http`).

use rmcp::ServiceExt as _;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("http") {
        iris_rmcp_baseline::serve_rmcp_http(([127, 0, 0, 1], 0).into()).await?;
        return Ok(());
    }
    let running = iris_rmcp_baseline::Calc::new()
        .serve(rmcp::transport::stdio())
        .await?;
    running.waiting().await?;
    Ok(())
}
