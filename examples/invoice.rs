//! An invoice read from a text file into a Rust struct: the agent asks for
//! `Invoice` as its output, the model reads the file with the built-in
//! `read_file` tool and answers JSON, and the run returns the value, parsed
//! and checked by the same parser as tool arguments (an answer that did not
//! fit would go back to the model with its faults).
//!
//! The model here is a scripted stand-in that needs no network: it reads
//! the file through the tool like a real one, then writes the JSON. With a
//! real model, `AgentRunner::from_config` and a `model` section are all
//! that change; the schema goes with each request as the provider's
//! structured output.
//!
//! Run with `cargo run --example invoice --features testing`.
#![allow(
    clippy::print_stdout,
    reason = "an example shows what it does on stdout"
)]

use std::error::Error;

use iris::agent::{Agent, AgentRunner, RunContext};
use iris::fs::register_file_tools;
use iris::model::{Message, ModelResponse};
use iris::serde_json::json;
use iris::testing::FnModel;
use iris::{RunId, ToolExecutor, ToolRegistry, ToolUseBlock};

/// An invoice.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Invoice {
    /// Who is billed.
    customer: String,
    /// What was bought.
    lines: Vec<Line>,
    /// The sum, in cents.
    total_cents: u64,
}

/// One line of an invoice.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Line {
    /// What was bought.
    item: String,
    /// Its price, in cents.
    cents: u64,
}

const INVOICE: &str = "INVOICE 2026-117
Bill to: Ada Lovelace
  Tea .......... 3.50
  Scones ....... 4.50
Total: 8.00
";

/// A stand-in for a model: it reads `invoice.txt`, then answers its
/// contents as the JSON the request's output format asks for.
fn clerk() -> FnModel {
    FnModel::new(|request| {
        let asked = request
            .output
            .as_ref()
            .map(|format| format.name().to_owned());
        Ok(match request.messages.last() {
            Some(Message::Tool { result, .. }) => ModelResponse {
                text: Some(read(&result.text_content(), asked.as_deref()).to_string()),
                ..ModelResponse::default()
            },
            _ => ModelResponse {
                tool_calls: vec![ToolUseBlock::new(
                    "read-1",
                    "read_file",
                    json!({"path": "invoice.txt"}),
                )],
                ..ModelResponse::default()
            },
        })
    })
}

/// What a model would write from `text`, when asked for an `Invoice`.
fn read(text: &str, asked: Option<&str>) -> iris::serde_json::Value {
    if asked != Some("Invoice") {
        return json!("I was not asked for an invoice.");
    }
    let cents = |amount: &str| -> u64 {
        let (whole, part) = amount
            .trim()
            .split_once('.')
            .unwrap_or((amount.trim(), "0"));
        whole.parse::<u64>().unwrap_or(0) * 100 + part.parse::<u64>().unwrap_or(0)
    };
    let mut customer = String::new();
    let mut lines = Vec::new();
    let mut total = 0;
    // The tool's result numbers each line: `     2\tBill to: …`.
    for line in text
        .lines()
        .filter_map(|l| l.split_once('\t').map(|(_, l)| l))
    {
        if let Some(name) = line.strip_prefix("Bill to: ") {
            name.clone_into(&mut customer);
        } else if let Some(sum) = line.strip_prefix("Total: ") {
            total = cents(sum);
        } else if let Some((item, price)) = line.trim().split_once(" .") {
            let price = price.trim_start_matches(['.', ' ']);
            lines.push(json!({"item": item.trim(), "cents": cents(price)}));
        }
    }
    json!({"customer": customer, "lines": lines, "total_cents": total})
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let workspace = tempfile::tempdir()?;
    std::fs::write(workspace.path().join("invoice.txt"), INVOICE)?;

    let mut registry = ToolRegistry::new();
    register_file_tools(&mut registry)?;
    let agent = Agent::builder(ToolExecutor::builder(registry).build()?)
        .name("clerk")
        .instructions("Read the invoice the person names and answer its contents.")
        .build()?;
    let runner = AgentRunner::new(agent, clerk());
    let cx = RunContext::new(workspace.path(), RunId::new("invoice"));

    let invoice: Invoice = runner
        .run_for(
            "Read invoice.txt and give me its customer, lines and total.",
            &cx,
        )
        .await?;
    println!("{} owes:", invoice.customer);
    for line in &invoice.lines {
        println!(
            "  {:<8} {:>3}.{:02}",
            line.item,
            line.cents / 100,
            line.cents % 100
        );
    }
    let sum: u64 = invoice.lines.iter().map(|line| line.cents).sum();
    if sum != invoice.total_cents || invoice.customer != "Ada Lovelace" {
        return Err("the invoice was not read as written".into());
    }
    Ok(())
}
