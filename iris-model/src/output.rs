//! The shape a run's final answer must take: a JSON Schema, sent with each
//! provider's native structured output, in the projection that provider
//! takes (strict where the schema allows it). What a provider does not
//! enforce the runner checks after the answer, with the same parser as tool
//! arguments.

use iris_core::provider::{ProjectionNote, ProjectionReport};
use iris_core::{ToolName, ToolSpec};
use serde_json::{Map, Value, json};

/// The one property a value that is not an object travels in.
const WRAPPED: &str = "response";

/// A JSON Schema the model's final answer must match, under a name the
/// providers show the model.
///
/// Providers take only objects as structured output: a schema that is not
/// an object's (a list, a string, an enum) travels as the one property
/// `response` of an object, and [`OutputFormat::value_of`] takes the value
/// back out of an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputFormat {
    spec: ToolSpec,
    wrapped: bool,
}

impl OutputFormat {
    /// The output format `name`, whose answers match `schema`. The name is
    /// made one every provider takes ([`ToolName::from_lossy`]).
    #[must_use]
    pub fn new(name: &str, schema: Value) -> Self {
        let is_object = schema.get("type").and_then(Value::as_str) == Some("object");
        let (schema, wrapped) = if is_object {
            (schema, false)
        } else {
            (wrap(schema), true)
        };
        let description = schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("The final answer.")
            .to_owned();
        Self {
            spec: ToolSpec::new(ToolName::from_lossy(name), description, schema).with_strict(true),
            wrapped,
        }
    }

    /// The name.
    #[must_use]
    pub fn name(&self) -> &str {
        self.spec.name().as_str()
    }

    /// The schema answers must match: always an object's (the given one
    /// wrapped when it was not).
    #[must_use]
    pub fn schema(&self) -> &Value {
        self.spec.parameters()
    }

    /// What the model is told the answer is (the schema's description).
    #[must_use]
    pub fn description(&self) -> &str {
        self.spec.description()
    }

    /// Why Anthropic's `model` is sent this format as a tool it must call
    /// (it has no structured outputs, or the schema cannot be closed), or
    /// `None` when it is sent as structured output.
    #[cfg(feature = "anthropic")]
    pub(crate) fn anthropic_sent_as_tool(&self, model: &str) -> bool {
        sent_as_tool(model, &self.anthropic().1)
    }

    /// Whether the given schema travels wrapped in an object.
    #[must_use]
    pub fn is_wrapped(&self) -> bool {
        self.wrapped
    }

    /// The value an `answer` that matches [`OutputFormat::schema`] carries:
    /// the answer, or its `response` when the schema was wrapped.
    #[must_use]
    pub fn value_of(&self, answer: Value) -> Value {
        match answer {
            Value::Object(mut object) if self.wrapped => {
                object.shift_remove(WRAPPED).unwrap_or(Value::Null)
            }
            other => other,
        }
    }

    /// What `config`'s provider makes of the schema: whether it enforces it
    /// strictly, and each keyword it drops (the runner checks those); the
    /// local servers behind OpenAI Chat take the schema as written, as a
    /// grammar.
    #[must_use]
    pub fn report(&self, config: &crate::ModelConfig) -> ProjectionReport {
        match (config.provider, config.profile) {
            (crate::ModelProvider::OpenaiChat, crate::ServerProfile::Openai)
            | (crate::ModelProvider::OpenaiResponses, _) => self.openai().1,
            (crate::ModelProvider::Anthropic, _) => anthropic_report(&config.model, self),
            (crate::ModelProvider::Gemini, _) => self.gemini().1,
            (crate::ModelProvider::OpenaiChat, _) => {
                let (_, mut report) = self.openai();
                report.strict = false;
                report.notes.clear();
                report
            }
        }
    }

    /// The schema as OpenAI takes it (strict when it can be made strict),
    /// and what the projection changed.
    #[must_use]
    pub fn openai(&self) -> (Value, ProjectionReport) {
        let projection = iris_core::provider::openai_chat(&self.spec);
        let schema = projection.tool["function"]["parameters"].clone();
        (schema, projection.report)
    }

