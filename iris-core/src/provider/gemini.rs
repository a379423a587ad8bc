//! Gemini function declarations in the JSON Schema form
//! (`parametersJsonSchema`): references, open maps and tuples keep their
//! meaning; keywords outside Gemini's subset are dropped, their meaning kept
//! in the description.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::walk::{
    child, collect_local_refs, local_def_name, merge_all_of, rename_key, tuple_items_to_prefix,
};
use super::{Projection, ProjectionNote, ProjectionReport};
use crate::schema::PATCH_KEYWORD;
use crate::spec::ToolSpec;

/// The JSON Schema keywords Gemini reads in `parametersJsonSchema`.
const SUPPORTED: &[&str] = &[
    "$id",
    "$defs",
    "$ref",
    "$anchor",
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "properties",
    "additionalProperties",
    "required",
    "propertyOrdering",
];

/// The function declaration shape `{name, description, parametersJsonSchema}`,
/// which keeps the most of a Rust type's schema.
///
/// `$ref`s stay (one definition however often it is used); a `$ref` with a
/// description beside it, which Gemini refuses, becomes a one-branch
/// `anyOf` so both descriptions are sent. `oneOf` becomes `anyOf`, `const`
/// a one-value `enum`; constraints Gemini does not read (`minLength`,
/// `pattern`, `exclusiveMinimum`, `multipleOf`, `uniqueItems`) move into the
/// description. Gemini unrolls a recursive type to a limited depth, which the
/// report notes. A tool without parameters omits the field.
///
/// For models or gateways that only take the OpenAPI form, use
/// [`gemini_openapi`](super::gemini_openapi).
#[must_use]
pub fn gemini(spec: &ToolSpec) -> Projection {
    let mut report = ProjectionReport::new(spec.name());
    let mut schema = (*spec.parameters()).clone();
    let cyclic = cyclic_defs(&schema);
    to_gemini_schema(&mut schema, "", &cyclic, &mut report.notes);
    Projection {
        tool: declaration(spec, "parametersJsonSchema", schema),
        report,
    }
}

/// `{name, description, <field>: schema}`, the field left out when the tool
/// takes no parameters (Gemini refuses an empty object there): when the
/// schema is an object with no properties and says nothing else of it.
pub(super) fn declaration(spec: &ToolSpec, field: &str, schema: Value) -> Value {
    let says_nothing = |(key, value): (&String, &Value)| match key.as_str() {
        "type" | "description" | "title" | "$id" | "$defs" | "required" | "propertyOrdering" => {
            true
        }
        "properties" => value.as_object().is_some_and(Map::is_empty),
        "additionalProperties" => *value == Value::Bool(false),
        _ => false,
    };
    let has_params = schema
        .as_object()
        .is_some_and(|map| !map.iter().all(says_nothing));
    let mut tool = json!({
        "name": spec.name(),
        "description": spec.description(),
    });
    if has_params && let Value::Object(map) = &mut tool {
        map.insert(field.to_owned(), schema);
    }
    tool
}

fn to_gemini_schema(
    node: &mut Value,
    at: &str,
    cyclic: &[String],
    notes: &mut Vec<ProjectionNote>,
) {
    let Value::Object(map) = node else {
        // `true` (any value): the untyped schema says the same.
        *node = json!({});
        return;
    };
    // Iris's own marker; the model learns what `null` does from the doc.
    map.shift_remove(PATCH_KEYWORD);
    if merge_all_of(map) {
        notes.push(ProjectionNote::MergedAllOf { at: at.to_owned() });
    }
    if let Some(reference) = map.get("$ref").and_then(Value::as_str).map(str::to_owned) {
        if map.contains_key("anyOf") {
            // An `anyOf` beside the `$ref` leaves it no place to move to
            // (a schema schemars never writes): the reference goes, said.
            map.shift_remove("$ref");
            notes.push(ProjectionNote::DroppedKeyword {
                at: at.to_owned(),
                keyword: format!("$ref {reference}"),
            });
        } else if map.len() > 1 {
            // The `$ref` moves into the `anyOf`, where the walk below meets it.
            wrap_ref(map, &reference);
            notes.push(ProjectionNote::RefWrapped {
                at: at.to_owned(),
                reference,
            });
        } else if local_def_name(&reference).is_some_and(|name| cyclic.iter().any(|c| c == name)) {
            notes.push(ProjectionNote::RecursionLimited {
                at: at.to_owned(),
                reference,
            });
        }
    }
    if rename_key(map, "oneOf", "anyOf") {
        notes.push(ProjectionNote::OneOfToAnyOf { at: at.to_owned() });
    }
    if rename_key(map, "const", "enum")
        && let Some(value) = map.get_mut("enum")
    {
        *value = Value::Array(vec![value.take()]);
    }
    tuple_items_to_prefix(map);
    drop_null_from_enum(map);
    unrequire_recursive(map, at, cyclic, notes);
    let dropped: Vec<String> = map
        .keys()
        .filter(|k| !SUPPORTED.contains(&k.as_str()))
        .cloned()
        .collect();
    super::describe::remove_keywords(map, &dropped, at, notes);
    for keyword in ["properties", "$defs"] {
        if let Some(Value::Object(children)) = map.get_mut(keyword) {
            let base = child(at, keyword);
            for (key, value) in children.iter_mut() {
                to_gemini_schema(value, &child(&base, key), cyclic, notes);
            }
        }
    }
    for keyword in ["anyOf", "prefixItems"] {
        if let Some(Value::Array(children)) = map.get_mut(keyword) {
            let base = child(at, keyword);
            for (i, value) in children.iter_mut().enumerate() {
                to_gemini_schema(value, &child(&base, &i.to_string()), cyclic, notes);
            }
        }
    }
    if let Some(items) = map.get_mut("items") {
        to_gemini_schema(items, &child(at, "items"), cyclic, notes);
    }
    if let Some(values @ Value::Object(_)) = map.get_mut("additionalProperties") {
        to_gemini_schema(values, &child(at, "additionalProperties"), cyclic, notes);
    }
}

