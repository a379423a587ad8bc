//! Tool arguments, parsed as a `#[tool]` expansion parses them.
//!
//! Properties: whatever parses re-serializes to a value the tool's own
//! schema accepts (no fault found in it); whatever is refused is refused
//! with at least one fault, each at a path inside the input.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::definition::ToolDefinition;
use crate::name::ToolName;
use crate::private::{ToolParam, parse_args};
use crate::schema::input_schema_for;

/// A booking: nested objects, a range, a pattern, an enum, options, a map.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Booking {
    guest: Guest,
    #[schemars(range(min = 1, max = 30))]
    nights: u8,
    #[serde(default)]
    rooms: Vec<Room>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    tags: BTreeMap<String, i64>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Guest {
    #[schemars(length(min = 1, max = 40))]
    name: String,
    #[schemars(regex(pattern = r"^[^@\s]+@[^@\s]+$"))]
    email: String,
    #[serde(default)]
    age: Option<u16>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Room {
    Single {
        floor: i32,
    },
    Suite {
        floor: i32,
        #[schemars(range(min = 2, max = 8))]
        beds: u8,
    },
}

/// A shape: externally tagged and unit variants, floats, a tuple.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Drawing {
    shape: Shape,
    #[schemars(range(min = 0.0, max = 1.0))]
    opacity: f64,
    at: (i64, i64),
    #[serde(default)]
    layer: Layer,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
enum Shape {
    Circle { r: f64 },
    Square(f64),
    Dot,
}

#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Layer {
    #[default]
    Back,
    Front,
}

/// Parses `data` (JSON) as the arguments of each tool and checks the
/// properties.
///
/// # Panics
/// When a property does not hold: that is a finding.
pub fn tool_arguments(data: &[u8]) {
    let Some(input) = super::json(data) else {
        return;
    };
    check::<Booking>("book", &input);
    check::<Drawing>("draw", &input);
}

fn check<A: ToolParam + Serialize + std::fmt::Debug>(name: &'static str, input: &Value) {
    let schema = input_schema_for::<A>();
    let Ok(tool) = ToolName::new(name) else {
        return;
    };
    let Ok(definition) = ToolDefinition::builder(tool, "A tool under test.")
        .input_schema(schema.clone())
        .build()
    else {
        panic!("the schema of `{name}` is not one a definition takes");
    };
    match parse_args::<A>(input, &definition) {
        Ok(args) => {
            // A float that is not finite cannot be written as JSON, and
            // JSON never reads one: nothing to check.
            let Ok(again) = serde_json::to_value(&args) else {
                return;
            };
            if let Some(faults) = crate::schema::locate::departures(&again, &schema) {
                panic!(
                    "`{name}` took {input}, parsed {args:?}, which its own schema refuses: {faults}"
                );
            }
        }
        Err(error) => {
            assert!(
                !error.faults().is_empty(),
                "`{name}` refused {input} with no fault"
            );
            for fault in error.faults() {
                assert!(
                    super::points_inside(input, fault.path()),
                    "`{name}` refused {input} with a fault at `{}`, outside it: {error}",
                    fault.path()
                );
            }
        }
    }
}
