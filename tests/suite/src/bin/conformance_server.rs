//! The MCP conformance suite's fixtures as Iris tools, served over HTTP by
//! the gateway: each tool a scenario of the official suite calls (text, an
//! image, an error, progress, log messages, a JSON Schema 2020-12 input
//! schema, a call long enough to test stream reconnection, a call that
//! changes the served tools). The scenarios that need what an Iris tool
//! server does not serve (sampling, prompts, fixed resources) are listed
//! with the reason in `tests/mcp-conformance/expected-failures.yml`.
//!
//! `iris-conformance-server [--upstream NODE SCRIPT] [--upstream-2026
//! PYTHON SCRIPT]`: binds a free local port and prints the endpoint's URL
//! as its first line. With an upstream it is a gateway too: the tools of
//! the MCP server started are served beside its own under their own names,
//! so those scenarios pass through it. `--upstream` takes
//! `tests/mcp-conformance/upstream.mjs` (audio, an embedded resource, mixed
//! content, requests for input while a tool runs, 2025 revisions);
//! `--upstream-2026` takes `tests/mcp-peers/mrtr_server.py` (requests for
//! input in a call's own result, 2026-07-28).

use std::error::Error;
use std::io::Write as _;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use iris::definition::{ToolDefinition, ToolName};
use iris::mcp::client::{McpClient, McpServerConfig};
use iris::mcp::server::{McpHttpServer, ServeOptions};
use iris::observe::ToolProgress;
use iris::registry::WeakSharedRegistry;
use iris::tool::DynamicTool;
use iris::{ToolErrorKind, ToolExecutor, ToolRegistry, ToolResult};
use serde_json::json;

/// Return a simple text.
#[iris::tool(read_only)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Return a one-pixel image.
#[iris::tool(read_only)]
fn test_image_content() -> ToolResult {
    ToolResult::from_content(vec![iris::content::ContentBlock::Image(
        iris::content::ImageBlock::from_bytes("image/png", PIXEL_PNG),
    )])
}

/// Always fail.
#[iris::tool(read_only)]
fn test_error_handling() -> ToolResult {
    ToolResult::error(
        ToolErrorKind::Execution,
        "This tool intentionally returns an error for testing",
    )
}

/// Report progress at 0, 50 and 100 of 100.
#[iris::tool(read_only)]
async fn test_tool_with_progress() -> &'static str {
    let progress = ToolProgress::current();
    for done in [0.0, 50.0, 100.0] {
        if let Some(progress) = &progress {
            progress.report(done, Some(100.0), None);
        }
        if done < 100.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    "progress reported"
}

/// Say three things while working (the client reads them as log messages).
#[iris::tool(read_only)]
async fn test_tool_with_logging() -> &'static str {
    let progress = ToolProgress::current();
    for (step, said) in [
        (0.0, "Tool execution started"),
        (1.0, "Tool processing data"),
        (2.0, "Tool execution completed"),
    ] {
        if let Some(progress) = &progress {
            progress.report(step, Some(3.0), Some(said.to_owned()));
        }
        if step < 2.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    "logged"
}

/// Take long enough that a client's stream may be closed and resumed.
#[iris::tool(read_only)]
async fn test_reconnection() -> &'static str {
    tokio::time::sleep(Duration::from_millis(300)).await;
    "Reconnection test completed"
}

/// A one-pixel PNG.
const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

/// How the server is started.
const USAGE: &str =
    "usage: iris-conformance-server [--upstream NODE SCRIPT] [--upstream-2026 PYTHON SCRIPT]";

/// The served registry, for the fixture that changes it.
static SERVED: OnceLock<WeakSharedRegistry> = OnceLock::new();

/// The tool `test_trigger_tool_change` adds and removes in turn.
const TOGGLED: &str = "test_toggled_tool";

/// Change the served tools: adds `test_toggled_tool`, or removes it when
/// it is there (listening clients are told).
#[iris::tool]
fn test_trigger_tool_change() -> ToolResult {
    let Some(served) = SERVED.get().and_then(WeakSharedRegistry::upgrade) else {
        return ToolResult::error(ToolErrorKind::Internal, "the server is not serving");
    };
    let changed = served.update(|registry| {
        if registry.resolve(TOGGLED).is_some() {
            registry.unregister_where(|t| t.definition_dyn().name().as_str() == TOGGLED);
            Ok::<_, Box<dyn Error>>("removed")
        } else {
            registry.register(toggled_tool()?)?;
            Ok("added")
        }
    });
    match changed {
        Ok(what) => ToolResult::text(format!("{what} {TOGGLED}")),
        Err(error) => ToolResult::error(ToolErrorKind::Internal, error.to_string()),
    }
}

fn toggled_tool() -> Result<DynamicTool, Box<dyn Error>> {
    let definition = ToolDefinition::builder(ToolName::new(TOGGLED)?, "A tool that comes and goes")
        .capability(iris::definition::Capability::ReadOnly)
        .build()?;
    Ok(DynamicTool::new(definition, |_input, _cx| async move {
        ToolResult::text("here")
    }))
}

/// A tool whose input schema uses JSON Schema 2020-12 (`$schema`, `$defs`
/// with an `$anchor`, a `$ref`, `allOf`/`anyOf`, `if`/`then`/`else`,
/// `additionalProperties`), listed as written.
fn json_schema_2020_12_tool() -> Result<DynamicTool, Box<dyn Error>> {
    let definition = ToolDefinition::builder(
        ToolName::new("json_schema_2020_12_tool")?,
        "Tool with JSON Schema 2020-12 features",
    )
    .input_schema(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    }))
    .capability(iris::definition::Capability::ReadOnly)
    .build()?;
    Ok(DynamicTool::new(definition, |input, _cx| async move {
        ToolResult::text(format!("received {input}"))
    }))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut registry = ToolRegistry::new();
    registry
        .register(TestSimpleText)?
        .register(TestImageContent)?
        .register(TestErrorHandling)?
        .register(TestToolWithProgress)?
        .register(TestToolWithLogging)?
        .register(TestReconnection)?
        .register(TestTriggerToolChange)?
        .register(json_schema_2020_12_tool()?)?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut upstreams = Vec::new();
    for pair in args.chunks(3) {
        let [flag, program, script] = pair else {
            return Err(USAGE.into());
        };
        let name = match flag.as_str() {
            "--upstream" => "upstream",
            "--upstream-2026" => "upstream-2026",
            _ => return Err(USAGE.into()),
        };
        let config = McpServerConfig::stdio(name, program, [script.clone()])
            .with_prefix("")
            .with_trusted_annotations(true)
            .with_relayed_input();
        let client = McpClient::connect(config).await?;
        client.register_into(&mut registry)?;
        upstreams.push(client);
    }
    // The suite's calls run without a person to approve them.
    let executor = Arc::new(
        ToolExecutor::builder(registry)
            .policy(iris::RulePolicy::new().write(iris::Rule::Allow))
            .build()?,
    );
    let _ = SERVED.set(executor.shared_registry().downgrade());
    let options = ServeOptions {
        name: "iris-conformance".to_owned(),
        ..ServeOptions::default()
    };
    let server = McpHttpServer::bind(executor, ([127, 0, 0, 1], 0).into(), options).await?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", server.url())?;
    stdout.flush()?;
    server.run().await?;
    Ok(())
}
