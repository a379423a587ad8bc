//! An Iris registry served over MCP for the MCP tests: typed tools, an
//! image, an error, structured results with output schemas (hand-made, and
//! from a typed return), a tool the policy asks about, the file tools, and
//! padding tools so `tools/list` takes several pages.
//!
//! `iris-mcp-test-server [stdio | http] [--page-size N] [--padding N] [--deferred]
//! [--search] [--progress] [--workspace DIR]`
//!
//! `--deferred` makes the padding tools deferred (with `tool_search`);
//! `--search` serves them behind `tool_search` instead of listing them;
//! `--progress` adds `count_slowly`, which reports its progress.
//!
//! Over HTTP it binds a free local port and prints the endpoint's URL as
//! its first line.

use std::error::Error;
use std::sync::Arc;

use iris::definition::{ToolDefinition, ToolName};
use iris::fs::register_file_tools;
use iris::mcp::server::{McpHttpServer, ServeOptions, ServeTransport, serve_with};
use iris::tool::DynamicTool;
use iris::{ToolExecutor, ToolRegistry, ToolResult};
use serde_json::json;
use std::fmt::Write as _;
use std::io::Write as _;

/// Return the square of an integer.
#[iris::tool(read_only, concurrency_safe)]
fn square(
    /// The integer to square.
    value: i64,
) -> i64 {
    value * value
}

/// Draw a one-pixel chart.
#[iris::tool(read_only)]
fn chart() -> ToolResult {
    ToolResult::text("a chart").with_image(iris::content::ImageBlock::from_bytes(
        "image/png",
        PIXEL_PNG,
    ))
}

/// A city's forecast.
#[derive(iris::serde::Serialize, iris::schemars::JsonSchema)]
#[serde(crate = "iris::serde")]
#[schemars(crate = "iris::schemars")]
struct CityForecast {
    /// The city.
    city: String,
    /// The temperature, in degrees Celsius.
    celsius: f64,
    /// What the sky does, hour by hour.
    conditions: Vec<String>,
}

/// Forecast a city's weather (a typed result: served with its output schema).
#[iris::tool(read_only)]
fn forecast(
    /// The city.
    city: String,
) -> CityForecast {
    CityForecast {
        city,
        celsius: 18.5,
        conditions: vec!["sun".to_owned(), "clouds".to_owned()],
    }
}

/// Count to `steps`, reporting each step as progress.
#[iris::tool(read_only)]
async fn count_slowly(
    /// How far to count.
    steps: u32,
) -> String {
    let progress = iris::observe::ToolProgress::current();
    for step in 1..=steps {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        if let Some(progress) = &progress {
            progress.report(
                f64::from(step),
                Some(f64::from(steps)),
                Some(format!("step {step}")),
            );
        }
    }
    format!("counted to {steps}")
}

/// Always fail, saying why.
#[iris::tool(read_only)]
fn fail() -> Result<String, String> {
    Err("the disk is full".to_owned())
}

/// Write a long report (past the result limit: previewed, saved whole).
#[iris::tool(read_only)]
fn long_report() -> String {
    let mut report = String::new();
    for n in 0..20_000 {
        let _ = writeln!(report, "line {n}");
    }
    report
}

/// Delete a note (asks for approval under the default policy).
#[iris::tool(write)]
fn delete_note(
    /// The note's title.
    title: String,
) -> String {
    format!("deleted {title}")
}

/// A 1x1 PNG.
const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

fn weather() -> Result<DynamicTool, Box<dyn Error>> {
    let definition = ToolDefinition::builder(ToolName::new("weather")?, "The weather in a city.")
        .input_schema(json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        }))
        .output_schema(json!({
            "type": "object",
            "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
            "required": ["city", "celsius"],
        }))
        .capability(iris::definition::Capability::ReadOnly)
        .build()?;
    Ok(DynamicTool::new(definition, |input, _cx| async move {
        let city = input["city"].as_str().unwrap_or("nowhere").to_owned();
        ToolResult::json(json!({"city": city, "celsius": 21.5}))
    }))
}

fn padding(index: usize) -> Result<DynamicTool, Box<dyn Error>> {
    let definition = ToolDefinition::builder(
        ToolName::new(format!("padding_{index:04}"))?,
        format!("Padding tool number {index}."),
    )
    .capability(iris::definition::Capability::ReadOnly)
    .build()?;
    Ok(DynamicTool::new(definition, move |_, _| async move {
        ToolResult::text(format!("padding {index}"))
    }))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut options = ServeOptions {
        page_size: 3,
        ..ServeOptions::default()
    };
    let mut padding_tools = 0;
    let mut http = false;
    let mut deferred = false;
    let mut progress = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "stdio" => {}
            "http" => http = true,
            "--deferred" => deferred = true,
            "--progress" => progress = true,
            "--search" => options.tools = iris::mcp::server::ServedTools::EagerAndSearch,
            "--page-size" => options.page_size = args.next().ok_or("a number")?.parse()?,
            "--padding" => padding_tools = args.next().ok_or("a number")?.parse()?,
            "--workspace" => options.workspace = args.next().ok_or("a folder")?.into(),
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    let mut registry = ToolRegistry::new();
    registry
        .register(Square)?
        .register(Chart)?
        .register(Fail)?
        .register(DeleteNote)?
        .register(weather()?)?
        .register(Forecast)?
        .register(LongReport)?;
    register_file_tools(&mut registry)?;
    if progress {
        registry.register(CountSlowly)?;
    }
    let exposure = if deferred {
        registry.register(iris::discovery::ToolSearch)?;
        iris::definition::Exposure::Deferred
    } else {
        iris::definition::Exposure::Eager
    };
    for index in 0..padding_tools {
        registry.register_as(padding(index)?, exposure)?;
    }
    let executor = Arc::new(ToolExecutor::builder(registry).build()?);
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