/// `{"$ref": R, "description": D}` -> `{"anyOf": [{"$ref": R}], "description": D}`:
/// Gemini takes no keyword beside `$ref` except `$`-prefixed ones, and the
/// property's words must not be lost.
fn wrap_ref(map: &mut Map<String, Value>, reference: &str) {
    *map = std::mem::take(map)
        .into_iter()
        .map(|(key, value)| {
            if key == "$ref" {
                ("anyOf".to_owned(), json!([{ "$ref": reference }]))
            } else {
                (key, value)
            }
        })
        .collect();
}

/// Gemini takes a recursive reference only in a property that is not
/// required (it unrolls the recursion and must be able to stop): such a
/// property leaves `required`, and its description says it is required.
fn unrequire_recursive(
    map: &mut Map<String, Value>,
    at: &str,
    cyclic: &[String],
    notes: &mut Vec<ProjectionNote>,
) {
    if cyclic.is_empty() {
        return;
    }
    let (Some(Value::Array(required)), Some(Value::Object(props))) =
        (map.get("required"), map.get("properties"))
    else {
        return;
    };
    let recursive: Vec<String> = required
        .iter()
        .filter_map(Value::as_str)
        .filter(|key| props.get(*key).is_some_and(|p| holds_ref_to(p, cyclic)))
        .map(str::to_owned)
        .collect();
    if recursive.is_empty() {
        return;
    }
    if let Some(Value::Array(required)) = map.get_mut("required") {
        required.retain(|key| {
            !key.as_str()
                .is_some_and(|k| recursive.iter().any(|r| r == k))
        });
    }
    let Some(Value::Object(props)) = map.get_mut("properties") else {
        return;
    };
    for key in recursive {
        if let Some(Value::Object(prop)) = props.get_mut(&key) {
            super::describe::append_to_description(prop, "(required)");
        }
        notes.push(ProjectionNote::DescribedKeyword {
            at: child(&child(at, "properties"), &key),
            keyword: "required".to_owned(),
        });
    }
}

/// Whether `schema` is, or holds without an object in between, a
/// reference to one of `cyclic`.
fn holds_ref_to(schema: &Value, cyclic: &[String]) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    if let Some(name) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(local_def_name)
    {
        return cyclic.iter().any(|c| c == name);
    }
    let in_list = |key: &str| {
        map.get(key)
            .and_then(Value::as_array)
            .is_some_and(|list| list.iter().any(|s| holds_ref_to(s, cyclic)))
    };
    map.get("items")
        .is_some_and(|items| holds_ref_to(items, cyclic))
        || in_list("anyOf")
        || in_list("oneOf")
        || in_list("prefixItems")
}

/// Gemini reads `enum` values of strings and numbers only; `null` (an
/// optional enum) moves to the type, which says the same.
fn drop_null_from_enum(map: &mut Map<String, Value>) {
    let Some(Value::Array(values)) = map.get_mut("enum") else {
        return;
    };
    let before = values.len();
    values.retain(|v| !v.is_null());
    if values.len() == before {
        return;
    }
    match map.get_mut("type") {
        Some(Value::String(ty)) if ty != "null" => {
            let ty = std::mem::take(ty);
            map.insert("type".to_owned(), json!([ty, "null"]));
        }
        Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => {
            types.push(json!("null"));
        }
        _ => {}
    }
}

/// The `$defs` names that reach themselves through references.
fn cyclic_defs(schema: &Value) -> Vec<String> {
    let Some(Value::Object(defs)) = schema.get("$defs") else {
        return Vec::new();
    };
    let edges: HashMap<&str, Vec<String>> = defs
        .iter()
        .map(|(name, def)| {
            let mut refs = Vec::new();
            collect_local_refs(def, &mut refs);
            (name.as_str(), refs)
        })
        .collect();
    let reaches_itself = |from: &str| {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut queue: Vec<&str> = edges[from].iter().map(String::as_str).collect();
        while let Some(next) = queue.pop() {
            if next == from {
                return true;
            }
            if seen.insert(next)
                && let Some(refs) = edges.get(next)
            {
                queue.extend(refs.iter().map(String::as_str));
            }
        }
        false
    };
    defs.keys()
        .filter(|name| reaches_itself(name))
        .cloned()
        .collect()
}
