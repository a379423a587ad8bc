//! Gemini function declarations in the OpenAPI form (`parameters`): an
//! OpenAPI 3 subset without `$ref`, for models and gateways that do not take
//! the JSON Schema form.

use serde_json::{Map, Value, json};

use super::inline::inline_refs;
use super::walk::{child, merge_all_of, merge_descriptions, rename_key, tuple_items_to_prefix};
use super::{Projection, ProjectionNote, ProjectionReport};
use crate::schema::PATCH_KEYWORD;
use crate::spec::ToolSpec;

/// The schema fields Gemini's `Schema` object accepts.
const SUPPORTED: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// Formats Gemini accepts, by type.
const FORMATS: &[(&str, &[&str])] = &[
    ("integer", &["int32", "int64"]),
    ("number", &["float", "double"]),
    ("string", &["enum", "date-time"]),
];

/// The function declaration shape `{name, description, parameters}`, the
/// fallback to [`gemini`](super::gemini) where `parametersJsonSchema` is
/// not accepted.
///
/// References are inlined (recursion cut and reported), `[T, "null"]`
/// becomes `nullable`, `oneOf` becomes `anyOf`, `const` becomes a one-value
/// `enum`, and unsupported keywords are dropped and reported. A tool without
/// parameters omits `parameters`, which Gemini requires to be non-empty.
#[must_use]
pub fn gemini_openapi(spec: &ToolSpec) -> Projection {
    let mut report = ProjectionReport::new(spec.name());
    let (mut schema, notes) = inline_refs(spec.parameters());
    report.notes = notes;
    to_openapi(&mut schema, "", &mut report.notes);
    Projection {
        tool: super::gemini::declaration(spec, "parameters", schema),
        report,
    }
}

fn to_openapi(node: &mut Value, at: &str, notes: &mut Vec<ProjectionNote>) {
    let Value::Object(map) = node else {
        // `true` (any value) has no OpenAPI spelling; an untyped schema is closest.
        *node = json!({});
        return;
    };
    // Iris's own marker; the model learns what `null` does from the doc.
    map.shift_remove(PATCH_KEYWORD);
    if merge_all_of(map) {
        notes.push(ProjectionNote::MergedAllOf { at: at.to_owned() });
    }
    if rename_key(map, "oneOf", "anyOf") {
        notes.push(ProjectionNote::OneOfToAnyOf { at: at.to_owned() });
    }
    if rename_key(map, "const", "enum")
        && let Some(value) = map.get_mut("enum")
    {
        *value = Value::Array(vec![value.take()]);
    }
    if let Some(moved) = fold_null_any_of(map) {
        repoint(notes, &child(at, "anyOf"), at, &moved);
    }
    fold_null_type(map);
    tuple_items_to_prefix(map);
    tuple_to_items(map, at, notes);
    describe_open_map(map, at, notes);
    let dropped: Vec<String> = map
        .keys()
        .filter(|k| !SUPPORTED.contains(&k.as_str()))
        .cloned()
        .collect();
    super::describe::remove_keywords(map, &dropped, at, notes);
    drop_foreign_format(map, at, notes);
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        let base = child(at, "properties");
        for (key, value) in props.iter_mut() {
            to_openapi(value, &child(&base, key), notes);
        }
    }
    if let Some(items) = map.get_mut("items") {
        to_openapi(items, &child(at, "items"), notes);
    }
    if let Some(Value::Array(any_of)) = map.get_mut("anyOf") {
        let base = child(at, "anyOf");
        for (i, value) in any_of.iter_mut().enumerate() {
            to_openapi(value, &child(&base, &i.to_string()), notes);
        }
    }
}

