//! The first difference between a recorded request and the one asked,
//! named by its JSON path: what a `409` from playback says.

use serde_json::Value;

/// Where `expected` and `actual` first differ, as a JSON path with both
/// values; `None` when they are equal.
#[must_use]
pub fn first_difference(expected: &Value, actual: &Value, path: &str) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, value) in e {
                let at = format!("{path}.{key}");
                match a.get(key) {
                    Some(other) => {
                        if let Some(difference) = first_difference(value, other, &at) {
                            return Some(difference);
                        }
                    }
                    None => return Some(format!("{at}: expected {}, got nothing", short(value))),
                }
            }
            a.iter()
                .find(|(key, _)| !e.contains_key(*key))
                .map(|(key, value)| format!("{path}.{key}: expected nothing, got {}", short(value)))
        }
        (Value::Array(e), Value::Array(a)) => {
            for (i, (value, other)) in e.iter().zip(a).enumerate() {
                if let Some(difference) = first_difference(value, other, &format!("{path}[{i}]")) {
                    return Some(difference);
                }
            }
            (e.len() != a.len())
                .then(|| format!("{path}: expected {} items, got {}", e.len(), a.len()))
        }
        _ if expected == actual => None,
        _ => Some(format!(
            "{path}: expected {}, got {}",
            short(expected),
            short(actual)
        )),
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    iris_core::text::clip(&text, 119).into_owned()
}
