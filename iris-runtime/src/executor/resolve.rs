//! The first stage of a call: the tool it names, if this request offers
//! it, and its input repaired the way models need.

use std::sync::Arc;

use iris_core::{DynTool, Exposure, ToolContext, ToolDefinition, ToolErrorKind, ToolResult};
use serde_json::Value;

use crate::ToolRegistry;

/// The tool called `name` in `registry` and its definition, if this
/// request offers it; otherwise the error result the model reads.
pub(super) fn offered_tool<'r>(
    registry: &'r ToolRegistry,
    name: &str,
    cx: &ToolContext,
) -> Result<(&'r Arc<dyn DynTool>, &'r ToolDefinition), ToolResult> {
    let Some(tool) = registry.resolve(name) else {
        return Err(ToolResult::error(
            ToolErrorKind::UnknownTool,
            unknown_tool_message(registry, name),
        ));
    };
    let definition = tool.definition_dyn();
    if !is_offered(cx, definition) {
        return Err(ToolResult::error(
            ToolErrorKind::ToolNotAvailable,
            format!(
                "tool `{}` is not available in this request; call only the tools offered (a deferred tool must be found with `tool_search` first)",
                definition.name()
            ),
        ));
    }
    Ok((tool, definition))
}

fn unknown_tool_message(registry: &ToolRegistry, name: &str) -> String {
    let close = registry.closest_names(name, 3);
    let name = crate::echo::shorten(name);
    if close.is_empty() {
        format!("no tool is named `{name}`; call only the tools offered in this request")
    } else {
        let close: Vec<String> = close.iter().map(|n| format!("`{n}`")).collect();
        format!(
            "no tool is named `{name}`; did you mean {}? Call only the tools offered in this request",
            close.join(" or ")
        )
    }
}

/// A deferred tool is offered only when the request names it; an eager
/// tool is offered unless the request restricts the set.
fn is_offered(cx: &ToolContext, definition: &ToolDefinition) -> bool {
    match cx.offered() {
        Some(offered) => offered.contains(definition.name()),
        None => definition.exposure() == Exposure::Eager,
    }
}

/// The result for input that does not match the tool's schema: every fault
/// found, each with its path, so the model can fix them all in one retry.
pub(super) fn invalid_arguments(
    definition: &ToolDefinition,
    err: &iris_core::ArgumentError,
) -> ToolResult {
    // Paths and messages may quote the model's input (a bad value, an
    // unknown key): each is cut, so hostile input is never echoed whole.
    let fault = |fault: &iris_core::ArgumentFault| {
        format!(
            "at `{}`: {}",
            crate::echo::shorten_to(fault.path(), 200),
            crate::echo::shorten_to(fault.message(), 500),
        )
    };
    let text = match (err.faults(), err.omitted()) {
        ([one], 0) => format!(
            "invalid arguments for `{}` {}; fix them to match the tool's schema and call it again",
            definition.name(),
            fault(one),
        ),
        (faults, omitted) => {
            let mut text = format!(
                "invalid arguments for `{}`, {} problems:",
                definition.name(),
                faults.len() + omitted
            );
            for one in faults {
                text.push_str("\n- ");
                text.push_str(&fault(one));
            }
            if omitted > 0 {
                text.push_str("\n- and ");
                text.push_str(&omitted.to_string());
                text.push_str(" more, not listed");
            }
            text.push_str("\nfix them all to match the tool's schema and call it again");
            text
        }
    };
    ToolResult::error(ToolErrorKind::InvalidArguments, text)
}

/// Repairs the best SDKs make to what models send: `null` for "no
/// arguments", and an object sent as a JSON string. At most one applies,
/// and the name of the one that did comes back.
pub(super) fn repair_input(input: Value) -> (Value, Option<&'static str>) {
    match input {
        Value::Null => (
            Value::Object(serde_json::Map::new()),
            Some("null_as_empty_object"),
        ),
        Value::String(text) => match serde_json::from_str::<Value>(&text) {
            Ok(object @ Value::Object(_)) => (object, Some("object_from_json_string")),
            _ => (Value::String(text), None),
        },
        other => (other, None),
    }
}
