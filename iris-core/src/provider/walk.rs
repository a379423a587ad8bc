//! JSON Pointer and `$ref` helpers shared by the schema rewrites.

use serde_json::{Map, Value};

/// Appends `token` to a JSON Pointer, escaping `~` and `/`.
pub(crate) fn child(at: &str, token: &str) -> String {
    let escaped = token.replace('~', "~0").replace('/', "~1");
    format!("{at}/{escaped}")
}

/// Renames `from` to `to` where it stands, keeping the author's key order
/// (an insert would move it to the end); `false` when `from` is absent.
pub(super) fn rename_key(map: &mut Map<String, Value>, from: &str, to: &str) -> bool {
    if !map.contains_key(from) {
        return false;
    }
    *map = std::mem::take(map)
        .into_iter()
        .map(|(key, value)| {
            if key == from {
                (to.to_owned(), value)
            } else {
                (key, value)
            }
        })
        .collect();
    true
}

/// The `$defs` name a local reference points to (`#/$defs/Name`).
pub(super) fn local_def_name(reference: &str) -> Option<&str> {
    reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))
}

/// The schema a `$ref` node stands for: the target's keywords, overridden
/// by the node's own siblings of `$ref`, except that a field's
/// `description` is joined with the type's rather than replacing it.
pub(super) fn merge_ref(target: &Map<String, Value>, node: &Map<String, Value>) -> Value {
    let mut merged = target.clone();
    for (key, value) in node {
        if key == "$ref" {
            continue;
        }
        if key == "description"
            && let (Some(own), Some(Value::String(of_type))) = (value.as_str(), target.get(key))
        {
            // Both say something the author wrote: the property's words
            // first, then the type's (a unit enum's variant list among them).
            merged.insert(key.clone(), Value::String(merge_descriptions(own, of_type)));
            continue;
        }
        merged.insert(key.clone(), value.clone());
    }
    Value::Object(merged)
}

/// A property's description followed by its type's, as two paragraphs;
/// one when they say the same.
pub(super) fn merge_descriptions(own: &str, of_type: &str) -> String {
    let (own, of_type) = (own.trim(), of_type.trim());
    if own.is_empty() || own == of_type {
        return of_type.to_owned();
    }
    if of_type.is_empty() {
        return own.to_owned();
    }
    format!("{own}\n\n{of_type}")
}

/// Pushes the `$defs` name of every local `$ref` under `node` onto `out`.
pub(super) fn collect_local_refs(node: &Value, out: &mut Vec<String>) {
    match node {
        Value::Object(map) => {
            if let Some(name) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(local_def_name)
            {
                out.push(name.to_owned());
            }
            map.values().for_each(|v| collect_local_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_local_refs(v, out)),
        _ => {}
    }
}

/// Folds the branches of `allOf` into the node itself (properties joined,
/// `required` united), for targets without `allOf`; `false`, leaving it
/// as it was, when two branches set one keyword to different values.
pub(super) fn merge_all_of(map: &mut Map<String, Value>) -> bool {
    let Some(Value::Array(branches)) = map.get("allOf") else {
        return false;
    };
    let mut merged = map.clone();
    merged.shift_remove("allOf");
    for branch in branches {
        let Value::Object(branch) = branch else {
            return false;
        };
        for (key, value) in branch {
            match (key.as_str(), merged.get_mut(key), value) {
                (_, None, _) => {
                    merged.insert(key.clone(), value.clone());
                }
                ("properties", Some(Value::Object(ours)), Value::Object(theirs)) => {
                    for (name, schema) in theirs {
                        match ours.get(name) {
                            None => {
                                ours.insert(name.clone(), schema.clone());
                            }
                            Some(existing) if existing == schema => {}
                            Some(_) => return false,
                        }
                    }
                }
                ("required", Some(Value::Array(ours)), Value::Array(theirs)) => {
                    for name in theirs {
                        if !ours.contains(name) {
                            ours.push(name.clone());
                        }
                    }
                }
                ("description", Some(Value::String(ours)), Value::String(theirs)) => {
                    *ours = merge_descriptions(ours, theirs);
                }
                (_, Some(existing), _) if existing == value => {}
                _ => return false,
            }
        }
    }
    *map = merged;
    true
}

/// The tuple form of earlier drafts, `items: [..]`, as `prefixItems`, its
/// form since 2020-12, so that a walk that reads `items` as one schema does
/// not lose the positions.
pub(super) fn tuple_items_to_prefix(map: &mut Map<String, Value>) {
    if map.get("items").is_some_and(Value::is_array) && !map.contains_key("prefixItems") {
        rename_key(map, "items", "prefixItems");
    }
}
