//! OpenAI Chat Completions and Responses tool shapes.

use serde_json::{Value, json};

use super::strict::{NotStrict, make_strict};
use super::{Projection, ProjectionReport};
use crate::spec::ToolSpec;

/// The Chat Completions shape: `{"type":"function","function":{...}}`.
///
/// With `spec.strict`, the schema is made strict when it can be; otherwise
/// the tool is sent non-strict and the report says why.
#[must_use]
pub fn openai_chat(spec: &ToolSpec) -> Projection {
    let (parameters, report) = parameters(spec);
    let tool = json!({
        "type": "function",
        "function": {
            "name": spec.name(),
            "description": spec.description(),
            "parameters": parameters,
            "strict": report.strict,
        }
    });
    Projection { tool, report }
}

/// The Responses shape: `{"type":"function", name, description, parameters, strict}`.
///
/// `strict` is always written out, since the Responses API treats a missing
/// `strict` as `true`.
#[must_use]
pub fn openai_responses(spec: &ToolSpec) -> Projection {
    let (parameters, report) = parameters(spec);
    let tool = json!({
        "type": "function",
        "name": spec.name(),
        "description": spec.description(),
        "parameters": parameters,
        "strict": report.strict,
    });
    Projection { tool, report }
}

fn parameters(spec: &ToolSpec) -> (Value, ProjectionReport) {
    let mut report = ProjectionReport::new(spec.name());
    if !spec.strict() {
        return ((*spec.parameters()).clone(), report);
    }
    match make_strict(spec.parameters()) {
        Ok((schema, notes)) => {
            report.strict = true;
            report.notes = notes;
            (schema, report)
        }
        Err(NotStrict(note)) => {
            report.notes.push(note);
            ((*spec.parameters()).clone(), report)
        }
    }
}
