//! A small shop for agent tests: an eager lookup, a deferred conversion
//! found through `tool_search`, and an order that asks first.
#![allow(clippy::expect_used, reason = "a test fails loudly on a broken setup")]

use std::sync::Arc;

use iris::agent::{Agent, AgentBuilder};
use iris::discovery::{Discovery, ToolSearch};
use iris::{ToolExecutor, ToolRegistry, ToolUseBlock};

/// Look up the price of an item, in cents.
#[iris::tool(read_only)]
pub(crate) fn price_of(
    /// The item.
    item: String,
) -> String {
    format!("{item}: 1250")
}

/// Convert an amount of cents from one currency to another.
#[iris::tool(read_only, deferred)]
pub(crate) fn convert_currency(
    /// Cents to convert.
    cents: u64,
    /// The currency to convert to, such as `EUR`.
    to: String,
) -> String {
    format!("{} {to}", cents * 9 / 10)
}

/// Place an order for an item.
#[iris::tool(write)]
pub(crate) fn place_order(
    /// The item.
    item: String,
) -> String {
    format!("ordered {item}")
}

/// The shop's tools and `tool_search`.
pub(crate) fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(PriceOf)
        .and_then(|r| r.register(ConvertCurrency))
        .and_then(|r| r.register(PlaceOrder))
        .and_then(|r| r.register(ToolSearch))
        .expect("the shop's tools register");
    registry
}

/// The model's search for the conversion.
pub(crate) fn search() -> ToolUseBlock {
    ToolUseBlock::new(
        "s1",
        "tool_search",
        iris::serde_json::json!({"intents": ["convert an amount of money to another currency"]}),
    )
}

/// An agent over `executor` whose discovery keeps its disclosures in the
/// executor's ledger, as an agent's must.
pub(crate) fn agent_with_discovery(executor: ToolExecutor) -> AgentBuilder {
    let discovery = Discovery::builder(executor.shared_registry())
        .ledger(Arc::clone(executor.ledger()))
        .build()
        .expect("discovery builds");
    Agent::builder(executor).discovery(discovery)
}
