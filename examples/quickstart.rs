//! The canonical demo: a `square` tool, a `tool.after` hook built by a
//! factory from its options, and one call made the way a model makes it.
//!
//! Run with `cargo run --example quickstart`.
#![allow(
    clippy::print_stdout,
    reason = "an example shows what it does on stdout"
)]

use std::error::Error;

use iris::hooks::{AfterAnswer, Hook, HookFactory as _, HookInput, HookRegistration};
use iris::provider::openai_chat;
use iris::serde_json::json;
use iris::{RunId, Tool, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};

/// Return the square of an integer.
#[iris::tool(read_only, concurrency_safe)]
fn square(
    /// The integer to square.
    value: i64,
) -> i64 {
    value * value
}

/// Adds a sentence after every result: a hook factory, which configuration
/// (an agent file, or the host's own settings) calls by name with options.
#[iris::hook_factory]
fn append_text(
    /// What the model reads after every result.
    text: String,
) -> Hook {
    Hook::after(move |_: &HookInput| AfterAnswer::feedback(&text))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut registry = ToolRegistry::new();
    registry.register(Square)?;

    // The factory turns options (as configuration gives them) into a hook.
    let reminder =
        AppendText.build(&json!({"text": "Double-check the arithmetic before answering."}))?;

    let executor = ToolExecutor::builder(registry)
        .hook(HookRegistration::after("reminder", reminder))
        .build()?;

    // What the model is offered.
    let spec = Square.definition().spec().with_strict(true);
    println!(
        "offered: {}",
        iris::serde_json::to_string(&openai_chat(&spec).tool)?
    );

    // What the model called, and what it reads back.
    let cx = ToolContext::builder(".", RunId::new("quickstart")).build();
    // A run begins, and below it ends: `finish_run` forgets everything the
    // run ledger keeps for it.
    executor.start_run(&cx).await;
    let call = ToolUseBlock::new("call_1", "square", json!({"value": 4}));
    let outcome = executor.execute_one(call, &cx).await;
    let result = outcome.result().ok_or("the call is waiting for approval")?;
    println!("model reads:\n{}", result.text_content());
    executor.finish_run(&cx).await;
    Ok(())
}
