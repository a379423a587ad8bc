//! Tools as methods of a service: an inventory whose stock lives in the
//! service, read by one tool and changed by another, both bound to one
//! `Arc<Inventory>`.
//!
//! Run with `cargo run --example toolbox`.
#![allow(
    clippy::print_stdout,
    reason = "an example shows what it does on stdout"
)]

use std::collections::BTreeMap;
use std::error::Error;
use std::sync::{Arc, Mutex, PoisonError};

use iris::serde_json::json;
use iris::{Rule, RulePolicy, RunId, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};

/// Stock per product, shared by every call of the service's tools.
struct Inventory {
    stock: Mutex<BTreeMap<String, u32>>,
}

#[iris::toolbox]
impl Inventory {
    fn new(stock: &[(&str, u32)]) -> Self {
        let stock = stock
            .iter()
            .map(|(sku, n)| ((*sku).to_owned(), *n))
            .collect();
        Self {
            stock: Mutex::new(stock),
        }
    }

    /// How many of a product are in stock.
    #[tool(read_only, concurrency_safe)]
    async fn stock_level(
        &self,
        /// The product's SKU, such as `MUG-RED`.
        sku: String,
    ) -> Result<u32, String> {
        // As a warehouse service would answer: later, without blocking.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        self.stock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&sku)
            .copied()
            .ok_or_else(|| format!("no product `{sku}`; ask the user for the SKU"))
    }

    /// Take items out of stock for an order; fails when too few are left.
    #[tool(write)]
    fn reserve(
        &self,
        /// The product's SKU.
        sku: String,
        /// How many to take.
        quantity: u32,
    ) -> Result<String, String> {
        let mut stock = self.stock.lock().unwrap_or_else(PoisonError::into_inner);
        let left = stock
            .get_mut(&sku)
            .ok_or_else(|| format!("no product `{sku}`"))?;
        if *left < quantity {
            return Err(format!("only {left} of `{sku}` left"));
        }
        *left -= quantity;
        Ok(format!("reserved {quantity} of `{sku}`; {left} left"))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let inventory = Arc::new(Inventory::new(&[("MUG-RED", 5), ("MUG-BLUE", 1)]));
    let mut registry = ToolRegistry::new();
    registry.register_toolbox(Arc::clone(&inventory))?;
    for name in ["stock_level", "reserve"] {
        let tool = registry.resolve(name).ok_or("a toolbox tool is missing")?;
        let definition = tool.definition_dyn();
        println!(
            "tool `{}` from {}: {}",
            definition.name(),
            tool.rust_item(),
            iris::serde_json::to_string(definition.input_schema())?
        );
    }

    // Writes would ask a person by default; this demo lets them run.
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()?;
    let cx = ToolContext::builder(".", RunId::new("toolbox")).build();
    executor.start_run(&cx).await;
    let calls = vec![
        ToolUseBlock::new("c1", "reserve", json!({"sku": "MUG-RED", "quantity": 2})),
        ToolUseBlock::new("c2", "reserve", json!({"sku": "MUG-BLUE", "quantity": 3})),
        ToolUseBlock::new("c3", "stock_level", json!({"sku": "MUG-RED"})),
    ];
    for outcome in executor.execute_batch(calls, &cx).await {
        let result = outcome.result().ok_or("a call is waiting for approval")?;
        println!("{}: {}", outcome.call_id(), result.text_content());
    }
    executor.finish_run(&cx).await;
    Ok(())
}
