//! Anthropic Messages tool shape.

use serde_json::json;

use super::{Projection, ProjectionReport};
use crate::spec::ToolSpec;

/// The Messages API shape: `{name, description, input_schema}`.
///
/// Anthropic accepts JSON Schema with local `$ref`s as they are, so the
/// schema travels unchanged.
#[must_use]
pub fn anthropic(spec: &ToolSpec) -> Projection {
    let tool = json!({
        "name": spec.name(),
        "description": spec.description(),
        "input_schema": spec.parameters(),
    });
    Projection {
        tool,
        report: ProjectionReport::new(spec.name()),
    }
}
