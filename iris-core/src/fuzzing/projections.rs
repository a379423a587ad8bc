//! A tool's input schema projected into every provider's wire shape.
//!
//! Properties: no projection panics; each gives identical bytes on a
//! second run; a projection reported strict keeps the strict rules; the
//! Gemini OpenAPI shape holds no `$ref`; every keyword a note says was
//! dropped was in the schema, and every keyword of the schema that is not
//! in the projection is accounted for by a note.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::name::ToolName;
use crate::provider::invariants::{has_ref, strict_invariants_hold};
use crate::provider::walk::child;
use crate::provider::{
    Projection, ProjectionNote, anthropic, gemini, gemini_openapi, openai_chat, openai_responses,
};
use crate::spec::ToolSpec;

type Project = fn(&ToolSpec) -> Projection;

/// Projects `data` (a JSON schema, or properties when it is not an object
/// schema) for every provider, strict and not, and checks the properties.
///
/// # Panics
/// When a property does not hold: that is a finding.
pub fn schema_projections(data: &[u8]) {
    let Some(value) = super::json(data) else {
        return;
    };
    let schema = if value.get("type") == Some(&Value::from("object")) {
        value
    } else {
        serde_json::json!({"type": "object", "properties": {"value": value}})
    };
    let Ok(name) = ToolName::new("t") else {
        return;
    };
    for strict in [false, true] {
        let spec =
            ToolSpec::new(name.clone(), "A tool under test.", schema.clone()).with_strict(strict);
        let all: [(&str, Project); 5] = [
            ("openai_chat", openai_chat),
            ("openai_responses", openai_responses),
            ("anthropic", anthropic),
            ("gemini", gemini),
            ("gemini_openapi", gemini_openapi),
        ];
        for (provider, project) in all {
            let first = project(&spec);
            let second = project(&spec);
            assert_eq!(
                first.tool.to_string(),
                second.tool.to_string(),
                "{provider} gave two answers for {schema}"
            );
            if first.report.strict {
                let parameters = first
                    .tool
                    .pointer("/function/parameters")
                    .or_else(|| first.tool.get("parameters"))
                    .unwrap_or(&Value::Null);
                assert!(
                    strict_invariants_hold(parameters),
                    "{provider} reported strict but broke the strict rules: {parameters} from {schema}"
                );
            }
            if provider == "gemini_openapi" {
                assert!(
                    first.tool.get("parameters").is_none_or(|p| !has_ref(p)),
                    "{provider} left a $ref: {} from {schema}",
                    first.tool
                );
            }
            let text = schema.to_string();
            for note in &first.report.notes {
                if let ProjectionNote::DroppedKeyword { keyword, .. } = note {
                    let held = |keyword: &str| text.contains(&Value::from(keyword).to_string());
                    // A dropped `$ref` is reported with its target.
                    let reported = held(keyword) || (keyword.starts_with("$ref ") && held("$ref"));
                    assert!(
                        reported,
                        "{provider} reports dropping `{keyword}`, which {schema} does not hold"
                    );
                }
            }
            let sent = first
                .tool
                .pointer("/function/parameters")
                .or_else(|| first.tool.get("parameters"))
                .or_else(|| first.tool.get("input_schema"))
                .or_else(|| first.tool.get("parametersJsonSchema"))
                .unwrap_or(&Value::Null);
            if let Some(lost) = silently_dropped(&schema, sent, &first.report.notes) {
                panic!(
                    "{provider} dropped `{lost}` without a note: {sent} from {schema} (notes: {:?})",
                    first.report.notes
                );
            }
        }
    }
}

/// A keyword of `schema` that `sent` no longer holds anywhere and no note
/// accounts for, if any.
fn silently_dropped(schema: &Value, sent: &Value, notes: &[ProjectionNote]) -> Option<String> {
    if sent.is_null() {
        return no_parameters_dropped(schema, notes);
    }
    // A definition nothing refers to means nothing: a projection may prune
    // it with all it holds.
    let schema = &without_unused_definitions(schema);
    let mut after = BTreeSet::new();
    keywords(sent, &mut after, "", &|_, _| false);
    let accounted_for = |keyword: &str| {
        notes.iter().any(|note| match note {
            ProjectionNote::DroppedKeyword { keyword: k, .. }
            | ProjectionNote::DescribedKeyword { keyword: k, .. } => {
                k == keyword || k.split_whitespace().next() == Some(keyword)
            }
            ProjectionNote::OneOfToAnyOf { .. } => keyword == "oneOf",
            ProjectionNote::MergedAllOf { .. } => keyword == "allOf",
            ProjectionNote::InlinedRef { .. }
            | ProjectionNote::RecursionCut { .. }
            | ProjectionNote::RecursionLimited { .. } => {
                matches!(keyword, "$ref" | "$defs" | "definitions")
            }
            _ => false,
        })
    };
    // What a dropped subschema held went with it.
    let mut before = BTreeSet::new();
    let refers = refers_into_definitions(schema, sent);
    let dropped_here = |at: &str, keyword: &str| {
        notes.iter().any(|note| {
            matches!(note, ProjectionNote::DroppedKeyword { keyword: k, .. }
                | ProjectionNote::DescribedKeyword { keyword: k, .. }
                if k == keyword && note.at() == at)
        })
    };
    keywords(schema, &mut before, "", &|at, keyword| {
        dropped_here(at, keyword)
            || (!after.contains(keyword) && accounted_for(keyword))
            || (!refers && matches!(keyword, "$defs" | "definitions"))
    });
    // Rewritten to a keyword that means the same.
    // Definitions nothing refers to any more mean nothing.
    let rewritten = |keyword: &str| {
        (keyword == "const" && after.contains("enum"))
            || (keyword == "items" && after.contains("prefixItems"))
            || (matches!(keyword, "$defs" | "definitions") && !refers)
            // Iris's own `Patch` marker is never the author's: projections
            // drop it where the provider has no use for it, saying nothing.
            || keyword == crate::schema::PATCH_KEYWORD
    };
    before
        .iter()
        .filter(|keyword| !after.contains(*keyword))
        .find(|keyword| !accounted_for(keyword) && !rewritten(keyword))
        .cloned()
}

