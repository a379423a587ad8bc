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

/// A child agent of an agent, at any depth, with its own tools.
pub(crate) struct ChildSummary {
    /// The name its parent's model calls.
    pub(crate) name: String,
    /// Where it sits: the names from the root's child down (`lead`'s
    /// child `writer`'s child `editor` is `writer/editor`).
    pub(crate) path: String,
    /// Its agent's name.
    pub(crate) agent: String,
    /// What its parent's model reads to choose it.
    pub(crate) description: String,
    /// 1 for a child of the root.
    pub(crate) depth: u32,
    /// Its own tools, by name, sorted.
    pub(crate) tools: Vec<String>,
}

/// Every child agent under `agent`, depth first, each with its own tools:
/// a parent's catalog is what its children can do too.
pub(crate) fn children(agent: &iris_agent::Agent) -> Vec<ChildSummary> {
    let mut found = Vec::new();
    collect_children(agent, None, 1, &mut found);
    found
}

fn collect_children(
    agent: &iris_agent::Agent,
    prefix: Option<&str>,
    depth: u32,
    found: &mut Vec<ChildSummary>,
) {
    for child in agent.children() {
        let path = prefix.map_or_else(
            || child.name().to_owned(),
            |p| format!("{p}/{}", child.name()),
        );
        let mut tools: Vec<String> = child
            .agent()
            .registry()
            .tools()
            .map(|t| t.definition_dyn().name().as_str().to_owned())
            .collect();
        tools.sort();
        found.push(ChildSummary {
            name: child.name().to_owned(),
            path: path.clone(),
            agent: child.agent().name().to_owned(),
            description: child.description().to_owned(),
            depth,
            tools,
        });
        // A file that delegates back to one above it is refused at load,
        // so the tree ends.
        collect_children(child.agent(), Some(&path), depth + 1, found);
    }
}

pub(crate) fn run(catalog: &Catalog, out: Out) -> Exit {
    let children = children(&catalog.agent);
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
        let agents: Vec<Value> = children
            .iter()
            .map(|c| {
                json!({
                    "name": c.name,
                    "path": c.path,
                    "agent": c.agent,
                    "description": c.description,
                    "depth": c.depth,
                    "tools": c.tools,
                })
            })
            .collect();
        out.json(json!({"tools": tools, "agents": agents}));
        return Exit::Ok;
    }
    let width = definitions
        .iter()
        .map(|d| d.name().as_str().len())
        .chain(children.iter().map(|c| c.path.len()))
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
    for child in &children {
        let summary = child.description.lines().next().unwrap_or_default();
        out.line(&format!(
            "{:width$}  {:20}  {}",
            child.path,
            "child agent",
            iris_core::text::clip(summary, 80)
        ));
        out.line(&format!(
            "{:width$}  {:20}  its tools: {}",
            "",
            "",
            if child.tools.is_empty() {
                "none".to_owned()
            } else {
                child.tools.join(", ")
            }
        ));
    }
    if children.is_empty() {
        out.note(&format!("{} tool(s)", definitions.len()));
    } else {
        let theirs: usize = children.iter().map(|c| c.tools.len()).sum();
        out.note(&format!(
            "{} tool(s), {} child agent(s) with {theirs} tool(s) of their own",
            definitions.len(),
            children.len()
        ));
    }
    Exit::Ok
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("list")
        .about("List the tools")
        .args(crate::catalog::args())
}
