//! A tool's input schema projected into every provider's wire shape.
//!
//! Properties: no projection panics; each gives identical bytes on a
//! second run; a projection reported strict keeps the strict rules; the
//! Gemini OpenAPI shape holds no `$ref`; every keyword a note says was
//! dropped was in the schema.

use std::sync::Arc;

use serde_json::Value;

use crate::definition::ToolSpec;
use crate::name::ToolName;
use crate::provider::invariants::{has_ref, strict_invariants_hold};
use crate::provider::{
    Projection, ProjectionNote, anthropic, gemini, gemini_openapi, openai_chat, openai_responses,
};

type Project = fn(&ToolSpec) -> Projection;

/// Projects `data` (a JSON schema, or properties when it is not an object
/// schema) for every provider, strict and not, and checks the properties.
///
/// # Panics
/// When a property does not hold: that is a finding.
pub fn schema_projections(data: &[u8]) {
    let Some(value) = super::json(data) else {
        return;
    };
    let schema = if value.get("type") == Some(&Value::from("object")) {
        value
    } else {
        serde_json::json!({"type": "object", "properties": {"value": value}})
    };
    let Ok(name) = ToolName::new("t") else {
        return;
    };
    for strict in [false, true] {
        let spec = ToolSpec {
            name: name.clone(),
            description: Arc::from("A tool under test."),
            parameters: Arc::new(schema.clone()),
            strict,
        };
        let all: [(&str, Project); 5] = [
            ("openai_chat", openai_chat),
            ("openai_responses", openai_responses),
            ("anthropic", anthropic),
            ("gemini", gemini),
            ("gemini_openapi", gemini_openapi),
        ];
        for (provider, project) in all {
            let first = project(&spec);
            let second = project(&spec);
            assert_eq!(
                first.tool.to_string(),
                second.tool.to_string(),
                "{provider} gave two answers for {schema}"
            );
            if first.report.strict {
                let parameters = first
                    .tool
                    .pointer("/function/parameters")
                    .or_else(|| first.tool.get("parameters"))
                    .unwrap_or(&Value::Null);
                assert!(
                    strict_invariants_hold(parameters),
                    "{provider} reported strict but broke the strict rules: {parameters} from {schema}"
                );
            }
            if provider == "gemini_openapi" {
                assert!(
                    first.tool.get("parameters").is_none_or(|p| !has_ref(p)),
                    "{provider} left a $ref: {} from {schema}",
                    first.tool
                );
            }
            let text = schema.to_string();
            for note in &first.report.notes {
                if let ProjectionNote::DroppedKeyword { keyword, .. } = note {
                    let held = |keyword: &str| text.contains(&Value::from(keyword).to_string());
                    // A dropped `$ref` is reported with its target.
                    let reported = held(keyword) || (keyword.starts_with("$ref ") && held("$ref"));
                    assert!(
                        reported,
                        "{provider} reports dropping `{keyword}`, which {schema} does not hold"
                    );
                }
            }
        }
    }
}
