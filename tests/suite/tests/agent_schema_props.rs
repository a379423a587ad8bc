//! Agent files generated from `agent.schema.json`: every file the schema
//! accepts loads, except where it names something the schema cannot know
//! (a tool, factory or middleware not linked in, a file, an environment
//! variable). Generated rather than fuzzed: a fuzzer seldom writes a file
//! the schema accepts.

use std::path::Path;

use iris::assembly::Assembly;
use iris::serde_json::{Map, Value, json};
use proptest::prelude::*;

/// A small deterministic generator (SplitMix64): proptest picks the seeds.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Words a generated string is drawn from: names the assembly below links
/// in, a name it does not, and text of other shapes.
const WORDS: &[&str] = &[
    "read_ledger",
    "write_ledger",
    "refusal",
    "no_such_name",
    "agent",
    "",
    "a b",
    "IRIS_TEST_API_KEY",
    "http://127.0.0.1:9/mcp",
    "5s",
];

/// An instance of `schema`, whose `$ref`s point into `root`.
fn instance(schema: &Value, root: &Value, draw: &mut Draw, depth: usize) -> Value {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.trim_start_matches("#/$defs/");
        return instance(&root["$defs"][name], root, draw, depth);
    }
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return draw.pick(values).clone();
    }
    // Branches beside properties constrain the object (drawn whole below);
    // alone, they are the choices.
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema
            .get(key)
            .and_then(Value::as_array)
            .filter(|_| schema.get("properties").is_none())
        {
            return instance(draw.pick(branches), root, draw, depth);
        }
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => {
            // Mostly the non-null type, so that sections get filled.
            let kinds: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
            let filled: Vec<&str> = kinds.iter().copied().filter(|k| *k != "null").collect();
            if filled.is_empty() || draw.chance(20) {
                (*draw.pick(&kinds)).to_owned()
            } else {
                (*draw.pick(&filled)).to_owned()
            }
        }
        // No type: any value, such as a factory's options.
        _ => {
            return draw
                .pick(&[json!(null), json!({"limit": 3}), json!("text")])
                .clone();
        }
    };
    match kind.as_str() {
        "object" => object(schema, root, draw, depth),
        "array" if depth < 4 => {
            let items = schema.get("items").cloned().unwrap_or(json!({}));
            let count = draw.below(3);
            Value::Array(
                (0..count)
                    .map(|_| instance(&items, root, draw, depth + 1))
                    .collect(),
            )
        }
        "array" => json!([]),
        "string" => {
            if let Some(pattern) = schema
                .get("pattern")
                .and_then(Value::as_str)
                .filter(|p| !p.starts_with("^https?"))
            {
                // The patterns are a duration's, one per unit: numbers at
                // and around each unit's bound.
                let unit: String = pattern
                    .trim_end_matches('$')
                    .chars()
                    .rev()
                    .take_while(char::is_ascii_lowercase)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                let number = draw.pick(&[
                    "0", "0.5", "1", "5", "23", "24", "24.0", "24.5", "25", "1439", "1440", "1441",
                    "86399", "86400", "86400.5", "86401", "86400000", "86400001",
                ]);
                json!(format!("{number}{unit}"))
            } else {
                json!(draw.pick(WORDS))
            }
        }
        "integer" => json!(draw.below(120)),
        "number" => json!(*draw.pick(&[0.25, 1.0, 2.5, 30.0, 86_400.0, 86_400.5, 90_000.0])),
        "boolean" => json!(draw.chance(50)),
        _ => Value::Null,
    }
}

fn object(schema: &Value, root: &Value, draw: &mut Draw, depth: usize) -> Value {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if required.contains(&name.as_str()) || (depth < 4 && draw.chance(45)) {
                out.insert(name.clone(), instance(property, root, draw, depth + 1));
            }
        }
    }
    if let Some(extra) = schema
        .get("additionalProperties")
        .filter(|extra| extra.is_object())
    {
        for _ in 0..draw.below(3) {
            let key = (*draw.pick(&["NAME", "OTHER", "PATH_ONE"])).to_owned();
            out.insert(key, instance(extra, root, draw, depth + 1));
        }
    }
    Value::Object(out)
}

/// Whether an issue is about something outside the file that the schema
/// cannot know: a name not linked in, a file, a folder, a variable, a
/// server.
fn names_something_outside(message: &str) -> bool {
    const OUTSIDE: &[&str] = &[
        "function is named",
        "no tool named",
        "factory is named",
        "unknown built-in tool",
        "environment variable",
        "is not set",
        "_API_KEY",
        "could not be read",
        "cannot read",
        // Servers named in a file are started by the async loader.
        "MCP servers are started",
        "does not exist",
        "no such file",
        // Two tools of one name (command tools named alike, or like a
        // built-in): a rule across entries no JSON Schema states.
        "is already taken by tool",
        // A child agent named as a tool or as another child: the same.
        "the agent has a tool named",
        "names another child agent",
        // Skills live in folders beside the file.
        "was found under the roots",
    ];
    OUTSIDE.iter().any(|needle| message.contains(needle))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn every_file_the_schema_accepts_loads_names_aside(seed in any::<u64>()) {
        let root = iris::assembly::agent_schema();
        let validator = jsonschema::validator_for(&root).expect("the schema compiles");
        let mut draw = Draw(seed);
        // Rules across keys are not followed by the generator: draw again
        // until a file passes the schema.
        let file = (0..200)
            .map(|_| instance(&root, &root, &mut draw, 0))
            .find(|file| validator.is_valid(file));
        prop_assume!(file.is_some());
        let file = file.unwrap();
        // JSON is YAML.
        let text = iris::serde_json::to_string_pretty(&file).unwrap();
        let loaded = Assembly::builder()
            .build()
            .parse(&text, Path::new("/nonexistent-iris-props/agent.yaml"));
        if let Err(error) = loaded {
            for issue in &error.issues {
                prop_assert!(
                    names_something_outside(&issue.message),
                    "the schema accepts this file, but the loader refuses it: {issue}\n{text}"
                );
            }
        }
    }
}
