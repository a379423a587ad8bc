//! The agent file's JSON Schema, for editors: generated from the same types
//! serde reads, with each known factory's options schema attached.

use serde_json::{Value, json};

use super::file::AgentFile;
use super::names::Assembly;

/// The JSON Schema of an agent file, with the options of every factory in
/// the link-time catalog: point an editor at it (`# yaml-language-server:
/// $schema=agent.schema.json`) to complete and check keys.
#[must_use]
pub fn agent_schema() -> Value {
    Assembly::from_catalog().schema()
}

impl Assembly {
    /// The JSON Schema of an agent file, with the options of this list's
    /// factories.
    #[must_use]
    pub fn schema(&self) -> Value {
        let mut schema =
            serde_json::to_value(schemars::schema_for!(AgentFile)).unwrap_or_else(|_| json!({}));
        let hooks: Vec<(String, Value)> = self
            .hook_factories
            .iter()
            .map(|e| (e.name.clone(), e.item.options_schema()))
            .collect();
        let middleware: Vec<(String, Value)> = self
            .middleware_factories
            .iter()
            .map(|e| (e.name.clone(), e.item.options_schema()))
            .collect();
        attach_options(&mut schema, "HandlerSection", &hooks);
        attach_options(&mut schema, "MiddlewareEntry", &middleware);
        schema
    }
}

/// `if factory is X then options is X's options`, for each factory, on the
/// definition `def`.
fn attach_options(schema: &mut Value, def: &str, factories: &[(String, Value)]) {
    if factories.is_empty() {
        return;
    }
    let Some(Value::Object(target)) = schema.pointer_mut(&format!("/$defs/{def}")) else {
        return;
    };
    let rules: Vec<Value> = factories
        .iter()
        .map(|(name, options)| {
            let mut options = options.clone();
            if let Value::Object(map) = &mut options {
                // Nested definitions would dangle under `properties`.
                map.remove("$defs");
            }
            json!({
                "if": {"properties": {"factory": {"const": name}}, "required": ["factory"]},
                "then": {"properties": {"options": options}}
            })
        })
        .collect();
    target.insert("allOf".to_owned(), Value::Array(rules));
}