/// Whether a `$ref` of `sent` names a definition `schema` holds: only then
/// do definitions mean something once sent.
fn refers_into_definitions(schema: &Value, sent: &Value) -> bool {
    let mut references = Vec::new();
    collect_refs(sent, &mut references);
    references.iter().any(|reference| {
        ["#/$defs/", "#/definitions/"].iter().any(|prefix| {
            reference.strip_prefix(prefix).is_some_and(|name| {
                schema
                    .get(&prefix[2..prefix.len() - 1])
                    .and_then(|defs| defs.get(name))
                    .is_some()
            })
        })
    })
}

/// `schema` without the definitions that nothing outside them refers to,
/// directly or through other definitions.
fn without_unused_definitions(schema: &Value) -> Value {
    let Value::Object(root) = schema else {
        return schema.clone();
    };
    let sections = ["$defs", "definitions"];
    let mut outside = Vec::new();
    for (key, value) in root {
        if !sections.contains(&key.as_str()) {
            collect_refs(value, &mut outside);
        }
    }
    let mut used: BTreeSet<(&str, String)> = BTreeSet::new();
    let mut pending: Vec<&str> = outside;
    while let Some(reference) = pending.pop() {
        let Some((section, name)) = definition_named(reference) else {
            continue;
        };
        let Some(definition) = root.get(section).and_then(|defs| defs.get(&name)) else {
            continue;
        };
        if used.insert((section, name)) {
            collect_refs(definition, &mut pending);
        }
    }
    let mut pruned = root.clone();
    for section in sections {
        if let Some(Value::Object(defs)) = pruned.get_mut(section) {
            defs.retain(|name, _| used.contains(&(section, name.clone())));
        }
    }
    Value::Object(pruned)
}

/// The section and the name of the definition a local `$ref` points into
/// (`#/$defs/Span/properties/start` -> `$defs`, `Span`).
fn definition_named(reference: &str) -> Option<(&'static str, String)> {
    ["$defs", "definitions"].into_iter().find_map(|section| {
        let rest = reference
            .strip_prefix("#/")?
            .strip_prefix(section)?
            .strip_prefix('/')?;
        let token = rest.split('/').next()?;
        Some((section, token.replace("~1", "/").replace("~0", "~")))
    })
}

/// Every `$ref` inside `node`.
fn collect_refs<'v>(node: &'v Value, out: &mut Vec<&'v str>) {
    match node {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(reference)) => out.push(reference),
                    _ => collect_refs(value, out),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                collect_refs(item, out);
            }
        }
        _ => {}
    }
}

/// For a declaration sent without parameters: a keyword of `schema` that
/// says the tool takes some, and no note accounts for, if any.
fn no_parameters_dropped(schema: &Value, notes: &[ProjectionNote]) -> Option<String> {
    let Value::Object(map) = schema else {
        return None;
    };
    let accounted_for = |keyword: &str| {
        notes.iter().any(|note| {
            matches!(note, ProjectionNote::DroppedKeyword { keyword: k, .. }
                | ProjectionNote::DescribedKeyword { keyword: k, .. } if k == keyword)
        })
    };
    map.iter()
        .find(|(key, value)| {
            let says_nothing = match key.as_str() {
                // What names nothing the tool takes, and assertions on
                // numbers, strings and arrays, which say nothing of an
                // object.
                "type" | "description" | "title" | "$schema" | "$id" | "$comment" | "required"
                | "$defs" | "definitions" | "minimum" | "maximum" | "exclusiveMinimum"
                | "exclusiveMaximum" | "multipleOf" | "minLength" | "maxLength" | "pattern"
                | "format" | "items" | "prefixItems" | "minItems" | "maxItems" | "uniqueItems"
                | "contains" => true,
                "properties" => value.as_object().is_some_and(serde_json::Map::is_empty),
                "additionalProperties" => **value == Value::Bool(false),
                _ => false,
            };
            !says_nothing && !accounted_for(key)
        })
        .map(|(key, _)| key.clone())
}

/// The keywords of every schema inside `schema`, which sits at `at` (a
/// JSON Pointer): the keys of schema objects, never property or
/// definition names, not looking inside the subschemas of a keyword
/// `gone` says was dropped there.
fn keywords(
    schema: &Value,
    out: &mut BTreeSet<String>,
    at: &str,
    gone: &dyn Fn(&str, &str) -> bool,
) {
    let Value::Object(map) = schema else {
        return;
    };
    let below = |key: &str, token: &str| child(&child(at, key), token);
    for (key, value) in map {
        out.insert(key.clone());
        if gone(at, key) {
            continue;
        }
        match (key.as_str(), value) {
            (
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas",
                Value::Object(named),
            ) => {
                for (name, inner) in named {
                    keywords(inner, out, &below(key, name), gone);
                }
            }
            (
                "allOf"
                | "anyOf"
                | "oneOf"
                | "prefixItems"
                | "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems",
                Value::Array(branches),
            ) => {
                for (i, inner) in branches.iter().enumerate() {
                    keywords(inner, out, &below(key, &i.to_string()), gone);
                }
            }
            (
                "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems",
                inner,
            ) => {
                keywords(inner, out, &child(at, key), gone);
            }
            _ => {}
        }
    }
}