/// `type: [T, "null"]` -> `type: T, nullable: true`; several non-null types
/// become an `anyOf` of single types.
fn fold_null_type(map: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = map.get("type") else {
        return;
    };
    let nullable = types.iter().any(|t| t == "null");
    let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
    match rest.as_slice() {
        [] => {
            map.insert("type".to_owned(), json!("null"));
        }
        [single] => {
            map.insert("type".to_owned(), single.clone());
        }
        _ => {
            map.shift_remove("type");
            let any_of = rest.into_iter().map(|t| json!({ "type": t })).collect();
            map.insert("anyOf".to_owned(), Value::Array(any_of));
        }
    }
    if nullable {
        map.insert("nullable".to_owned(), Value::Bool(true));
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
}

/// An open map (`additionalProperties` with a schema) has no OpenAPI
/// form: what each value holds goes into the description.
fn describe_open_map(map: &mut Map<String, Value>, at: &str, notes: &mut Vec<ProjectionNote>) {
    if !matches!(map.get("additionalProperties"), Some(Value::Object(_))) {
        return;
    }
    let Some(values) = map.shift_remove("additionalProperties") else {
        return;
    };
    let words = super::describe::shape_words(&values);
    super::describe::append_to_description(
        map,
        &format!("(an object whose values are each {words})"),
    );
    notes.push(ProjectionNote::DescribedKeyword {
        at: at.to_owned(),
        keyword: "additionalProperties".to_owned(),
    });
}

/// A tuple (`prefixItems`) has no OpenAPI form, and Gemini refuses an
/// array without `items`: the items become one schema admitting every
/// position's, and what each position holds goes into the description.
fn tuple_to_items(map: &mut Map<String, Value>, at: &str, notes: &mut Vec<ProjectionNote>) {
    let positions = match map.shift_remove("prefixItems") {
        Some(Value::Array(positions)) => positions,
        None => return,
        Some(_) => {
            // Not a tuple: nothing to keep.
            notes.push(ProjectionNote::DroppedKeyword {
                at: at.to_owned(),
                keyword: "prefixItems".to_owned(),
            });
            return;
        }
    };
    if !matches!(map.get("items"), Some(Value::Object(_))) {
        let mut distinct: Vec<Value> = Vec::new();
        for position in &positions {
            if !distinct.contains(position) {
                distinct.push(position.clone());
            }
        }
        let items = match distinct.len() {
            1 => distinct.swap_remove(0),
            _ => json!({ "anyOf": distinct }),
        };
        map.insert("items".to_owned(), items);
    }
    let kinds: Vec<String> = positions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let kind = p.get("type").and_then(Value::as_str).unwrap_or("value");
            format!("{}: {kind}", i + 1)
        })
        .collect();
    super::describe::append_to_description(map, &format!("(in this order: {})", kinds.join(", ")));
    notes.push(ProjectionNote::DescribedKeyword {
        at: at.to_owned(),
        keyword: "prefixItems".to_owned(),
    });
}

/// `anyOf: [X, {"type": "null"}]` -> `X` with `nullable: true`.
/// Returns where each kept branch went: `Some(i)` for its new index in
/// `anyOf`, `None` when it was folded into the node itself.
fn fold_null_any_of(map: &mut Map<String, Value>) -> Option<Vec<(usize, Option<usize>)>> {
    let Some(Value::Array(any_of)) = map.get("anyOf") else {
        return None;
    };
    let is_null = |s: &Value| s.get("type").is_some_and(|t| t == "null");
    if !any_of.iter().any(is_null) {
        return None;
    }
    let kept: Vec<usize> = (0..any_of.len())
        .filter(|&i| !is_null(&any_of[i]))
        .collect();
    let mut rest: Vec<Value> = kept.iter().map(|&i| any_of[i].clone()).collect();
    map.insert("nullable".to_owned(), Value::Bool(true));
    let folded = rest.len() == 1;
    let moved = kept
        .iter()
        .enumerate()
        .map(|(new, &old)| (old, (!folded).then_some(new)))
        .collect();
    if rest.len() == 1
        && let Some(Value::Object(inner)) = rest.pop()
    {
        map.shift_remove("anyOf");
        for (key, value) in inner {
            match (map.get_mut(&key), &value) {
                // The property's words first, then its type's.
                (Some(Value::String(own)), Value::String(of_type)) if key == "description" => {
                    *own = merge_descriptions(own, of_type);
                }
                (Some(_), _) => {}
                (None, _) => {
                    map.insert(key, value);
                }
            }
        }
    } else {
        map.insert("anyOf".to_owned(), Value::Array(rest));
    }
    Some(moved)
}

/// Notes made inside branches of `branches` (a pointer to an `anyOf`)
/// follow them to where folding moved them: a new index, or `node` itself.
fn repoint(
    notes: &mut [ProjectionNote],
    branches: &str,
    node: &str,
    moved: &[(usize, Option<usize>)],
) {
    for note in notes {
        for (old, new) in moved {
            let from = child(branches, &old.to_string());
            let Some(rest) = note.at().strip_prefix(&from) else {
                continue;
            };
            if !(rest.is_empty() || rest.starts_with('/')) {
                continue;
            }
            let to = match new {
                Some(new) => child(branches, &new.to_string()),
                None => node.to_owned(),
            };
            note.set_at(format!("{to}{rest}"));
            break;
        }
    }
}

fn drop_foreign_format(map: &mut Map<String, Value>, at: &str, notes: &mut Vec<ProjectionNote>) {
    let Some(format) = map.get("format").and_then(Value::as_str) else {
        return;
    };
    let ty = map.get("type").and_then(Value::as_str).unwrap_or_default();
    let allowed = FORMATS
        .iter()
        .find(|(t, _)| *t == ty)
        .is_some_and(|(_, formats)| formats.contains(&format));
    if !allowed {
        super::describe::remove_keywords(map, &["format".to_owned()], at, notes);
    }
}
