//! A constraint a provider cannot take, kept in words: when a projection
//! removes `minLength` or `uniqueItems`, the property's description says
//! "2 to 12 characters" or "every item different", so the model still knows.
//! The runtime enforces the constraint either way.

use serde_json::{Map, Value};

use super::ProjectionNote;

/// Longest default value worth spelling out in a description.
const MAX_DEFAULT_CHARS: usize = 60;

/// Removes `keywords` from `map`, adds the meaning of those that are
/// constraints to its description, and notes each removal.
pub(super) fn remove_keywords(
    map: &mut Map<String, Value>,
    keywords: &[String],
    at: &str,
    notes: &mut Vec<ProjectionNote>,
) {
    let removed: Vec<(String, Value)> = keywords
        .iter()
        .filter_map(|k| map.shift_remove(k).map(|v| (k.clone(), v)))
        .collect();
    let (words, described) = meaning(&removed);
    if !words.is_empty() {
        append_to_description(map, &format!("({})", words.join("; ")));
    }
    for (keyword, _) in removed {
        notes.push(if described.contains(&keyword.as_str()) {
            ProjectionNote::DescribedKeyword {
                at: at.to_owned(),
                keyword,
            }
        } else {
            ProjectionNote::DroppedKeyword {
                at: at.to_owned(),
                keyword,
            }
        });
    }
}

/// Adds `sentence` after the schema's description (or as it, when there
/// is none), where a removed keyword's meaning is kept.
pub(super) fn append_to_description(map: &mut Map<String, Value>, sentence: &str) {
    let description = match map.get("description").and_then(Value::as_str) {
        Some(text) if !text.trim().is_empty() => format!("{} {sentence}", text.trim_end()),
        _ => sentence.to_owned(),
    };
    map.insert("description".to_owned(), Value::String(description));
}

/// The words for the removed constraints, and which keywords they cover.
fn meaning(removed: &[(String, Value)]) -> (Vec<String>, Vec<&'static str>) {
    let get = |key: &str| removed.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let mut words = Vec::new();
    let mut described = Vec::new();
    let mut range = |min: &'static str, max: &'static str, unit: &str| {
        let (lo, hi) = (get(min).map(show), get(max).map(show));
        let phrase = match (lo, hi) {
            (Some(lo), Some(hi)) => format!("{lo} to {hi}{unit}"),
            (Some(lo), None) => format!("at least {lo}{unit}"),
            (None, Some(hi)) => format!("at most {hi}{unit}"),
            (None, None) => return,
        };
        words.push(phrase.trim().to_owned());
        described.extend([min, max]);
    };
    range("minimum", "maximum", "");
    range("minLength", "maxLength", " characters");
    range("minItems", "maxItems", " items");
    range("minProperties", "maxProperties", " keys");
    if let Some(min) = get("exclusiveMinimum") {
        words.push(format!("greater than {}", show(min)));
        described.push("exclusiveMinimum");
    }
    if let Some(max) = get("exclusiveMaximum") {
        words.push(format!("less than {}", show(max)));
        described.push("exclusiveMaximum");
    }
    if let Some(step) = get("multipleOf") {
        words.push(format!("a multiple of {}", show(step)));
        described.push("multipleOf");
    }
    // A default says what leaving the value out means; a long one (a whole
    // object) would cost more than it tells, and an empty one (`null`, `[]`,
    // `""`) restates "optional".
    if let Some(default) = get("default").filter(|d| !is_empty_value(d)).map(show)
        && default.len() <= MAX_DEFAULT_CHARS
    {
        words.push(format!("default: {default}"));
        described.push("default");
    }
    if get("uniqueItems") == Some(&Value::Bool(true)) {
        words.push("every item different".to_owned());
        described.push("uniqueItems");
    }
    if let Some(pattern) = get("pattern").and_then(Value::as_str) {
        words.push(format!("matching `{pattern}`"));
        described.push("pattern");
    }
    if let Some(format) = get("format").and_then(Value::as_str)
        && is_string_format(format)
    {
        words.push(format!("format: {format}"));
        described.push("format");
    }
    (words, described)
}

/// Numeric formats (`uint8`, `double`) restate the type and its range,
/// which stay; string formats carry meaning of their own.
fn is_string_format(format: &str) -> bool {
    !(format.starts_with("int")
        || format.starts_with("uint")
        || matches!(format, "float" | "double" | "number"))
}

/// How deep [`shape_words`] spells out nested schemas before saying "value".
const SHAPE_DEPTH: usize = 3;

/// A short reading of what `schema` admits, for a description where the
/// schema itself cannot go: `a list of {sku: string, qty: integer}`.
pub(super) fn shape_words(schema: &Value) -> String {
    shape(schema, 0)
}

fn shape(schema: &Value, depth: usize) -> String {
    let Value::Object(map) = schema else {
        return "any value".to_owned();
    };
    if depth > SHAPE_DEPTH {
        return "value".to_owned();
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        let values: Vec<String> = values.iter().map(show).collect();
        return format!("one of {}", values.join(", "));
    }
    if let Some(Value::Array(branches)) = map.get("anyOf").or_else(|| map.get("oneOf")) {
        let branches: Vec<String> = branches.iter().map(|b| shape(b, depth + 1)).collect();
        return branches.join(" or ");
    }
    let ty = match map.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or_default(),
        _ => "",
    };
    match ty {
        "array" => match map.get("items") {
            Some(items) => format!("a list of {}", shape(items, depth + 1)),
            None => "a list".to_owned(),
        },
        "object" => match (map.get("properties"), map.get("additionalProperties")) {
            (Some(Value::Object(props)), _) if !props.is_empty() => {
                let fields: Vec<String> = props
                    .iter()
                    .map(|(key, value)| format!("{key}: {}", shape(value, depth + 1)))
                    .collect();
                format!("{{{}}}", fields.join(", "))
            }
            (_, Some(values @ Value::Object(_))) => {
                format!(
                    "an object whose values are each {}",
                    shape(values, depth + 1)
                )
            }
            _ => "an object".to_owned(),
        },
        "" => "any value".to_owned(),
        "integer" => "an integer".to_owned(),
        other => format!("a {other}"),
    }
}

fn is_empty_value(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

fn show(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
