//! Define tools with `#[iris::tool]`, look at what a model is sent, and run
//! a call the way a model would make it.
//!
//! Run with `cargo run --example quickstart`.
#![allow(
    clippy::print_stdout,
    reason = "an example shows what it does on stdout"
)]

use iris::provider::{anthropic, gemini, openai_chat};
use iris::{DynTool, RunId, Tool, ToolContext, ToolErrorKind, ToolResult};
use serde::Serialize;
use serde_json::{Value, json};

/// Return the square of an integer.
#[iris::tool(read_only, concurrency_safe)]
fn square(
    /// The integer to square.
    value: i64,
) -> i64 {
    value * value
}

/// Today's weather in a city.
#[derive(Serialize)]
struct Report {
    city: String,
    celsius: f64,
    sky: &'static str,
}

/// Look up the current weather in a city.
#[iris::tool(read_only, network, aliases = ["forecast"])]
async fn weather(
    /// City name, such as `Lisbon`.
    city: String,
    /// Report in Fahrenheit instead of Celsius.
    fahrenheit: Option<bool>,
) -> Result<Report, String> {
    if city.trim().is_empty() {
        return Err("city must not be empty; pass a city name such as `Lisbon`".into());
    }
    // A real tool would await an HTTP request here.
    tokio::task::yield_now().await;
    let celsius = 21.5;
    let celsius = if fahrenheit.unwrap_or(false) {
        celsius * 9.0 / 5.0 + 32.0
    } else {
        celsius
    };
    Ok(Report {
        city,
        celsius,
        sky: "clear",
    })
}

/// Parse a model's call and run it on this thread.
async fn call(tool: &dyn DynTool, input: Value, cx: &ToolContext) -> ToolResult {
    match tool.parse_dyn(&input) {
        Ok(args) => tool.call_dyn(args, cx).run_inline().await,
        Err(err) => ToolResult::error(ToolErrorKind::InvalidArguments, err.to_string()),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), serde_json::Error> {
    let tools: [&dyn DynTool; 2] = [&Square, &Weather];
    for tool in tools {
        let spec = tool.definition_dyn().spec();
        println!("== {} ==", spec.name);
        println!(
            "OpenAI (strict): {}",
            serde_json::to_string(&openai_chat(&spec.clone().with_strict(true)).tool)?
        );
        println!(
            "Anthropic:       {}",
            serde_json::to_string(&anthropic(&spec).tool)?
        );
        println!(
            "Gemini:          {}",
            serde_json::to_string(&gemini(&spec).tool)?
        );
    }

    let cx = ToolContext::builder(".", RunId::new("quickstart")).build();
    let squared = call(&Square, json!({"value": 4}), &cx).await;
    println!("\nsquare {{\"value\": 4}} -> {}", squared.text_content());
    let forecast = call(&Weather, json!({"city": "Lisbon"}), &cx).await;
    println!(
        "weather {{\"city\": \"Lisbon\"}} -> {}",
        forecast.text_content()
    );
    let wrong = call(&Square, json!({"value": "four"}), &cx).await;
    println!("square {{\"value\": \"four\"}} -> {}", wrong.text_content());
    println!("square(5) called directly -> {}", square(5));
    assert_eq!(Square.definition().name(), "square");
    Ok(())
}
