//! `null` for an optional property, at any depth.
//!
//! Strict-mode providers must send every property, so an optional or
//! defaulted one comes as `null` when the model leaves it out; inside a
//! nested object too. Such a `null` means "absent": dropped before parsing,
//! it gives `None` or the default, where serde would refuse `null` for a
//! defaulted `bool`. A `null` for a required property is left for the
//! parser to refuse.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::schema::PATCH_KEYWORD;

/// Deepest a walk goes; deeper input is left as it is.
const MAX_DEPTH: usize = 128;

/// `input` without the `null`s of optional properties, borrowed when it
/// holds no `null` at all (the common case, checked first).
#[inline]
pub(crate) fn without_optional_nulls<'v>(input: &'v Value, schema: &Value) -> Cow<'v, Value> {
    if !holds_null(input, 0) {
        return Cow::Borrowed(input);
    }
    Cow::Owned(stripped(input, schema))
}

/// Whether input of `schema` may hold a `null` that
/// [`without_optional_nulls`] drops. `false` only for the shape it can tell
/// at a glance has none: an object whose every property is required and of
/// one plain scalar type (no `null` among its types, no nesting, no
/// reference, no alternatives). Anything else is `true`, so that the input
/// is looked at.
pub(crate) fn may_drop_nulls(schema: &Value) -> bool {
    let Some(object) = schema.as_object() else {
        return true;
    };
    let nests = ["anyOf", "oneOf", "allOf", "$ref"]
        .iter()
        .any(|key| object.contains_key(*key))
        || object
            .get("additionalProperties")
            .is_some_and(|v| !v.is_boolean());
    if nests {
        return true;
    }
    // No properties: nothing is optional.
    let Some(properties) = object.get("properties").and_then(Value::as_object) else {
        return false;
    };
    let required = object.get("required").and_then(Value::as_array);
    let is_required = |key: &str| required.is_some_and(|r| r.iter().any(|k| k == key));
    let plain_scalar = |property: &Value| {
        property.as_object().is_some_and(|p| {
            matches!(
                p.get("type").and_then(Value::as_str),
                Some("integer" | "number" | "string" | "boolean")
            ) && [
                "anyOf",
                "oneOf",
                "allOf",
                "$ref",
                "items",
                "properties",
                PATCH_KEYWORD,
            ]
            .iter()
            .all(|key| !p.contains_key(*key))
        })
    };
    properties
        .iter()
        .any(|(key, property)| !is_required(key) || !plain_scalar(property))
}

/// Whether a container holds a `null` at any depth. Scalars are tested in
/// place: this runs for every call, and most arguments are flat.
fn holds_null(container: &Value, depth: usize) -> bool {
    let is_or_holds = |value: &Value| match value {
        Value::Null => true,
        Value::Object(_) | Value::Array(_) => depth < MAX_DEPTH && holds_null(value, depth + 1),
        _ => false,
    };
    match container {
        Value::Object(map) => map.values().any(is_or_holds),
        Value::Array(items) => items.iter().any(is_or_holds),
        other => other.is_null(),
    }
}

fn stripped(input: &Value, schema: &Value) -> Value {
    let mut owned = input.clone();
    let defs = schema.get("$defs").and_then(Value::as_object);
    Stripper { defs }.strip(&mut owned, schema, 0);
    owned
}

struct Stripper<'s> {
    defs: Option<&'s Map<String, Value>>,
}

