//! Iris's `square` over stdio (`iris_square`) or HTTP (`iris_square http`),
//! with `--padding N` more tools for the listing benchmark, and behind
//! authentication with `--auth ISSUER` (tokens of that issuer made out to
//! `https://bench.test/mcp`; `tools:read` grants the read-only tools).

use std::io::Write as _;
use std::sync::Arc;

use iris::definition::{ToolDefinition, ToolName};
use iris::mcp::gateway::{AccessRule, AuditConfig, GatewayAuth, PrincipalLimits, TokenIssuer};
use iris::mcp::server::{McpHttpServer, ServeOptions, ServeTransport, serve_with};
use iris::tool::DynamicTool;
use iris::{ToolExecutor, ToolRegistry, ToolResult};

/// Return the square of an integer.
#[iris::tool(read_only, concurrency_safe)]
async fn square(
    /// The integer to square.
    value: i64,
) -> i64 {
    value * value
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut http = false;
    let mut padding = 0_usize;
    let mut issuer = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "http" => http = true,
            "--auth" => issuer = Some(args.next().ok_or("an issuer")?),
            "--padding" => padding = args.next().ok_or("a number")?.parse()?,
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    let mut registry = ToolRegistry::new();
    registry.register(Square)?;
    for index in 0..padding {
        let definition = ToolDefinition::builder(
            ToolName::new(format!("tool_{index:04}"))?,
            format!("Padding tool number {index}, which does nothing of note."),
        )
        .input_schema(serde_json::json!({
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to look for."}},
            "required": ["query"],
        }))
        .capability(iris::definition::Capability::ReadOnly)
        .build()?;
        registry.register(DynamicTool::new(definition, |_, _| async {
            ToolResult::text("nothing")
        }))?;
    }
    let executor = Arc::new(ToolExecutor::builder(registry).build()?);
    let options = ServeOptions {
        auth: issuer.map(|issuer| {
            GatewayAuth::new("https://bench.test/mcp", vec![TokenIssuer::new(issuer)])
                .rule(AccessRule {
                    scopes: vec!["tools:read".to_owned()],
                    capabilities: vec![iris::definition::Capability::ReadOnly],
                    ..AccessRule::default()
                })
                // One principal drives every client of the load test.
                .limits(PrincipalLimits {
                    sessions: 1_000,
                    pending_approvals: 4,
                    concurrent_requests: 1_000,
                    requests_per_minute: 100_000_000,
                })
                // Every decision written down, as a deployment would.
                .audit(AuditConfig::new(std::env::temp_dir().join(format!(
                    "iris-bench-audit-{}.jsonl",
                    std::process::id()
                ))))
        }),
        // Every client of the load test comes from this machine's address,
        // as behind a reverse proxy: its share of connections not yet let
        // in is raised to all of them (the guide's advice for a proxy).
        max_anonymous_per_address: ServeOptions::default().max_connections,
        ..ServeOptions::default()
    };
    if http {
        let server = McpHttpServer::bind(executor, ([127, 0, 0, 1], 0).into(), options).await?;
        let mut stdout = std::io::stdout();
        writeln!(stdout, "{}", server.url())?;
        stdout.flush()?;
        server.run().await?;
    } else {
        serve_with(executor, ServeTransport::Stdio, options).await?;
    }
    Ok(())
}
