//! Every generated definition and every provider projection, pinned.

#[allow(dead_code, reason = "each test binary uses part of the shared tools")]
use crate::support;

use iris::Tool;
use iris::provider::{anthropic, gemini, gemini_openapi, openai_chat, openai_responses};
use iris::tool::DynTool;
use serde_json::json;
use support::tools::*;

fn all_tools() -> Vec<(&'static str, &'static dyn DynTool)> {
    vec![
        ("square", &Square),
        ("set_volume", &SetVolume),
        ("average", &Average),
        ("toggle_feature", &ToggleFeature),
        ("search_web", &SearchWeb),
        ("label_document", &LabelDocument),
        ("create_event", &CreateEvent),
        ("set_log_level", &SetLogLevel),
        ("draw_shape", &DrawShape),
        ("rename_user", &RenameUser),
        ("current_time", &CurrentTime),
        ("count_folders", &CountFolders),
        ("summarise", &Summarise),
        ("book_flight", &BookFlight),
        ("fetch_page", &FetchPage),
        ("store_json", &StoreJson),
        ("register_customer", &RegisterCustomer),
        ("read_config", &LoadConfig),
        ("roll_dice", &RollDice),
        ("move_cursor", &MoveCursor),
    ]
}

#[test]
fn definitions() {
    for (name, tool) in all_tools() {
        insta::assert_json_snapshot!(format!("definition_{name}"), tool.definition_dyn());
    }
}

/// The tools of a toolbox, one per `#[tool]` method, with the same
/// definitions a free function's would have.
#[test]
fn toolbox_definitions_and_projections() {
    let library = std::sync::Arc::new(Library::new(&[]));
    for tool in <Library as iris::tool::Toolbox>::tools(library) {
        let definition = tool.definition_dyn();
        let name = definition.name().to_string();
        insta::assert_json_snapshot!(format!("toolbox_definition_{name}"), definition);
        let spec = definition.spec();
        let projections = json!({
            "openai_chat": openai_chat(&spec.clone().with_strict(true)),
            "gemini": gemini(&spec),
        });
        insta::assert_json_snapshot!(format!("toolbox_projections_{name}"), projections);
    }
}

#[test]
fn projections() {
    for (name, tool) in all_tools() {
        let spec = tool.definition_dyn().spec();
        let strict = spec.clone().with_strict(true);
        let projections = json!({
            "openai_chat": openai_chat(&strict),
            "openai_responses": openai_responses(&strict),
            "anthropic": anthropic(&spec),
            "gemini": gemini(&spec),
            "gemini_openapi": gemini_openapi(&spec),
        });
        insta::assert_json_snapshot!(format!("projections_{name}"), projections);
    }
}

#[test]
fn schemas_have_the_promised_shape() {
    for (name, tool) in all_tools() {
        let schema = tool.definition_dyn().input_schema();
        assert_eq!(schema["type"], "object", "{name}");
        assert!(schema.get("$schema").is_none(), "{name}");
        assert!(schema.get("title").is_none(), "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        assert!(schema["properties"].is_object(), "{name}");
    }
    let level = &SetLogLevel.definition().input_schema()["$defs"]["LogLevel"];
    assert_eq!(level["type"], "string");
    assert_eq!(level["enum"], json!(["debug", "info", "warn", "error"]));
}

/// Every `description` string under `node`.
fn descriptions(node: &serde_json::Value, out: &mut Vec<String>) {
    match node {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                match value {
                    serde_json::Value::String(text) if key == "description" => {
                        out.push(text.clone());
                    }
                    _ => descriptions(value, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| descriptions(i, out)),
        _ => {}
    }
}

/// What the author wrote reaches every provider: each description of the
/// raw schema (properties, types, variants) is found in each projection,
/// even where a `$ref` was inlined over a property's own description.
#[test]
fn no_projection_loses_a_description() {
    for (name, tool) in all_tools() {
        let spec = tool.definition_dyn().spec();
        let strict = spec.clone().with_strict(true);
        let mut written = Vec::new();
        descriptions(spec.parameters(), &mut written);
        let projected = [
            ("openai_chat", openai_chat(&strict).tool),
            ("openai_responses", openai_responses(&strict).tool),
            ("anthropic", anthropic(&spec).tool),
            ("gemini", gemini(&spec).tool),
            ("gemini_openapi", gemini_openapi(&spec).tool),
        ];
        for (provider, form) in projected {
            let mut sent = Vec::new();
            descriptions(&form, &mut sent);
            for text in &written {
                assert!(
                    sent.iter().any(|s| s.contains(text.as_str())),
                    "{name} → {provider} lost {text:?}"
                );
            }
        }
    }
}

/// Every note of a projection report points at a node of the schema that
/// is sent, never into a definition that was inlined and removed.
#[test]
fn report_notes_point_into_the_emitted_schema() {
    for (name, tool) in all_tools() {
        let spec = tool.definition_dyn().spec();
        let strict = spec.clone().with_strict(true);
        let projected = [
            ("openai_chat", openai_chat(&strict), "/function/parameters"),
            ("openai_responses", openai_responses(&strict), "/parameters"),
            ("gemini", gemini(&spec), "/parametersJsonSchema"),
            ("gemini_openapi", gemini_openapi(&spec), "/parameters"),
        ];
        for (provider, projection, root) in projected {
            let Some(schema) = projection.tool.pointer(root) else {
                continue;
            };
            for note in &projection.report.notes {
                assert!(
                    schema.pointer(note.at()).is_some(),
                    "{name} → {provider}: {note:?} points outside {schema}"
                );
            }
        }
    }
}

/// The rows of the provider keyword table in `iris::provider`'s docs: a
/// property using the keyword, and the definitions it refers to.
const KEYWORD_ROWS: &str = include_str!("keyword_rows.json");

/// Every row of the keyword table, projected to every provider.
#[test]
fn keyword_table() {
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(KEYWORD_ROWS).expect("keyword_rows.json is a list of rows");
    for entry in rows {
        let (row, property, defs) = (&entry["row"], &entry["property"], &entry["defs"]);
        let row = row.as_str().expect("each row has a name");
        let mut parameters = json!({
            "type": "object",
            "properties": {"p": property.clone()},
            "required": ["p"],
            "additionalProperties": false,
        });
        if defs.as_object().is_some_and(|d| !d.is_empty()) {
            parameters["$defs"] = defs.clone();
        }
        let spec = iris::definition::ToolSpec::new(
            iris::definition::ToolName::new("t").expect("valid name"),
            "A tool.",
            parameters,
        );
        let strict = spec.clone().with_strict(true);
        let projected = |projection: iris::provider::Projection, root: &str| {
            let schema = projection.tool.pointer(root).cloned();
            json!({"schema": schema, "notes": projection.report.notes, "strict": projection.report.strict})
        };
        let table = json!({
            "openai_strict": projected(openai_chat(&strict), "/function/parameters"),
            "anthropic": projected(anthropic(&spec), "/input_schema"),
            "gemini": projected(gemini(&spec), "/parametersJsonSchema"),
            "gemini_openapi": projected(gemini_openapi(&spec), "/parameters"),
        });
        insta::assert_json_snapshot!(format!("keyword_{row}"), table);
    }
}