impl<'s> Stripper<'s> {
    fn strip(&self, value: &mut Value, schema: &'s Value, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let mut candidates = Vec::new();
        self.branches(schema, &mut candidates, depth);
        match value {
            Value::Object(object) => self.strip_object(object, &candidates, depth),
            Value::Array(items) => {
                let item_schemas: Vec<&Value> =
                    candidates.iter().filter_map(|c| c.get("items")).collect();
                for (index, item) in items.iter_mut().enumerate() {
                    let prefix = candidates.iter().find_map(|c| {
                        c.get("prefixItems")
                            .and_then(Value::as_array)
                            .and_then(|p| p.get(index))
                    });
                    if let Some(schema) = prefix.or_else(|| item_schemas.first().copied()) {
                        self.strip(item, schema, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    /// The object schemas `schema` stands for: itself, what its `$ref`
    /// names, and the branches of its `anyOf`/`oneOf`/`allOf`.
    fn branches(&self, schema: &'s Value, out: &mut Vec<&'s Map<String, Value>>, depth: usize) {
        let Value::Object(map) = schema else {
            return;
        };
        if depth > MAX_DEPTH {
            return;
        }
        out.push(map);
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .and_then(|name| self.defs?.get(name))
        {
            self.branches(target, out, depth + 1);
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(list)) = map.get(key) {
                for branch in list {
                    self.branches(branch, out, depth + 1);
                }
            }
        }
    }

    fn strip_object(
        &self,
        object: &mut Map<String, Value>,
        candidates: &[&'s Map<String, Value>],
        depth: usize,
    ) {
        let property = |key: &str| {
            candidates.iter().find_map(|c| {
                let schema = c.get("properties")?.get(key)?;
                let required = c
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|k| k == key));
                Some((schema, required))
            })
        };
        // A `Patch` property's `null` means "clear", not "absent": kept.
        object.retain(|key, value| {
            !value.is_null()
                || property(key).is_none_or(|(schema, required)| {
                    required || schema.get(PATCH_KEYWORD).is_some()
                })
        });
        for (key, value) in object.iter_mut() {
            if let Some((schema, _)) = property(key) {
                self.strip(value, schema, depth + 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{may_drop_nulls, without_optional_nulls};

    #[test]
    fn only_required_plain_scalars_are_known_to_hold_no_optional_null() {
        let plain = json!({
            "type": "object",
            "properties": {"value": {"type": "integer", "minimum": 0}, "name": {"type": "string"}},
            "required": ["value", "name"]
        });
        assert!(!may_drop_nulls(&plain));
        assert!(!may_drop_nulls(
            &json!({"type": "object", "properties": {}})
        ));
        for property in [
            json!({"type": ["integer", "null"]}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"$ref": "#/$defs/Filter"}),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"type": "string", (crate::schema::PATCH_KEYWORD): true}),
        ] {
            let schema = json!({
                "type": "object",
                "properties": {"value": property},
                "required": ["value"]
            });
            assert!(may_drop_nulls(&schema), "{schema}");
        }
        let optional = json!({
            "type": "object",
            "properties": {"value": {"type": "integer"}},
        });
        assert!(may_drop_nulls(&optional));
        assert!(may_drop_nulls(
            &json!({"type": "object", "additionalProperties": {"type": "object"}})
        ));
        assert!(may_drop_nulls(&json!(true)));
    }

    proptest::proptest! {
        /// Where the flag says no optional `null` can be dropped, stripping
        /// leaves any input as it was.
        #[test]
        fn a_schema_said_to_hold_none_strips_nothing(
            required in proptest::collection::vec(proptest::bool::ANY, 1..4),
            values in proptest::collection::vec(proptest::option::of(0i64..5), 1..4),
        ) {
            let mut properties = serde_json::Map::new();
            let mut names = Vec::new();
            for (at, is_required) in required.iter().enumerate() {
                let name = format!("p{at}");
                properties.insert(name.clone(), json!({"type": "integer"}));
                if *is_required {
                    names.push(name);
                }
            }
            let schema = json!({"type": "object", "properties": properties, "required": names});
            let input: serde_json::Map<String, serde_json::Value> = values
                .iter()
                .enumerate()
                .map(|(at, v)| (format!("p{at}"), v.map_or(serde_json::Value::Null, |v| json!(v))))
                .collect();
            let input = serde_json::Value::Object(input);
            if !may_drop_nulls(&schema) {
                proptest::prop_assert_eq!(without_optional_nulls(&input, &schema).into_owned(), input);
            }
        }
    }

    #[test]
    fn drops_the_nulls_of_optional_properties_at_any_depth() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "filter": {"$ref": "#/$defs/Filter"},
                "items": {"type": "array", "items": {"$ref": "#/$defs/Filter"}},
                "maybe": {"anyOf": [{"$ref": "#/$defs/Filter"}, {"type": "null"}]}
            },
            "required": ["name", "filter"],
            "$defs": {"Filter": {
                "type": "object",
                "properties": {"text": {"type": "string"}, "case": {"type": "boolean", "default": false}},
                "required": ["text"]
            }}
        });
        let input = json!({
            "name": null,
            "filter": {"text": "a", "case": null},
            "items": [{"text": "b", "case": null}, null],
            "maybe": {"text": null, "case": null}
        });
        let out = without_optional_nulls(&input, &schema).into_owned();
        assert_eq!(
            out,
            json!({
                "name": null,
                "filter": {"text": "a"},
                "items": [{"text": "b"}, null],
                "maybe": {"text": null}
            })
        );
    }

    #[test]
    fn input_without_null_is_borrowed() {
        let input = json!({"a": [1, {"b": "c"}]});
        assert!(matches!(
            without_optional_nulls(&input, &json!({})),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
