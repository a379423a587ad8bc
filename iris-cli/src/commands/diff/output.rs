//! What a change to a tool's output schema means to the code that reads
//! its results: the variance of inputs, reversed. A field that was always
//! there and is gone, a field that may now be missing, a type that now
//! admits more, or an enum with a new value break a reader; the opposite
//! changes do not.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{Change, Kind, change, names, types};

/// The changes from `was` to `now`, the output schemas of `tool` (either
/// may be absent).
pub(super) fn compare(
    tool: &str,
    was: Option<&Value>,
    now: Option<&Value>,
    found: &mut Vec<Change>,
) {
    match (was, now) {
        (None, None) => {}
        (None, Some(_)) => found.push(change(
            tool,
            Kind::Compatible,
            "output schema added (results are now described)".to_owned(),
        )),
        (Some(_), None) => found.push(change(
            tool,
            Kind::Breaking,
            "output schema removed (readers of its structured results lose their shape)".to_owned(),
        )),
        (Some(was), Some(now)) => compare_node(tool, "result", was, now, found),
    }
}

fn compare_node(tool: &str, path: &str, was: &Value, now: &Value, found: &mut Vec<Change>) {
    let (types_was, types_now) = (types(was), types(now));
    if types_was != types_now {
        // `integer` is within `number`; no type at all admits anything.
        let admits = |set: &BTreeSet<String>, t: &String| {
            set.is_empty() || set.contains(t) || (t == "integer" && set.contains("number"))
        };
        let widened = types_now.is_empty() && !types_was.is_empty()
            || types_now.iter().any(|t| !admits(&types_was, t));
        found.push(change(
            tool,
            if widened {
                Kind::Breaking
            } else {
                Kind::Compatible
            },
            format!(
                "`{path}`: type {} became {}{}",
                json!(types_was),
                json!(types_now),
                if widened {
                    " (readers may get values they do not expect)"
                } else {
                    ""
                }
            ),
        ));
    }
    let values = |s: &Value| s.get("enum").and_then(Value::as_array).cloned();
    match (values(was), values(now)) {
        (Some(before), Some(after)) => {
            let added: Vec<&Value> = after.iter().filter(|v| !before.contains(v)).collect();
            let removed: Vec<&Value> = before.iter().filter(|v| !after.contains(v)).collect();
            if !added.is_empty() {
                found.push(change(
                    tool,
                    Kind::Breaking,
                    format!(
                        "`{path}`: value(s) {} added (a reader's match may not know them)",
                        json!(added)
                    ),
                ));
            }
            if !removed.is_empty() {
                found.push(change(
                    tool,
                    Kind::Compatible,
                    format!("`{path}`: value(s) {} no longer returned", json!(removed)),
                ));
            }
        }
        (Some(_), None) => found.push(change(
            tool,
            Kind::Breaking,
            format!("`{path}` may now hold any value, not only listed ones"),
        )),
        (None, Some(_)) => found.push(change(
            tool,
            Kind::Compatible,
            format!("`{path}` now holds only listed values"),
        )),
        (None, None) => {}
    }
    compare_fields(tool, path, was, now, found);
    if let (Some(items_was), Some(items_now)) = (was.get("items"), now.get("items")) {
        compare_node(tool, &format!("{path}[]"), items_was, items_now, found);
    }
}

fn compare_fields(tool: &str, path: &str, was: &Value, now: &Value, found: &mut Vec<Change>) {
    let empty = serde_json::Map::new();
    let fields = |s: &Value| {
        s.get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_else(|| empty.clone())
    };
    let (fields_was, fields_now) = (fields(was), fields(now));
    let (req_was, req_now) = (names(was, "required"), names(now, "required"));
    for (key, schema_was) in &fields_was {
        let at = format!("{path}.{key}");
        match fields_now.get(key) {
            None if req_was.contains(key) => found.push(change(
                tool,
                Kind::Breaking,
                format!("`{at}` removed (it was always there)"),
            )),
            None => found.push(change(
                tool,
                Kind::Compatible,
                format!("optional `{at}` removed"),
            )),
            Some(schema_now) => {
                if req_was.contains(key) && !req_now.contains(key) {
                    found.push(change(
                        tool,
                        Kind::Breaking,
                        format!("`{at}` may now be missing"),
                    ));
                } else if req_now.contains(key) && !req_was.contains(key) {
                    found.push(change(
                        tool,
                        Kind::Compatible,
                        format!("`{at}` is now always there"),
                    ));
                }
                compare_node(tool, &at, schema_was, schema_now, found);
            }
        }
    }
    for key in fields_now.keys().filter(|k| !fields_was.contains_key(*k)) {
        found.push(change(
            tool,
            Kind::Compatible,
            format!("`{path}.{key}` added"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::{Kind, changes};

    fn lock(output: Option<Value>) -> Value {
        let mut tool = json!({"name": "orders", "description": "Orders.", "capabilities": [], "input_schema": {"type": "object"}});
        if let Some(output) = output {
            tool["output_schema"] = output;
        }
        json!({"tools": [tool]})
    }

    fn found(was: Option<Value>, now: Option<Value>) -> Vec<(Kind, String)> {
        changes(&lock(was), &lock(now))
            .into_iter()
            .map(|c| (c.kind, c.what))
            .collect()
    }

    #[test]
    fn an_output_change_is_classified_for_its_readers() {
        let order = |status: Value, required: Value| {
            json!({"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "integer"}, "status": status}, "required": required}})
        };
        let was = order(
            json!({"type": "string", "enum": ["open", "paid"]}),
            json!(["id", "status"]),
        );
        // A new status value, and `status` no longer always there: both break readers.
        let now = order(
            json!({"type": "string", "enum": ["open", "paid", "void"]}),
            json!(["id"]),
        );
        let seen = found(Some(was.clone()), Some(now));
        assert!(
            seen.contains(&(
                Kind::Breaking,
                "`result[].status` may now be missing".to_owned()
            )),
            "{seen:?}"
        );
        assert!(
            seen.iter()
                .any(|(k, w)| *k == Kind::Breaking && w.contains("[\"void\"] added")),
            "{seen:?}"
        );
        // A field added, a value no longer returned: readers are fine.
        let now = json!({"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "integer"}, "status": {"type": "string", "enum": ["open"]}, "total": {"type": "number"}},
            "required": ["id", "status"]}});
        let seen = found(Some(was.clone()), Some(now));
        assert!(seen.iter().all(|(k, _)| *k == Kind::Compatible), "{seen:?}");
        assert_eq!(seen.len(), 2, "{seen:?}");
        // Integers became any number: wider, so breaking.
        let seen = found(
            Some(json!({"type": "integer"})),
            Some(json!({"type": "number"})),
        );
        assert_eq!(seen[0].0, Kind::Breaking, "{seen:?}");
        // A schema removed breaks; one added does not.
        assert_eq!(found(Some(was.clone()), None)[0].0, Kind::Breaking);
        assert_eq!(found(None, Some(was))[0].0, Kind::Compatible);
    }
}
