use proptest::prelude::*;
use serde_json::{Value, json};

use super::invariants::{has_ref, strict_invariants_hold};
use super::*;
use crate::name::ToolName;

fn spec(parameters: Value, strict: bool) -> ToolSpec {
    ToolSpec::new(ToolName::new("t").unwrap(), "d", parameters).with_strict(strict)
}

fn not_strict_reason(projection: &Projection) -> Option<&str> {
    projection.report.notes.iter().find_map(|n| match n {
        ProjectionNote::NotStrict { reason, .. } => Some(reason.as_str()),
        _ => None,
    })
}

#[test]
fn strict_requires_every_property_and_nulls_the_optional_ones() {
    let p = openai_chat(&spec(
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "string", "enum": ["x", "y"]},
                "c": {"$ref": "#/$defs/C"},
                "d": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
            },
            "required": ["a"],
            "$defs": {"C": {"type": "object", "properties": {}}}
        }),
        true,
    ));
    assert!(p.report.strict);
    let params = &p.tool["function"]["parameters"];
    assert_eq!(params["required"], json!(["a", "b", "c", "d"]));
    assert_eq!(params["additionalProperties"], false);
    assert_eq!(params["properties"]["a"]["type"], "string");
    assert_eq!(params["properties"]["b"]["type"], json!(["string", "null"]));
    assert_eq!(params["properties"]["b"]["enum"], json!(["x", "y", null]));
    assert_eq!(
        params["properties"]["c"],
        json!({"anyOf": [{"$ref": "#/$defs/C"}, {"type": "null"}]})
    );
    assert_eq!(
        params["properties"]["d"]["anyOf"][2],
        json!({"type": "null"})
    );
    assert_eq!(params["$defs"]["C"]["additionalProperties"], false);
}

#[test]
fn open_maps_and_untyped_values_stay_non_strict_with_a_reason() {
    for (schema, reason) in [
        (
            json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}}}),
            "open map",
        ),
        (
            json!({"type": "object", "properties": {"v": {}}}),
            "without `type`",
        ),
        (
            json!({"type": "object", "properties": {"v": true}}),
            "boolean schema",
        ),
        (json!({"type": "object"}), "without `properties`"),
        (
            json!({"type": "object", "properties": {}, "patternProperties": {"^x": {"type": "string"}}}),
            "patternProperties",
        ),
    ] {
        let p = openai_responses(&spec(schema.clone(), true));
        assert!(!p.report.strict, "{schema}");
        assert_eq!(p.tool["strict"], false);
        assert_eq!(p.tool["parameters"], schema, "sent unchanged");
        let got = not_strict_reason(&p).unwrap();
        assert!(got.contains(reason), "{got}");
    }
}

#[test]
fn strict_refuses_nesting_deeper_than_openai_allows() {
    let mut schema = json!({"type": "object", "properties": {}});
    for _ in 0..11 {
        schema = json!({"type": "object", "properties": {"inner": schema}, "required": ["inner"]});
    }
    let p = openai_chat(&spec(schema, true));
    assert!(not_strict_reason(&p).unwrap().contains("deeper than 10"));
}

#[test]
fn non_strict_openai_sends_the_schema_untouched() {
    let schema =
        json!({"type": "object", "properties": {"a": {"type": "integer", "format": "int64"}}});
    let p = openai_chat(&spec(schema.clone(), false));
    assert_eq!(p.tool["function"]["parameters"], schema);
    assert_eq!(p.tool["function"]["strict"], false);
    assert!(p.report.notes.is_empty());
}

#[test]
fn gemini_openapi_inlines_folds_nulls_and_cuts_recursion() {
    let p = gemini_openapi(&spec(
        json!({
            "type": "object",
            "properties": {
                "n": {"type": ["integer", "null"], "format": "uint32"},
                "node": {"$ref": "#/$defs/Node"},
                "kind": {"oneOf": [{"const": "a"}, {"const": "b"}]},
                "opt": {"anyOf": [{"$ref": "#/$defs/Leaf"}, {"type": "null"}]}
            },
            "$defs": {
                "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}},
                "Leaf": {"type": "string"}
            }
        }),
        false,
    ));
    let params = &p.tool["parameters"];
    assert!(params.get("$defs").is_none());
    assert_eq!(
        params["properties"]["n"],
        json!({"type": "integer", "nullable": true})
    );
    assert_eq!(
        params["properties"]["node"]["properties"]["next"],
        json!({"type": "object"})
    );
    assert_eq!(
        params["properties"]["kind"]["anyOf"][0],
        json!({"enum": ["a"]})
    );
    assert_eq!(
        params["properties"]["opt"],
        json!({"type": "string", "nullable": true})
    );
    assert!(
        p.report
            .notes
            .iter()
            .any(|n| matches!(n, ProjectionNote::RecursionCut { .. }))
    );
}

