//! JSON Pointer and `$ref` helpers shared by the schema rewrites.

use serde_json::{Map, Value};

/// Appends `token` to a JSON Pointer, escaping `~` and `/`.
pub(super) fn child(at: &str, token: &str) -> String {
    let escaped = token.replace('~', "~0").replace('/', "~1");
    format!("{at}/{escaped}")
}

/// The `$defs` name a local reference points to (`#/$defs/Name`).
pub(super) fn local_def_name(reference: &str) -> Option<&str> {
    reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))
}

/// The schema a `$ref` node stands for: the target's keywords, overridden
/// by the node's own siblings of `$ref` (such as a field's `description`).
pub(super) fn merge_ref(target: &Map<String, Value>, node: &Map<String, Value>) -> Value {
    let mut merged = target.clone();
    for (key, value) in node {
        if key != "$ref" {
            merged.insert(key.clone(), value.clone());
        }
    }
    Value::Object(merged)
}
