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
        add_loader_rules(&mut schema);
        schema
    }
}

/// The rules the loader holds a file to that span several keys, which the
/// types alone do not say: a file the schema accepts loads, unless it names
/// something the schema cannot know (a tool, a factory, a file, a
/// variable).
fn add_loader_rules(schema: &mut Value) {
    if let Value::Object(root) = schema {
        root.insert(
            "not".to_owned(),
            json!({
                "description": "`instructions` or `instructions_file`, not both.",
                "properties": {
                    "instructions": {"type": "string"},
                    "instructions_file": {"type": "string"}
                },
                "required": ["instructions", "instructions_file"]
            }),
        );
    }
    let handler_rules = [
        json!({
            "if": {"properties": {"type": {"const": "factory"}}, "required": ["type"]},
            "then": {
                "required": ["factory"],
                "properties": {
                    "factory": {"type": "string"},
                    "command": {"type": "null"},
                    "env": {"maxProperties": 0},
                    "cwd": {"type": "null"}
                }
            }
        }),
        json!({
            "if": {"properties": {"type": {"const": "command"}}, "required": ["type"]},
            "then": {
                "required": ["command"],
                "properties": {
                    "command": {"type": "array", "minItems": 1},
                    "factory": {"type": "null"},
                    "options": {"type": "null"}
                }
            }
        }),
    ];
    add_rules(schema, "HandlerSection", &handler_rules);
    add_rules(
        schema,
        "CommandToolSection",
        &[json!({
            "properties": {
                "name": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
                "description": {"type": "string", "pattern": "\\S"},
                "command": {"type": "array", "minItems": 1},
                "input_schema": {
                    "type": "object",
                    "required": ["type"],
                    "properties": {"type": {"const": "object"}}
                }
            },
            "not": {
                "description": "`parameters` or `input_schema`, not both.",
                "required": ["parameters", "input_schema"]
            }
        })],
    );
    add_rules(
        schema,
        "ChildSection",
        &[json!({
            "properties": {
                "name": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
                "description": {"type": "string", "pattern": "\\S"}
            }
        })],
    );
    add_rules(schema, "HookSection", &hook_rules());
    // One of `schema` (an object: a JSON Schema) or `schema_file`.
    add_rules(
        schema,
        "OutputSection",
        &[json!({
            "properties": {"schema": {"type": "object"}, "schema_file": {"type": "string"}},
            "oneOf": [{"required": ["schema"]}, {"required": ["schema_file"]}]
        })],
    );
}

/// What the loader refuses in a hook that types alone cannot say: tool
/// filters and `tree_wide` only where the event has calls, one deadline.
fn hook_rules() -> [Value; 4] {
    [
        json!({
            "if": {
                "properties": {"event": {"enum": ["run.started", "run.finished", "model.before", "model.after"]}},
                "required": ["event"]
            },
            "then": {"properties": {"tools": {"maxItems": 0}}}
        }),
        json!({
            "if": {
                "properties": {"event": {"const": "tool.after"}},
                "required": ["event"]
            },
            "then": {"properties": {"tree_wide": {"const": false}}}
        }),
        json!({
            "if": {
                "properties": {"event": {"enum": ["run.started", "run.finished"]}},
                "required": ["event"]
            },
            "then": {"properties": {"tree_wide": {"const": false}}}
        }),
        json!({
            "not": {
                "description": "`timeout` or `handler.timeout`, not both: a hook has one deadline.",
                "required": ["timeout", "handler"],
                "properties": {"handler": {"required": ["timeout"]}}
            }
        }),
    ]
}

/// Appends `rules` to the `allOf` of the definition `def`.
fn add_rules(schema: &mut Value, def: &str, rules: &[Value]) {
    let Some(Value::Object(target)) = schema.pointer_mut(&format!("/$defs/{def}")) else {
        return;
    };
    let all = target
        .entry("allOf")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(all) = all {
        all.extend(rules.iter().cloned());
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