#[test]
fn gemini_omits_empty_parameters() {
    let empty = spec(json!({"type": "object", "properties": {}}), false);
    assert!(gemini(&empty).tool.get("parametersJsonSchema").is_none());
    assert!(gemini_openapi(&empty).tool.get("parameters").is_none());
}

#[test]
fn gemini_keeps_refs_maps_and_tuples_and_wraps_a_described_ref() {
    let p = gemini(&spec(
        json!({
            "type": "object",
            "properties": {
                "root": {"$ref": "#/$defs/Node", "description": "The top folder."},
                "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
                "at": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2},
                "name": {"type": "string", "minLength": 2, "pattern": "^[a-z]+$"},
                "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "kind": {"oneOf": [{"const": "x"}, {"const": "y"}]}
            },
            "required": ["root"],
            "$defs": {
                "Node": {
                    "type": "object",
                    "description": "A folder.",
                    "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                    "required": ["children"]
                }
            }
        }),
        false,
    ));
    let params = &p.tool["parametersJsonSchema"];
    assert_eq!(
        params["properties"]["root"],
        json!({"anyOf": [{"$ref": "#/$defs/Node"}], "description": "The top folder. (required)"})
    );
    assert_eq!(params["$defs"]["Node"]["description"], "A folder.");
    // A recursive property leaves `required`; its description keeps it.
    assert_eq!(params["$defs"]["Node"]["required"], json!([]));
    assert_eq!(
        params["$defs"]["Node"]["properties"]["children"]["description"],
        "(required)"
    );
    assert_eq!(params["required"], json!([]));
    assert_eq!(
        params["properties"]["counts"]["additionalProperties"],
        json!({"type": "integer"})
    );
    assert_eq!(
        params["properties"]["at"]["prefixItems"][1]["type"],
        "string"
    );
    assert_eq!(
        params["properties"]["name"],
        json!({"type": "string", "description": "(at least 2 characters; matching `^[a-z]+$`)"})
    );
    assert_eq!(params["properties"]["mode"]["enum"], json!(["a", "b"]));
    assert_eq!(
        params["properties"]["kind"]["anyOf"][1],
        json!({"enum": ["y"]})
    );
    let limited: Vec<&str> = p
        .report
        .notes
        .iter()
        .filter(|n| matches!(n, ProjectionNote::RecursionLimited { .. }))
        .map(ProjectionNote::at)
        .collect();
    assert_eq!(
        limited,
        [
            "/properties/root/anyOf/0",
            "/$defs/Node/properties/children/items"
        ]
    );
}

#[test]
fn gemini_openapi_describes_an_open_map_s_values() {
    let p = gemini_openapi(&spec(
        json!({
            "type": "object",
            "properties": {
                "stock": {
                    "type": "object",
                    "description": "Per shelf.",
                    "additionalProperties": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}}
                }
            }
        }),
        false,
    ));
    assert_eq!(
        p.tool["parameters"]["properties"]["stock"]["description"],
        "Per shelf. (an object whose values are each a list of {sku: a string, qty: an integer})"
    );
    assert!(p.report.notes.contains(&ProjectionNote::DescribedKeyword {
        at: "/properties/stock".into(),
        keyword: "additionalProperties".into(),
    }));
}

#[test]
fn strict_reports_a_recursive_type_sent_twice() {
    let p = openai_chat(&spec(
        json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node", "description": "The top."}},
            "required": ["root"],
            "$defs": {"Node": {"type": "object", "properties": {"next": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}, "required": ["next"]}}
        }),
        true,
    ));
    assert!(p.report.strict);
    let kept = p.tool["function"]["parameters"]["$defs"]["Node"]
        .to_string()
        .len();
    assert!(
        p.report
            .notes
            .contains(&ProjectionNote::RepeatedDefinition {
                at: "/properties/root".into(),
                reference: "#/$defs/Node".into(),
                chars: kept,
            })
    );
}

#[test]
fn gemini_stops_inlining_past_the_node_limit() {
    // Each level references the next twice: inlining doubles per level.
    let mut defs = serde_json::Map::new();
    for i in 0..20 {
        let next = format!("#/$defs/L{}", i + 1);
        defs.insert(
            format!("L{i}"),
            json!({"type": "object", "properties": {"a": {"$ref": next}, "b": {"$ref": next}}}),
        );
    }
    defs.insert("L20".into(), json!({"type": "string"}));
    let p = gemini_openapi(&spec(
        json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/L0"}}, "$defs": defs}),
        false,
    ));
    assert!(
        p.report
            .notes
            .iter()
            .any(|n| matches!(n, ProjectionNote::TooLarge { .. }))
    );
    let size = p.tool.to_string().len();
    assert!(size < 2_000_000, "inlined schema grew to {size} bytes");
}

