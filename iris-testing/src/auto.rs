//! A model that calls every tool it is offered, once, with arguments made
//! from the tool's schema: a smoke test of a whole catalog through the
//! runtime (parsing, permissions, hooks, bodies, results).

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use iris_core::{BoxFuture, ToolUseBlock};
use iris_model::{FinishReason, Model, ModelError, ModelRequest, ModelResponse};
use serde_json::{Map, Value, json};

use crate::chunks::Seeded;
use crate::request::RecordedRequest;

/// Calls each offered tool once (tools disclosed later are called when
/// they first appear), with arguments generated from its input schema and
/// a seed, then answers with the names it called. See
/// [`arguments_for`] for how arguments are made.
#[derive(Debug)]
pub struct AutoModel {
    seed: u64,
    state: Mutex<AutoState>,
}

#[derive(Debug, Default)]
struct AutoState {
    called: BTreeSet<String>,
    requests: Vec<RecordedRequest>,
}

impl Default for AutoModel {
    fn default() -> Self {
        Self::new(0)
    }
}

impl AutoModel {
    /// A model whose arguments `seed` decides.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            state: Mutex::new(AutoState::default()),
        }
    }

    /// The tools called so far, by name.
    #[must_use]
    pub fn called(&self) -> Vec<String> {
        self.lock().called.iter().cloned().collect()
    }

    /// Every request answered, oldest first.
    #[must_use]
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, AutoState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Model for AutoModel {
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let mut state = self.lock();
        let turn = state.requests.len() + 1;
        let mut rng = Seeded::new(self.seed ^ turn as u64);
        let mut tool_calls = Vec::new();
        for tool in request.tools {
            let name = tool.name().as_str();
            if state.called.insert(name.to_owned()) {
                let arguments = generate(tool.parameters(), &mut rng);
                let id = format!("auto_{turn}_{}", tool_calls.len() + 1);
                tool_calls.push(ToolUseBlock::new(id, name, arguments));
            }
        }
        state.requests.push(RecordedRequest::of(&request));
        let response = if tool_calls.is_empty() {
            let called: Vec<&str> = state.called.iter().map(String::as_str).collect();
            ModelResponse {
                text: Some(format!("called {}", called.join(", "))),
                finish: FinishReason::Stop,
                ..ModelResponse::default()
            }
        } else {
            ModelResponse {
                tool_calls,
                finish: FinishReason::ToolCalls,
                ..ModelResponse::default()
            }
        };
        Box::pin(async move { Ok(response) })
    }
}

/// Arguments that `schema` accepts, the same for the same `seed`: every
/// required property and about half the optional ones; the `const`, or an
/// `enum` value; integers within `minimum`/`maximum`; strings of at least
/// `minLength` in a known `format`; arrays of `minItems` (or one) items.
/// `$ref`s into `$defs` are followed two levels deep (deeper, an empty
/// object).
#[must_use]
pub fn arguments_for(schema: &Value, seed: u64) -> Value {
    generate(schema, &mut Seeded::new(seed))
}

fn generate(schema: &Value, rng: &mut Seeded) -> Value {
    let defs = schema.get("$defs").or_else(|| schema.get("definitions"));
    value_for(schema, defs, rng, 0)
}

fn value_for(schema: &Value, defs: Option<&Value>, rng: &mut Seeded, depth: usize) -> Value {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or_default();
        return match defs.and_then(|d| d.get(name)) {
            Some(target) if depth < 2 => value_for(target, defs, rng, depth + 1),
            _ => json!({}),
        };
    }
    if let Some(constant) = schema.get("const") {
        return constant.clone();
    }
    if let Some(Value::Array(choices)) = schema.get("enum")
        && !choices.is_empty()
    {
        let at = usize::try_from(rng.below(choices.len() as u64)).unwrap_or(0);
        return choices[at].clone();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(options)) = schema.get(key)
            && let Some(first) = options
                .iter()
                .find(|o| o.get("type").and_then(Value::as_str) != Some("null"))
        {
            return value_for(first, defs, rng, depth);
        }
    }
    let ty = match schema.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    match ty {
        "object" => object_for(schema, defs, rng, depth),
        "array" => {
            let items = schema.get("items").cloned().unwrap_or(json!({}));
            let count = schema.get("minItems").and_then(Value::as_u64).unwrap_or(1);
            Value::Array(
                (0..count.min(8))
                    .map(|_| value_for(&items, defs, rng, depth))
                    .collect(),
            )
        }
        "integer" => {
            let low = schema.get("minimum").and_then(Value::as_i64).unwrap_or(0);
            let high = schema
                .get("maximum")
                .and_then(Value::as_i64)
                .unwrap_or(low.saturating_add(9));
            let span = u64::try_from(high.saturating_sub(low)).unwrap_or(0) + 1;
            json!(low.saturating_add(i64::try_from(rng.below(span)).unwrap_or(0)))
        }
        "number" => {
            let low = schema.get("minimum").and_then(Value::as_f64).unwrap_or(0.0);
            json!(low + 0.5)
        }
        "boolean" => json!(rng.below(2) == 1),
        "null" => Value::Null,
        _ => string_for(schema, rng),
    }
}

fn object_for(schema: &Value, defs: Option<&Value>, rng: &mut Seeded, depth: usize) -> Value {
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut object = Map::new();
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, property) in properties {
            if required.contains(name.as_str()) || rng.below(2) == 1 {
                object.insert(name.clone(), value_for(property, defs, rng, depth));
            }
        }
    }
    Value::Object(object)
}

fn string_for(schema: &Value, rng: &mut Seeded) -> Value {
    let words = ["alpha", "bravo", "charlie", "delta", "echo"];
    let word = words[usize::try_from(rng.below(words.len() as u64)).unwrap_or(0)];
    let text = match schema.get("format").and_then(Value::as_str) {
        Some("date-time") => "2026-01-02T03:04:05Z".to_owned(),
        Some("date") => "2026-01-02".to_owned(),
        Some("email") => format!("{word}@example.com"),
        Some("uri" | "url") => format!("https://example.com/{word}"),
        Some("uuid") => "00000000-0000-4000-8000-000000000000".to_owned(),
        _ => word.to_owned(),
    };
    let min = schema
        .get("minLength")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0);
    let max = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(usize::MAX);
    let mut text = iris_core::text::prefix(&text, max).to_owned();
    while text.chars().count() < min {
        text.push('x');
    }
    Value::String(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_meet_their_schema() {
        let schema = json!({
            "type": "object",
            "required": ["path", "count", "mode", "tags", "when"],
            "properties": {
                "path": {"type": "string", "minLength": 12},
                "count": {"type": "integer", "minimum": 3, "maximum": 5},
                "mode": {"enum": ["fast", "slow"]},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                "when": {"$ref": "#/$defs/When"},
                "note": {"type": ["string", "null"]}
            },
            "$defs": {"When": {"type": "object", "required": ["at"], "properties": {"at": {"type": "string", "format": "date"}}}}
        });
        let args = arguments_for(&schema, 1);
        assert!(
            args["path"].as_str().unwrap_or_default().chars().count() >= 12,
            "{args}"
        );
        let count = args["count"].as_i64().unwrap_or_default();
        assert!((3..=5).contains(&count), "{args}");
        assert!(["fast", "slow"].contains(&args["mode"].as_str().unwrap_or_default()));
        assert_eq!(args["tags"].as_array().map(Vec::len), Some(2));
        assert_eq!(args["when"]["at"], "2026-01-02");
        assert_eq!(
            args,
            arguments_for(&schema, 1),
            "the same seed, the same arguments"
        );
    }
}
