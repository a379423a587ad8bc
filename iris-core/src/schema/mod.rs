//! Argument schemas from schemars, in the shape tools send, and argument parsing.

pub(crate) mod constraints;
pub(crate) mod json_path;
pub(crate) mod locate;
pub(crate) mod nulls;
pub(crate) mod output_probe;
mod patch;

pub(crate) use patch::PATCH_KEYWORD;
pub use patch::Patch;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::error::{ArgumentError, ArgumentFault};

/// The JSON Schema (2020-12) of `T` as a tool's input schema.
///
/// Root `type: object` with `properties`, unknown properties rejected unless
/// `T` says otherwise, and none of the root `$schema`/`title`/`description`
/// noise (the description lives in the definition).
#[must_use]
pub fn input_schema_for<T: JsonSchema>() -> Value {
    finish_schema(generator().into_root_schema_for::<T>())
}

// What does not depend on `T` stays out of `input_schema_for`, so it is
// compiled once rather than once per argument type.
fn generator() -> schemars::SchemaGenerator {
    let mut settings = SchemaSettings::draft2020_12();
    settings.meta_schema = None;
    settings.into_generator()
}

fn finish_schema(schema: schemars::Schema) -> Value {
    let mut value = Value::from(schema);
    collapse_unit_enums(&mut value);
    close_objects(&mut value, 0);
    if let Value::Object(root) = &mut value {
        tidy_root(root);
    }
    value
}

/// Keywords beside `properties` that make `additionalProperties: false`
/// wrong or moot: composition (the keys of another schema would count as
/// unknown) and keywords that accept undeclared keys on purpose.
const KEEPS_OBJECT_OPEN: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "patternProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
];

/// Closes every object schema with declared properties, at any depth: the
/// parser drops a key a nested type does not know (unless the type says
/// otherwise, which its schema then shows), so the schema the model sees
/// says such keys are refused, and the runtime refuses them.
fn close_objects(node: &mut Value, depth: usize) {
    // Past this, a schema is not one schemars makes.
    if depth > 128 {
        return;
    }
    let Value::Object(map) = node else {
        return;
    };
    if map.get("properties").is_some_and(Value::is_object)
        && !KEEPS_OBJECT_OPEN.iter().any(|k| map.contains_key(*k))
    {
        map.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    for (keyword, child) in map.iter_mut() {
        match (keyword.as_str(), child) {
            ("properties" | "$defs" | "patternProperties", Value::Object(schemas)) => schemas
                .values_mut()
                .for_each(|schema| close_objects(schema, depth + 1)),
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(schemas)) => schemas
                .iter_mut()
                .for_each(|schema| close_objects(schema, depth + 1)),
            (
                "items" | "additionalProperties" | "not" | "if" | "then" | "else" | "contains",
                schema,
            ) => close_objects(schema, depth + 1),
            _ => {}
        }
    }
}

/// Unit enums whose variants have doc comments come out of schemars as a
/// `oneOf` of `const` strings; models read a plain string `enum` best, so
/// the variants' docs move into the enum's description as a list.
fn collapse_unit_enums(node: &mut Value) {
    match node {
        Value::Object(map) => {
            if let Some(collapsed) = string_enum(map) {
                *map = collapsed;
            }
            map.values_mut().for_each(collapse_unit_enums);
        }
        Value::Array(items) => items.iter_mut().for_each(collapse_unit_enums),
        _ => {}
    }
}

