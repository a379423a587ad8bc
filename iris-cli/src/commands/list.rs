//! `iris list`: the catalog's tools.

use clap::Command;
use iris_core::{Capability, Exposure, ToolDefinition};
use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::exit::Exit;
use crate::output::Out;

/// The capability tags of `definition`, in a fixed order.
pub(crate) fn tags(definition: &ToolDefinition) -> Vec<&'static str> {
    let caps = definition.capabilities();
    [
        (Capability::ReadOnly, "read_only"),
        (Capability::Write, "write"),
        (Capability::Exec, "exec"),
        (Capability::Network, "network"),
        (Capability::Idempotent, "idempotent"),
    ]
    .into_iter()
    .filter(|(cap, _)| caps.contains(*cap))
    .map(|(_, tag)| tag)
    .collect()
}

pub(crate) fn run(catalog: &Catalog, out: Out) -> Exit {
    let registry = catalog.agent.registry();
    let mut definitions: Vec<&ToolDefinition> =
        registry.tools().map(|t| t.definition_dyn()).collect();
    definitions.sort_by(|a, b| a.name().as_str().cmp(b.name().as_str()));
    if out.json {
        let tools: Vec<Value> = definitions
            .iter()
            .map(|d| {
                json!({
                    "name": d.name().as_str(),
                    "description": d.description(),
                    "capabilities": tags(d),
                    "deferred": d.exposure() == Exposure::Deferred,
                    "input_schema": d.input_schema(),
                })
            })
            .collect();
        out.json(json!({"tools": tools}));
        return Exit::Ok;
    }
    let width = definitions
        .iter()
        .map(|d| d.name().as_str().len())
        .max()
        .unwrap_or(4)
        .max(4);
    out.line(&format!(
        "{:width$}  {:20}  DESCRIPTION",
        "NAME", "CAPABILITIES"
    ));
    for d in &definitions {
        let summary = d.description().lines().next().unwrap_or_default();
        let summary = iris_core::text::clip(summary, 80);
        out.line(&format!(
            "{:width$}  {:20}  {summary}",
            d.name().as_str(),
            tags(d).join(",")
        ));
    }
    out.note(&format!("{} tool(s)", definitions.len()));
    Exit::Ok
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("list")
        .about("List the tools")
        .args(crate::catalog::args())
}