    /// The schema as Anthropic's structured outputs take it: the strict
    /// projection (objects closed), without the numeric and length bounds
    /// it does not read, which the runner still checks.
    #[must_use]
    pub fn anthropic(&self) -> (Value, ProjectionReport) {
        let (mut schema, mut report) = self.openai();
        drop_bounds(&mut schema, "", &mut report.notes);
        (schema, report)
    }

    /// The schema as Gemini's `responseJsonSchema` takes it.
    #[must_use]
    pub fn gemini(&self) -> (Value, ProjectionReport) {
        let projection = iris_core::provider::gemini(&self.spec);
        let schema = projection
            .tool
            .get("parametersJsonSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"}));
        (schema, projection.report)
    }
}

/// Model names (their start, dots read as dashes) of the Claude models
/// that came before structured outputs and strict tools. A list of the old
/// models, not of the new ones, so that a model released later is sent
/// structured output without waiting for this list.
const WITHOUT_STRUCTURED_OUTPUT: &[&str] = &[
    "claude-instant",
    "claude-2",
    "claude-3",
    "claude-sonnet-4-0",
    "claude-sonnet-4-2025",
    "claude-opus-4-0",
    "claude-opus-4-2025",
];

/// Whether Anthropic's `model` takes structured output. The name may carry
/// a router's prefix (`anthropic/…`, `anthropic.…`) and dots for dashes.
fn anthropic_has_structured_output(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    // Bedrock names a model `anthropic.claude-…`, and an inference profile
    // `us.anthropic.claude-…`.
    let name = name
        .rsplit_once("anthropic.")
        .map_or(name, |(_, rest)| rest);
    let name = name.replace('.', "-").to_ascii_lowercase();
    !WITHOUT_STRUCTURED_OUTPUT
        .iter()
        .any(|old| name.starts_with(old))
}

/// What Anthropic's `model` makes of `output`: when the model cannot take
/// it as structured output, the report says it travels as the tool the
/// model must call, and is not strict.
fn anthropic_report(model: &str, output: &OutputFormat) -> ProjectionReport {
    let (_, mut report) = output.anthropic();
    if let Some(why) = tool_reason(model, &report) {
        report.strict = false;
        report.notes.push(ProjectionNote::NotStrict {
            at: String::new(),
            reason: format!(
                "{why}: the schema is sent as a tool `{}` the model must call to answer",
                output.name()
            ),
        });
    }
    report
}

/// Why the output travels to Anthropic's `model` as a tool, or `None` when
/// it is sent as structured output.
fn tool_reason(model: &str, report: &ProjectionReport) -> Option<String> {
    if !anthropic_has_structured_output(model) {
        Some(format!("{model} has no structured outputs"))
    } else if !report.strict {
        Some("the schema cannot be closed as structured outputs require".to_owned())
    } else {
        None
    }
}

/// Whether the output of `report` travels to Anthropic's `model` as a
/// tool (the test [`tool_reason`] explains, without its words).
#[cfg(feature = "anthropic")]
pub(crate) fn sent_as_tool(model: &str, report: &ProjectionReport) -> bool {
    !anthropic_has_structured_output(model) || !report.strict
}

/// `schema` as the one property [`WRAPPED`] of an object (its definitions
/// moved up to the object, where its references look for them, and a
/// reference to its own root, as a recursive type makes, pointed at the
/// property).
fn wrap(mut schema: Value) -> Value {
    let mut object = Map::new();
    object.insert("type".into(), json!("object"));
    if let Value::Object(inner) = &mut schema {
        for key in ["$defs", "definitions"] {
            if let Some(defs) = inner.shift_remove(key) {
                object.insert(key.into(), defs);
            }
        }
    }
    repoint_root_refs(&mut schema);
    for key in ["$defs", "definitions"] {
        if let Some(defs) = object.get_mut(key) {
            repoint_root_refs(defs);
        }
    }
    object.insert("properties".into(), json!({ WRAPPED: schema }));
    object.insert("required".into(), json!([WRAPPED]));
    object.insert("additionalProperties".into(), json!(false));
    Value::Object(object)
}