fn string_enum(map: &Map<String, Value>) -> Option<Map<String, Value>> {
    let Some(Value::Array(branches)) = map.get("oneOf") else {
        return None;
    };
    let mut values = Vec::with_capacity(branches.len());
    let mut docs = Vec::new();
    for branch in branches {
        let branch = branch.as_object()?;
        let value = branch.get("const")?.as_str()?;
        let only_known_keys = branch
            .keys()
            .all(|k| matches!(k.as_str(), "const" | "type" | "description"));
        if !only_known_keys || branch.get("type").is_some_and(|t| t != "string") {
            return None;
        }
        if let Some(doc) = branch.get("description").and_then(Value::as_str) {
            docs.push(format!("- `{value}`: {doc}"));
        }
        values.push(Value::String(value.to_owned()));
    }
    let mut out = map.clone();
    out.shift_remove("oneOf");
    out.insert("type".to_owned(), Value::String("string".to_owned()));
    out.insert("enum".to_owned(), Value::Array(values));
    if !docs.is_empty() {
        let head = out
            .get("description")
            .and_then(Value::as_str)
            .map(|d| format!("{d}\n"))
            .unwrap_or_default();
        out.insert(
            "description".to_owned(),
            Value::String(format!("{head}{}", docs.join("\n"))),
        );
    }
    Some(out)
}

fn tidy_root(root: &mut Map<String, Value>) {
    for noise in ["$schema", "title", "description"] {
        root.shift_remove(noise);
    }
    if root.get("type").and_then(Value::as_str) == Some("object") {
        root.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        root.entry("additionalProperties")
            .or_insert(Value::Bool(false));
    }
}

/// The JSON Schema (2020-12) of what `T` serializes to, as a tool's output
/// schema (the schema of its result's `data`): without the root
/// `$schema`/`title`/`description`, and with no constraint added that `T`
/// does not state.
#[must_use]
pub fn output_schema_for<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12().for_serialize();
    settings.meta_schema = None;
    let mut value = Value::from(settings.into_generator().into_root_schema_for::<T>());
    collapse_unit_enums(&mut value);
    if let Value::Object(root) = &mut value {
        for noise in ["$schema", "title", "description"] {
            root.shift_remove(noise);
        }
    }
    value
}

/// The schema of a tool that takes no arguments.
#[must_use]
pub fn empty_object_schema() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// Parses `input` into `T`, naming the JSON path of the culprit on failure.
///
/// # Errors
/// [`ArgumentError`] with a `$`-rooted path (`$.items[2].name`) and serde's
/// message, which says what was expected and what was found.
pub fn parse_arguments<T: DeserializeOwned>(input: &Value) -> Result<T, ArgumentError> {
    // Valid input, the common case, is parsed without tracking the path;
    // only a failure is parsed again to say where it went wrong.
    if let Ok(parsed) = T::deserialize(input) {
        return Ok(parsed);
    }
    serde_path_to_error::deserialize(input).map_err(|err| {
        let path = json_path(err.path());
        ArgumentError::new(path, err.into_inner().to_string())
    })
}

fn json_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::from("$");
    for segment in path {
        match segment {
            Segment::Seq { index } => json_path::push_index(&mut out, *index),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                json_path::push_key(&mut out, key);
            }
            Segment::Unknown => out.push_str(".?"),
        }
    }
    out
}

/// Refuses top-level keys that `schema` does not declare, when the schema
/// closes its object with `additionalProperties: false`.
///
/// Tools whose argument type does not deny unknown fields itself use this
/// so the schema the model sees and the parser agree.
///
/// # Errors
/// [`ArgumentError`] naming every unknown key and the accepted ones.
pub fn reject_unknown_keys(input: &Value, schema: &Value) -> Result<(), ArgumentError> {
    let (Value::Object(input), Some(Value::Object(props))) = (input, schema.get("properties"))
    else {
        return Ok(());
    };
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        return Ok(());
    }
    let unknown = input.keys().filter(|k| !props.contains_key(k.as_str()));
    let faults: Vec<ArgumentFault> = unknown
        .clone()
        .take(locate::MAX_FAULTS)
        .map(|key| ArgumentFault::new(format!("$.{key}"), locate::unknown_key(key, Some(props))))
        .collect();
    let omitted = unknown.count().saturating_sub(faults.len());
    match ArgumentError::from_faults(faults) {
        None => Ok(()),
        Some(error) => Err(error.with_omitted(omitted)),
    }
}

