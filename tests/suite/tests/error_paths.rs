//! The faults a failed parse lists are found by walking the tool's schema,
//! not by tracking the parser. Over random corruptions of valid inputs, one
//! of them must name the value that a path-tracking parse
//! (`iris::schema::parse_arguments`) names, or one inside it: the tracking
//! parse cannot see into an internally tagged enum, which it reads whole,
//! and stops at the enum. Every fault's path points inside the input.

use crate::support;

use iris::__fuzz::points_inside;
use iris::Tool;
use proptest::prelude::*;
use serde_json::{Value, json};
use support::tools::{BookFlight, CreateEvent, DrawShape, LabelDocument, RegisterCustomer};

/// A valid input per tool.
pub(crate) fn valid_inputs() -> Vec<(&'static str, Value)> {
    vec![
        (
            "create_event",
            json!({
                "title": "Review",
                "when": {"start": "2026-01-01T10:00", "end": "2026-01-01T11:00"},
                "attendees": [{"email": "a@x", "required": true}, {"email": "b@x"}]
            }),
        ),
        (
            "register_customer",
            json!({"name": "Ada", "address": {"street": "1 Way", "city": "Paris"}, "age": 36}),
        ),
        (
            "draw_shape",
            json!({"shape": {"kind": "rectangle", "width": 2.0, "height": 3.0}}),
        ),
        (
            "label_document",
            json!({"id": "d1", "labels": ["a", "b"], "metadata": {"k": "v"}}),
        ),
        (
            "book_flight",
            json!({"from": "LIS", "to": "OSL", "date": "2026-03-01", "passengers": 2}),
        ),
    ]
}

/// Every path to a value inside `value`, as keys and indexes.
fn leaf_paths(value: &Value, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(prefix.clone());
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                prefix.push(json!(key));
                leaf_paths(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                prefix.push(json!(index));
                leaf_paths(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn replace(value: &mut Value, path: &[Value], with: Value) {
    let mut node = value;
    for step in path {
        node = match step {
            Value::String(key) => node.get_mut(key.as_str()).unwrap(),
            Value::Number(index) => node
                .get_mut(usize::try_from(index.as_u64().unwrap()).unwrap())
                .unwrap(),
            _ => unreachable!(),
        };
    }
    *node = with;
}

fn wrong_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(true)),
        Just(json!(-7)),
        Just(json!(70_000)),
        Just(json!(2.5)),
        Just(json!("text")),
        Just(json!([1, "x"])),
        Just(json!({"unexpected": 1})),
    ]
}

/// The paths a tool's own parse names, and the path a tracking parse names.
fn both_paths(tool: &str, input: &Value) -> Option<(Vec<String>, String)> {
    fn pair<T: Tool>(tool: &T, input: &Value) -> Option<(Vec<String>, String)>
    where
        T::Args: serde::de::DeserializeOwned,
    {
        let walked = tool.parse(input).err()?;
        let tracked = iris::schema::parse_arguments::<T::Args>(input).err()?;
        let walked = walked
            .faults()
            .iter()
            .map(|f| f.path().to_owned())
            .collect();
        Some((walked, tracked.path().to_owned()))
    }
    match tool {
        "create_event" => pair(&CreateEvent, input),
        "register_customer" => pair(&RegisterCustomer, input),
        "draw_shape" => pair(&DrawShape, input),
        "label_document" => pair(&LabelDocument, input),
        "book_flight" => pair(&BookFlight, input),
        _ => unreachable!(),
    }
}

proptest! {
    #[test]
    fn the_schema_walk_names_the_value_the_parser_refused(
        which in 0..5usize,
        pick in any::<prop::sample::Index>(),
        with in wrong_value(),
    ) {
        let (tool, valid) = valid_inputs().swap_remove(which);
        let mut paths = Vec::new();
        leaf_paths(&valid, &mut Vec::new(), &mut paths);
        let path = pick.get(&paths[1..]).clone();
        let mut input = valid;
        replace(&mut input, &path, with);
        if let Some((walked, tracked)) = both_paths(tool, &input) {
            let inside = walked.iter().any(|walked| {
                walked == &tracked
                    || walked.starts_with(&format!("{tracked}."))
                    || walked.starts_with(&format!("{tracked}["))
            });
            prop_assert!(inside, "{} with {}: walked {:?}, tracked {}", tool, input, walked, tracked);
            for path in &walked {
                prop_assert!(points_inside(&input, path), "{} with {}: {} is not in the input", tool, input, path);
            }
        }
    }
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z \\-@.:0-9T]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    Just("title".to_owned()),
                    Just("when".to_owned()),
                    Just("attendees".to_owned()),
                    Just("email".to_owned()),
                    Just("shape".to_owned()),
                    Just("kind".to_owned()),
                    Just("sides".to_owned()),
                    Just("player".to_owned()),
                    Just("history".to_owned()),
                    "[a-z]{1,6}",
                ],
                inner,
                0..6,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Whatever a model sends, parsing answers (a value or an error with a
    /// path), never panics.
    #[test]
    fn arbitrary_input_never_panics(input in any_json()) {
        for tool in [
            &CreateEvent as &dyn iris::tool::DynTool,
            &RegisterCustomer,
            &DrawShape,
            &LabelDocument,
            &BookFlight,
            &support::tools::RollDice,
            &support::tools::MoveCursor,
        ] {
            if let Err(err) = tool.parse_dyn(&input) {
                for fault in err.faults() {
                    prop_assert!(points_inside(&input, fault.path()), "{}: {} is not in {}", err, fault.path(), input);
                }
            }
        }
    }
}
