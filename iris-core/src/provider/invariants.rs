//! What every projection must keep, checked by the tests and the fuzzer.

use serde_json::Value;

/// Every object schema in a strict projection is closed and requires all
/// of its properties, and no `oneOf` is left; walks schema positions only
/// (values under `enum` or `const` are data).
pub(crate) fn strict_invariants_hold(node: &Value) -> bool {
    let Value::Object(map) = node else {
        return true;
    };
    let closed = match map.get("properties") {
        Some(Value::Object(props)) => {
            map.get("additionalProperties") == Some(&Value::Bool(false))
                && map
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| props.keys().all(|k| r.iter().any(|x| x == k)))
        }
        _ => true,
    };
    let children_hold = ["properties", "$defs"].iter().all(|k| {
        map.get(*k)
            .and_then(Value::as_object)
            .is_none_or(|m| m.values().all(strict_invariants_hold))
    }) && ["anyOf", "allOf", "prefixItems"].iter().all(|k| {
        map.get(*k)
            .and_then(Value::as_array)
            .is_none_or(|a| a.iter().all(strict_invariants_hold))
    }) && map.get("items").is_none_or(strict_invariants_hold);
    closed && !map.contains_key("oneOf") && children_hold
}

/// Whether any schema position still holds a `$ref`.
pub(crate) fn has_ref(node: &Value) -> bool {
    let Value::Object(map) = node else {
        return false;
    };
    map.contains_key("$ref")
        || map
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|m| m.values().any(has_ref))
        || map
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(has_ref))
        || map.get("items").is_some_and(has_ref)
}
