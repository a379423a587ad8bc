//! A write tool under a policy that asks first: the call waits, a person
//! approves it and it runs; a second call is denied and the model is told why.
//!
//! Run with `cargo run --example approval`.
#![allow(
    clippy::print_stdout,
    reason = "an example shows what it does on stdout"
)]

use std::error::Error;

use iris::serde_json::json;
use iris::{
    ApprovalDecision, Rule, RulePolicy, RunId, ToolContext, ToolExecutor, ToolOutcome,
    ToolRegistry, ToolUseBlock,
};

/// Send an e-mail.
#[iris::tool(write, network)]
fn send_email(
    /// The recipient's address.
    to: String,
    /// The subject line.
    subject: String,
) -> String {
    format!("sent `{subject}` to {to}")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut registry = ToolRegistry::new();
    registry.register(SendEmail)?;
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Ask))
        .build()?;
    let cx = ToolContext::builder(".", RunId::new("approval-demo")).build();
    // A run begins, and below it ends: `finish_run` frees what the
    // executor keeps for it (call ids, calls waiting for approval).
    executor.start_run(&cx).await;

    let call = ToolUseBlock::new(
        "call_1",
        "send_email",
        json!({"to": "ada@example.com", "subject": "Q3 report"}),
    );
    let ToolOutcome::Waiting(request) = executor.execute_one(call, &cx).await else {
        return Err("expected the call to wait for approval".into());
    };
    println!(
        "waiting: {} {} ({})",
        request.tool,
        request.arguments,
        request.reason.clone().unwrap_or_default()
    );
    // A host would show `request` to a person here; this one approves.
    let approved = executor
        .resume(&request.call_id, ApprovalDecision::approve(&request), &cx)
        .await?;
    println!(
        "approved -> {}",
        approved
            .result()
            .map(iris::ToolResult::text_content)
            .unwrap_or_default()
    );

    let call = ToolUseBlock::new(
        "call_2",
        "send_email",
        json!({"to": "all@example.com", "subject": "Party!"}),
    );
    let ToolOutcome::Waiting(request) = executor.execute_one(call, &cx).await else {
        return Err("expected the call to wait for approval".into());
    };
    let denied = executor
        .resume(
            &request.call_id,
            ApprovalDecision::deny("do not e-mail the whole company"),
            &cx,
        )
        .await?;
    println!(
        "denied -> {}",
        denied
            .result()
            .map(iris::ToolResult::text_content)
            .unwrap_or_default()
    );
    executor.finish_run(&cx).await;
    Ok(())
}
