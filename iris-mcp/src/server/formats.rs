//! JSON Schema `format`s in the schemas Iris lists over MCP, kept to those
//! JSON Schema defines: MCP clients validate arguments with a JSON Schema
//! validator, which warns on every call about a format it does not know
//! (schemars writes `uint32`, `int64`, `double` and the like for Rust's
//! number types). A width format becomes the bounds it stands for, which
//! every validator checks; any other unknown format moves into the
//! description, so the model still reads it.

use serde_json::{Map, Value, json};

/// The formats JSON Schema (2020-12) defines.
const DEFINED: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keywords whose values are data, not schemas: never rewritten.
const DATA: &[&str] = &["enum", "const", "default", "examples"];

/// `schema` with every format JSON Schema does not define replaced.
pub(super) fn standard(schema: &mut Map<String, Value>) {
    if let Some(Value::String(format)) = schema.get("format")
        && !DEFINED.contains(&format.as_str())
    {
        let format = format.clone();
        schema.remove("format");
        if !bounds_of(&format, schema) {
            let note = format!("(format: {format})");
            let description = match schema.get("description").and_then(Value::as_str) {
                Some(text) if !text.is_empty() => format!("{text} {note}"),
                _ => note,
            };
            schema.insert("description".to_owned(), Value::String(description));
        }
    }
    for (key, value) in schema.iter_mut() {
        if DATA.contains(&key.as_str()) {
            continue;
        }
        walk(value);
    }
}

fn walk(value: &mut Value) {
    match value {
        Value::Object(map) => standard(map),
        Value::Array(items) => items.iter_mut().for_each(walk),
        _ => {}
    }
}

/// Puts the bounds a width format stands for on `schema` (keeping tighter
/// ones it has); whether `format` was one.
fn bounds_of(format: &str, schema: &mut Map<String, Value>) -> bool {
    let (low, high): (i128, i128) = match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" => (i64::MIN.into(), i64::MAX.into()),
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" | "uint" => (0, u64::MAX.into()),
        // Floating point: any JSON number fits.
        "float" | "double" => return true,
        _ => return false,
    };
    schema.entry("minimum").or_insert_with(|| json!(low));
    // Past 2^53 a JSON number is no exact integer: no upper bound is
    // better than a wrong one.
    if high <= 1_i128 << 53 {
        schema.entry("maximum").or_insert_with(|| json!(high));
    }
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    fn standard(mut schema: serde_json::Value) -> serde_json::Value {
        if let serde_json::Value::Object(map) = &mut schema {
            super::standard(map);
        }
        schema
    }

    #[test]
    fn width_formats_become_bounds_and_others_a_note() {
        let schema = json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "format": "uint32", "minimum": 0},
                "offset": {"type": "integer", "format": "int64"},
                "ratio": {"type": "number", "format": "double"},
                "when": {"type": "string", "format": "date-time"},
                "colour": {"type": "string", "format": "hex-colour", "description": "The colour."},
                "format": {"type": "string", "enum": [{"format": "uint32"}]},
            },
            "$defs": {"Small": {"type": "integer", "format": "uint8"}},
        });
        assert_eq!(
            standard(schema),
            json!({
                "type": "object",
                "properties": {
                    "count": {"type": "integer", "minimum": 0, "maximum": 4_294_967_295_u64},
                    "offset": {"type": "integer", "minimum": i64::MIN},
                    "ratio": {"type": "number"},
                    "when": {"type": "string", "format": "date-time"},
                    "colour": {"type": "string", "description": "The colour. (format: hex-colour)"},
                    "format": {"type": "string", "enum": [{"format": "uint32"}]},
                },
                "$defs": {"Small": {"type": "integer", "minimum": 0, "maximum": 255}},
            })
        );
    }
}
