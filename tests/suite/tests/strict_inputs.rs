//! What a strict provider sends parses: every property present, the
//! optional ones `null` at any depth (inside nested objects and arrays).

use crate::error_paths::valid_inputs;
use crate::support;

use iris::Tool;
use iris::provider::openai_chat;
use iris::tool::DynTool;
use proptest::prelude::*;
use serde_json::{Map, Value};
use support::tools::{BookFlight, CreateEvent, DrawShape, LabelDocument, RegisterCustomer};

fn tool(name: &str) -> &'static dyn DynTool {
    match name {
        "create_event" => &CreateEvent,
        "register_customer" => &RegisterCustomer,
        "draw_shape" => &DrawShape,
        "label_document" => &LabelDocument,
        "book_flight" => &BookFlight,
        _ => unreachable!(),
    }
}

/// The schema `node` stands for, its local `$ref` followed.
fn resolve<'s>(node: &'s Value, root: &'s Value) -> &'s Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let name = reference.trim_start_matches("#/$defs/");
            resolve(&root["$defs"][name], root)
        }
        None => node,
    }
}

fn nullable(schema: &Value) -> bool {
    let types_null = match schema.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        Some(t) => t == "null",
        None => false,
    };
    let branch_null = schema
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|b| b.iter().any(|s| s.get("type").is_some_and(|t| t == "null")));
    types_null || branch_null
}

/// The object schema among `schema`'s alternatives whose properties hold
/// every key of `object`.
fn object_schema<'s>(
    schema: &'s Value,
    root: &'s Value,
    object: &Map<String, Value>,
) -> Option<&'s Value> {
    let schema = resolve(schema, root);
    if let Some(props) = schema.get("properties").and_then(Value::as_object)
        && object.keys().all(|k| props.contains_key(k))
    {
        return Some(schema);
    }
    for key in ["anyOf", "oneOf"] {
        for branch in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(found) = object_schema(branch, root, object) {
                return Some(found);
            }
        }
    }
    None
}

/// `value` as a strict provider sends it: absent nullable properties sent
/// as `null`, and present ones turned `null` where `coin` says so.
fn strictify(value: &mut Value, schema: &Value, root: &Value, coin: &mut impl FnMut() -> bool) {
    match value {
        Value::Object(object) => {
            let Some(schema) = object_schema(schema, root, object) else {
                return;
            };
            let props = schema["properties"].as_object().unwrap();
            for (key, prop) in props {
                let prop_schema = resolve(prop, root);
                match object.get_mut(key) {
                    None => {
                        assert!(nullable(prop), "strict left {key} optional: {prop}");
                        object.insert(key.clone(), Value::Null);
                    }
                    Some(child) if nullable(prop) && coin() => *child = Value::Null,
                    Some(child) => strictify(child, prop_schema, root, coin),
                }
            }
        }
        Value::Array(items) => {
            let schema = resolve(schema, root);
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    strictify(item, item_schema, root, coin);
                }
            }
        }
        _ => {}
    }
}

proptest! {
    #[test]
    fn strict_shaped_inputs_parse(which in 0..5usize, coins in prop::collection::vec(any::<bool>(), 64)) {
        let (name, mut input) = valid_inputs().swap_remove(which);
        let spec = tool(name).definition_dyn().spec().with_strict(true);
        let projected = openai_chat(&spec).tool;
        let schema = &projected["function"]["parameters"];
        let mut coins = coins.into_iter().cycle();
        strictify(&mut input, schema, schema, &mut || coins.next().unwrap());
        let parsed = tool(name).parse_dyn(&input);
        prop_assert!(parsed.is_ok(), "{} refused {}: {:?}", name, input, parsed.err());
    }
}

/// The case the outside check reported: a nested defaulted field.
#[test]
fn a_nested_defaulted_field_takes_null() {
    let input = serde_json::json!({
        "title": "Review",
        "when": {"start": "2026-01-01T10:00", "end": "2026-01-01T11:00"},
        "attendees": [{"email": "a@x", "required": null}]
    });
    assert!(CreateEvent.parse(&input).is_ok());
}