/// Every `$ref` in `schema` to the old root (`#`, or a path under it other
/// than the definitions, which moved up with their names) made to point at
/// the wrapped property.
fn repoint_root_refs(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get_mut("$ref") {
                let under_root = target == "#"
                    || (target.starts_with("#/")
                        && !target.starts_with("#/$defs/")
                        && !target.starts_with("#/definitions/"));
                if under_root {
                    *target = format!("#/properties/{WRAPPED}{}", &target[1..]);
                }
            }
            for value in map.values_mut() {
                repoint_root_refs(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(repoint_root_refs),
        _ => {}
    }
}

/// Bounds Anthropic's structured outputs do not accept; the runner still
/// checks them.
const UNREAD_BOUNDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
];

/// Keywords whose value is a map of names to schemas.
const SCHEMA_MAPS: &[&str] = &["properties", "$defs", "definitions", "patternProperties"];
/// Keywords whose value is one schema.
const SCHEMA_ONE: &[&str] = &["items", "additionalProperties", "not", "contains"];
/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// Removes [`UNREAD_BOUNDS`] from `schema` and every schema inside it (never
/// from a property that happens to bear such a name), noting each.
fn drop_bounds(schema: &mut Value, at: &str, notes: &mut Vec<ProjectionNote>) {
    let Value::Object(map) = schema else {
        return;
    };
    for keyword in UNREAD_BOUNDS {
        if map.shift_remove(*keyword).is_some() {
            notes.push(ProjectionNote::DroppedKeyword {
                at: at.to_owned(),
                keyword: (*keyword).to_owned(),
            });
        }
    }
    for (key, value) in map.iter_mut() {
        let here = format!("{at}/{key}");
        if SCHEMA_MAPS.contains(&key.as_str()) {
            if let Value::Object(named) = value {
                for (name, schema) in named.iter_mut() {
                    drop_bounds(schema, &format!("{here}/{name}"), notes);
                }
            }
        } else if SCHEMA_ONE.contains(&key.as_str()) {
            drop_bounds(value, &here, notes);
        } else if SCHEMA_LISTS.contains(&key.as_str())
            && let Value::Array(list) = value
        {
            for (index, schema) in list.iter_mut().enumerate() {
                drop_bounds(schema, &format!("{here}/{index}"), notes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recursive_root_points_at_the_wrapped_property() {
        let schema = json!({
            "oneOf": [
                {"type": "object", "properties": {"num": {"type": "integer"}}},
                {"type": "object", "properties": {"neg": {"$ref": "#"}}},
                {"type": "object", "properties": {"lit": {"$ref": "#/$defs/Lit"}}}
            ],
            "$defs": {"Lit": {"type": "object", "properties": {"of": {"$ref": "#"}}}}
        });
        let format = OutputFormat::new("Expr", schema);
        assert!(format.is_wrapped());
        let wrapped = format.schema();
        assert_eq!(
            wrapped["properties"]["response"]["oneOf"][1]["properties"]["neg"]["$ref"],
            "#/properties/response"
        );
        assert_eq!(
            wrapped["properties"]["response"]["oneOf"][2]["properties"]["lit"]["$ref"],
            "#/$defs/Lit"
        );
        assert_eq!(
            wrapped["$defs"]["Lit"]["properties"]["of"]["$ref"],
            "#/properties/response"
        );
        assert_eq!(
            format.value_of(json!({"response": {"num": 1}})),
            json!({"num": 1})
        );
    }

    #[test]
    fn a_property_named_like_a_bound_is_kept() {
        let format = OutputFormat::new(
            "Range",
            json!({
                "type": "object",
                "properties": {"minimum": {"type": "integer", "minimum": 0}},
                "required": ["minimum"],
                "additionalProperties": false
            }),
        );
        let (schema, _) = format.anthropic();
        assert!(schema["properties"]["minimum"].is_object(), "{schema}");
        assert!(
            schema["properties"]["minimum"].get("minimum").is_none(),
            "{schema}"
        );
    }
}