/// Checks `input` against a tool's JSON Schema when no Rust type parses it
/// (a tool defined by configuration): types, required and unknown keys,
/// enums, and bounds, each fault with its own path (at most
/// 16 listed, the rest counted).
///
/// # Errors
/// [`ArgumentError`] with every fault found.
pub fn check_input(input: &Value, schema: &Value) -> Result<(), ArgumentError> {
    match locate::departures(input, schema) {
        None => Ok(()),
        Some(error) => Err(error),
    }
}

/// Checks a value against `schema` as completely as a tool's arguments are
/// checked: types, required and unknown keys, enums and bounds
/// ([`check_input`]), then the constraints a parser does not see
/// (patterns, lengths, formats, unique items), each fault with its path.
/// For many values of one schema, [`ValueCheck`] reads the schema once.
///
/// # Errors
/// [`ArgumentError`] with every fault found.
pub fn check_value(input: &Value, schema: &Value) -> Result<(), ArgumentError> {
    ValueCheck::new(schema).check(input, schema)
}

/// What [`check_value`] reads of a schema, read once: its constraints.
#[derive(Debug, Clone)]
pub struct ValueCheck {
    constraints: Option<std::sync::Arc<constraints::Constraints>>,
}

impl ValueCheck {
    /// The check of values of `schema`.
    #[must_use]
    pub fn new(schema: &Value) -> Self {
        Self {
            constraints: constraints::Constraints::of(schema).map(std::sync::Arc::new),
        }
    }

    /// [`check_value`] of `input` against `schema`, the schema this check
    /// was made from.
    ///
    /// # Errors
    /// [`ArgumentError`] with every fault found.
    pub fn check(&self, input: &Value, schema: &Value) -> Result<(), ArgumentError> {
        check_input(input, schema)?;
        match &self.constraints {
            Some(constraints) => locate::check(constraints, input, schema),
            None => Ok(()),
        }
    }
}

/// `input` without the `null`s a provider's strict mode sends for optional
/// properties of `schema` (strict mode makes every property required, and
/// an optional one nullable), so that it reads as `schema` says:
/// borrowed when it holds no `null` at all.
#[must_use]
pub fn without_optional_nulls<'v>(input: &'v Value, schema: &Value) -> std::borrow::Cow<'v, Value> {
    nulls::without_optional_nulls(input, schema)
}

/// A short name for the kind of a JSON value, for messages.
#[must_use]
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    /// Root docs that belong to the definition, not the schema.
    struct Args {
        #[allow(dead_code, reason = "only parsed")]
        items: Vec<Item>,
    }

    #[derive(Deserialize, JsonSchema)]
    struct Item {
        #[allow(dead_code, reason = "only parsed")]
        name: String,
    }

    #[test]
    fn root_is_a_closed_object_without_noise() {
        let schema = input_schema_for::<Args>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        for noise in ["$schema", "title", "description"] {
            assert!(schema.get(noise).is_none(), "{noise}");
        }
    }

    #[test]
    fn parse_errors_name_the_path() {
        let err = parse_arguments::<Args>(&json!({"items": [{"name": "a"}, {"name": 3}]}))
            .err()
            .unwrap();
        assert_eq!(err.path(), "$.items[1].name");
        assert!(err.message().contains("expected a string"), "{err}");
    }

    #[test]
    fn unknown_keys_are_refused_when_the_schema_is_closed() {
        let schema =
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
        assert!(reject_unknown_keys(&json!({"a": 1}), &schema).is_ok());
        let err = reject_unknown_keys(&json!({"b": 1}), &schema).unwrap_err();
        assert_eq!(err.path(), "$.b");
        let open = json!({"type": "object", "properties": {}});
        assert!(reject_unknown_keys(&json!({"b": 1}), &open).is_ok());
    }
}
