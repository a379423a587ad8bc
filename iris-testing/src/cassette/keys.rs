//! Anything shaped like a provider key in a cassette: never written.

use serde_json::Value;

/// The first string in `value` shaped like a provider's key, with where it
/// is and how it starts.
pub(super) fn find_key(value: &Value, path: &str) -> Option<(String, String)> {
    match value {
        Value::String(text) => {
            key_in(text).map(|key| (path.to_owned(), iris_core::text::clip(key, 6).into_owned()))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_key(v, &format!("{path}[{i}]"))),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, v)| find_key(v, &format!("{path}.{k}"))),
        _ => None,
    }
}

/// The first token of `text` of a shape provider keys take (`sk-…`,
/// `sk-ant-…`, `AIza…`), long enough to be one.
pub(super) fn key_in(text: &str) -> Option<&str> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ':' | '='))
        .find(|word| {
            let long = word.len() >= 24
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
            long && (word.starts_with("sk-") || word.starts_with("AIza"))
        })
}