#[test]
fn project_all_keeps_order() {
    let specs = [spec(json!({"type": "object", "properties": {}}), false)];
    let (tools, reports) = project_all(&specs, anthropic);
    assert_eq!(tools[0]["input_schema"]["type"], "object");
    assert_eq!(reports[0].tool, "t");
}

fn arb_json() -> impl Strategy<Value = Value> {
    let keys = prop::sample::select(vec![
        "type",
        "properties",
        "required",
        "items",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
        "additionalProperties",
        "enum",
        "const",
        "format",
        "default",
        "a",
        "b",
        "#/$defs/a",
        "object",
        "string",
        "null",
        "patternProperties",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        prop::sample::select(vec![
            "object",
            "string",
            "null",
            "#/$defs/a",
            "#/$defs/b",
            "#"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone(), inner, 0..5).prop_map(|m| Value::Object(
                m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn hostile_schemas_never_panic_and_strict_output_is_strict(props in arb_json(), defs in arb_json()) {
        let schema = json!({"type": "object", "properties": props, "$defs": defs});
        for strict in [false, true] {
            let s = spec(schema.clone(), strict);
            let chat = openai_chat(&s);
            if chat.report.strict {
                prop_assert!(strict_invariants_hold(&chat.tool["function"]["parameters"]));
            }
            let _ = openai_responses(&s);
            let _ = anthropic(&s);
            let g = gemini_openapi(&s);
            prop_assert!(g.tool.get("parameters").is_none_or(|p| !has_ref(p)));
            let _ = gemini(&s);
        }
    }
}

#[test]
fn an_inlined_type_keeps_its_description_after_the_property_s() {
    let parameters = json!({
        "type": "object",
        "properties": {
            "level": {"$ref": "#/$defs/Level", "description": "The new level."},
            "again": {"$ref": "#/$defs/Level", "description": "How verbose it is."}
        },
        "required": ["level", "again"],
        "$defs": {"Level": {"type": "string", "enum": ["low", "high"], "description": "How verbose it is."}}
    });
    for tool in [
        openai_chat(&spec(parameters.clone(), true)).tool,
        gemini_openapi(&spec(parameters.clone(), false)).tool,
    ] {
        let text = tool.to_string();
        assert!(
            text.contains(r#""The new level.\n\nHow verbose it is.""#),
            "{text}"
        );
        // Said once when the property repeats its type's words.
        assert!(
            !text.contains(r#""How verbose it is.\n\nHow verbose it is.""#),
            "{text}"
        );
    }
}

/// Findings of the projection fuzzer: each keyword the schema holds is
/// sent, or a note says where it went.
#[test]
fn a_reference_to_no_definition_is_never_sent_strict() {
    let p = openai_chat(&spec(
        json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/Missing"}},
            "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}
        }),
        true,
    ));
    assert!(!p.report.strict);
    let reason = not_strict_reason(&p).unwrap();
    assert!(reason.contains("#/$defs/Missing"), "{reason}");
}

#[test]
fn gemini_keeps_the_positions_of_a_tuple_in_the_old_form() {
    let schema = json!({
        "type": "object",
        "properties": {"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}}
    });
    let p = gemini(&spec(schema.clone(), false));
    assert_eq!(
        p.tool
            .pointer("/parametersJsonSchema/properties/pair/prefixItems/1/type"),
        Some(&json!("integer")),
        "{}",
        p.tool
    );
    let p = gemini_openapi(&spec(schema, false));
    let pair = p.tool.pointer("/parameters/properties/pair").unwrap();
    assert!(
        pair["description"].as_str().unwrap().contains("2: integer"),
        "{pair}"
    );
}

#[test]
fn gemini_sends_parameters_an_object_describes_without_properties() {
    let p = gemini(&spec(
        json!({
            "type": "object",
            "anyOf": [
                {"properties": {"id": {"type": "string"}}, "required": ["id"]},
                {"properties": {"name": {"type": "string"}}, "required": ["name"]}
            ]
        }),
        false,
    ));
    assert!(p.tool.get("parametersJsonSchema").is_some(), "{}", p.tool);
    let p = gemini(&spec(json!({"type": "object", "properties": {}}), false));
    assert!(p.tool.get("parametersJsonSchema").is_none(), "{}", p.tool);
}
