//! Iris's `square` over stdio (`iris_square`) or HTTP (`iris_square http`),
//! with `--padding N` more tools for the listing benchmark.

use std::io::Write as _;
use std::sync::Arc;

use iris::mcp::{McpHttpServer, ServeOptions, ServeTransport, serve_with};
use iris::{ToolExecutor, ToolRegistry, ToolResult};
use iris::tool::DynamicTool;
use iris::definition::{ToolDefinition, ToolName};

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
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "http" => http = true,
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
    let options = ServeOptions::default();
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
