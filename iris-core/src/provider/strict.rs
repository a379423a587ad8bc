//! OpenAI strict mode: every property required, optional ones nullable,
//! objects closed, `oneOf` as `anyOf`, unsupported keywords removed.

use serde_json::{Map, Value, json};

use super::ProjectionNote;
use super::walk::{child, collect_local_refs, local_def_name, merge_all_of, merge_ref, rename_key};
use crate::schema::PATCH_KEYWORD;

/// OpenAI's documented limit on object nesting in strict schemas.
const MAX_OBJECT_DEPTH: usize = 10;

/// Keywords strict mode rejects and that can be dropped without changing
/// which values the model may produce in a way the body would notice.
const UNSUPPORTED: &[&str] = &[
    "default",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Keywords that widen what an object accepts; strict mode cannot express them.
const OPENING: &[&str] = &[
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
];

/// Keywords that narrow what a value may be in ways strict mode cannot
/// express and the runtime does not check: dropping them would let the
/// model send values the author excluded, so the tool goes non-strict.
const REFUSED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
];

/// String formats strict mode accepts.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Why a schema cannot be made strict.
pub(super) struct NotStrict(pub(super) ProjectionNote);

fn not_strict(at: &str, reason: impl Into<String>) -> NotStrict {
    NotStrict(ProjectionNote::NotStrict {
        at: at.to_owned(),
        reason: reason.into(),
    })
}

struct StrictPass<'d> {
    defs: &'d Map<String, Value>,
    expanding: Vec<String>,
    notes: Vec<ProjectionNote>,
}

/// The strict form of `schema`, with the notes of every change.
pub(super) fn make_strict(schema: &Value) -> Result<(Value, Vec<ProjectionNote>), NotStrict> {
    let empty = Map::new();
    let defs = match schema.get("$defs") {
        None => &empty,
        Some(Value::Object(defs)) => defs,
        Some(_) => return Err(not_strict("/$defs", "expected an object of named schemas")),
    };
    let mut pass = StrictPass {
        defs,
        expanding: Vec::new(),
        notes: Vec::new(),
    };
    let mut out = schema.clone();
    pass.visit(&mut out, "", 0)?;
    if let Some(reference) = unresolved_ref(&out, defs) {
        // The provider refuses the whole request for a reference it cannot
        // resolve.
        return Err(not_strict(
            "",
            format!(
                "`$ref` {reference} names no definition in the schema's `$defs`; strict mode needs every reference to resolve"
            ),
        ));
    }
    let pruned = prune_unused_defs(&mut out);
    // A note must point into the schema that is sent: changes made inside a
    // definition that was inlined everywhere and removed are reported where
    // it was inlined.
    let mut notes = pass.notes;
    notes.retain(|note| {
        !pruned.iter().any(|name| {
            let def = child("/$defs", name);
            note.at() == def || note.at().starts_with(&format!("{def}/"))
        })
    });
    let repeated = repeated_definitions(&out, &notes);
    notes.extend(repeated);
    Ok((out, notes))
}

/// The first `$ref` under `node` that names no object schema of `defs`
/// (or is not a reference at all).
fn unresolved_ref<'v>(node: &'v Value, defs: &Map<String, Value>) -> Option<&'v Value> {
    match node {
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref") {
                let resolves = reference
                    .as_str()
                    .and_then(|reference| reference.strip_prefix("#/$defs/"))
                    .and_then(|name| defs.get(name))
                    .is_some_and(Value::is_object);
                if !resolves {
                    return Some(reference);
                }
            }
            map.iter()
                // Values, not schemas.
                .filter(|(key, _)| {
                    !matches!(key.as_str(), "enum" | "const" | "default" | "examples")
                })
                .find_map(|(_, value)| unresolved_ref(value, defs))
        }
        Value::Array(items) => items.iter().find_map(|value| unresolved_ref(value, defs)),
        _ => None,
    }
}

/// A definition inlined somewhere (for a description beside its `$ref`)
/// and still kept in `$defs` (a recursive type's own references need it) is
/// sent twice; each such copy is reported with what it costs.
fn repeated_definitions(out: &Value, notes: &[ProjectionNote]) -> Vec<ProjectionNote> {
    let Some(Value::Object(kept)) = out.get("$defs") else {
        return Vec::new();
    };
    notes
        .iter()
        .filter_map(|note| {
            let ProjectionNote::InlinedRef { at, reference } = note else {
                return None;
            };
            let def = kept.get(local_def_name(reference)?)?;
            Some(ProjectionNote::RepeatedDefinition {
                at: at.clone(),
                reference: reference.clone(),
                chars: def.to_string().len(),
            })
        })
        .collect()
}

/// Whether a schema constrains its values to some type.
fn is_typed(map: &Map<String, Value>) -> bool {
    ["type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const"]
        .iter()
        .any(|k| map.contains_key(*k))
}

/// Drops `$defs` entries that nothing references any more (inlining can
/// leave some behind), so the request carries no dead schema; returns their
/// names.
fn prune_unused_defs(root: &mut Value) -> Vec<String> {
    let Some(Value::Object(defs)) = root.get("$defs").cloned() else {
        return Vec::new();
    };
    let mut used: Vec<String> = Vec::new();
    let mut outside = root.clone();
    if let Value::Object(map) = &mut outside {
        map.shift_remove("$defs");
    }
    let mut queue = Vec::new();
    collect_local_refs(&outside, &mut queue);
    while let Some(name) = queue.pop() {
        if used.contains(&name) {
            continue;
        }
        if let Some(def) = defs.get(&name) {
            collect_local_refs(def, &mut queue);
        }
        used.push(name);
    }
    if let Value::Object(map) = root {
        if used.is_empty() {
            map.shift_remove("$defs");
        } else if let Some(Value::Object(defs)) = map.get_mut("$defs") {
            defs.retain(|name, _| used.contains(name));
        }
    }
    defs.keys()
        .filter(|name| !used.contains(name))
        .cloned()
        .collect()
}

impl StrictPass<'_> {
    fn visit(&mut self, node: &mut Value, at: &str, depth: usize) -> Result<(), NotStrict> {
        let Value::Object(map) = node else {
            let reason = if node.is_boolean() {
                "a boolean schema accepts any value; strict mode needs a typed schema"
            } else {
                "expected a schema object here"
            };
            return Err(not_strict(at, reason));
        };
        if merge_all_of(map) {
            self.notes
                .push(ProjectionNote::MergedAllOf { at: at.to_owned() });
        }
        if map.contains_key("$ref") && map.len() > 1 {
            return self.expand_ref_with_siblings(node, at, depth);
        }
        if !is_typed(map) {
            return Err(not_strict(
                at,
                "a schema without `type` accepts any value; strict mode needs a typed schema",
            ));
        }
        if let Some(unknown) = unknown_type(map) {
            return Err(not_strict(
                at,
                format!("`{unknown}` is not a JSON Schema type, so strict mode cannot enforce it"),
            ));
        }
        if map.contains_key("properties") && !is_object_schema(map) {
            return Err(not_strict(
                at,
                "`properties` on a schema whose type is not `object`; strict mode needs objects typed as such",
            ));
        }
        if map.contains_key(PATCH_KEYWORD) {
            return Err(not_strict(
                at,
                "a `Patch` property keeps the value when left out and clears it on `null`; strict mode sends every property, so it could never keep",
            ));
        }
        if let Some(keyword) = REFUSED.iter().find(|k| map.contains_key(**k)) {
            return Err(not_strict(
                at,
                format!("strict mode does not support `{keyword}`"),
            ));
        }
        self.drop_unsupported(map, at);
        if rename_key(map, "oneOf", "anyOf") {
            self.notes
                .push(ProjectionNote::OneOfToAnyOf { at: at.to_owned() });
        }
        let mut depth = depth;
        if is_object_schema(map) {
            depth += 1;
            if depth > MAX_OBJECT_DEPTH {
                return Err(not_strict(
                    at,
                    format!("objects nest deeper than {MAX_OBJECT_DEPTH} levels"),
                ));
            }
            self.close_object(map, at)?;
        }
        self.visit_children(map, at, depth)
    }

    fn expand_ref_with_siblings(
        &mut self,
        node: &mut Value,
        at: &str,
        depth: usize,
    ) -> Result<(), NotStrict> {
        let Value::Object(map) = node else {
            return Ok(());
        };
        let reference = map
            .get("$ref")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let defs = self.defs;
        let target = local_def_name(&reference)
            .filter(|name| !self.expanding.iter().any(|e| e == name))
            .and_then(|name| Some((name.to_owned(), defs.get(name)?.as_object()?)));
        let Some((name, target)) = target else {
            // A recursive reference (an unresolved one is refused after the
            // walk): keep the `$ref`, drop what strict mode refuses next
            // to it.
            let siblings: Vec<String> = map.keys().filter(|k| *k != "$ref").cloned().collect();
            for keyword in siblings {
                map.shift_remove(&keyword);
                self.notes.push(ProjectionNote::DroppedKeyword {
                    at: at.to_owned(),
                    keyword,
                });
            }
            return Ok(());
        };
        *node = merge_ref(target, map);
        self.notes.push(ProjectionNote::InlinedRef {
            at: at.to_owned(),
            reference,
        });
        self.expanding.push(name);
        let result = self.visit(node, at, depth);
        self.expanding.pop();
        result
    }

    fn drop_unsupported(&mut self, map: &mut Map<String, Value>, at: &str) {
        let mut removed: Vec<String> = UNSUPPORTED
            .iter()
            .filter(|k| map.contains_key(**k))
            .map(|k| (*k).to_owned())
            .collect();
        let unsupported_format = map
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| !FORMATS.contains(&f));
        if unsupported_format {
            removed.push("format".to_owned());
        }
        super::describe::remove_keywords(map, &removed, at, &mut self.notes);
    }

    fn close_object(&mut self, map: &mut Map<String, Value>, at: &str) -> Result<(), NotStrict> {
        if let Some(keyword) = OPENING.iter().find(|k| map.contains_key(**k)) {
            return Err(not_strict(
                at,
                format!(
                    "`{keyword}` accepts keys that are not declared; strict mode needs every key declared"
                ),
            ));
        }
        match map.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => {
                return Err(not_strict(
                    at,
                    "an open map (`additionalProperties`) accepts keys that are not declared; strict mode needs every key declared",
                ));
            }
        }
        if !map.get("properties").is_some_and(Value::is_object) {
            return Err(not_strict(
                at,
                "an object without `properties` accepts any keys; strict mode needs every key declared",
            ));
        }
        let required: Vec<String> = match map.get("required") {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        let Some(Value::Object(props)) = map.get_mut("properties") else {
            return Ok(());
        };
        let mut all = Vec::with_capacity(props.len());
        for (key, prop) in props.iter_mut() {
            if !required.contains(key) {
                make_nullable(prop);
                self.notes.push(ProjectionNote::MadeNullable {
                    at: child(&child(at, "properties"), key),
                });
            }
            all.push(Value::String(key.clone()));
        }
        map.insert("required".to_owned(), Value::Array(all));
        map.insert("additionalProperties".to_owned(), Value::Bool(false));
        Ok(())
    }

    fn visit_children(
        &mut self,
        map: &mut Map<String, Value>,
        at: &str,
        depth: usize,
    ) -> Result<(), NotStrict> {
        for keyword in ["properties", "$defs"] {
            if let Some(Value::Object(children)) = map.get_mut(keyword) {
                let base = child(at, keyword);
                for (key, value) in children.iter_mut() {
                    self.visit(value, &child(&base, key), depth)?;
                }
            }
        }
        for keyword in ["anyOf", "prefixItems"] {
            if let Some(Value::Array(children)) = map.get_mut(keyword) {
                let base = child(at, keyword);
                for (i, value) in children.iter_mut().enumerate() {
                    self.visit(value, &child(&base, &i.to_string()), depth)?;
                }
            }
        }
        if let Some(items) = map.get_mut("items") {
            self.visit(items, &child(at, "items"), depth)?;
        }
        Ok(())
    }
}

/// A `type` name that is not one of JSON Schema's seven (`obbect`).
fn unknown_type(map: &Map<String, Value>) -> Option<String> {
    const TYPES: &[&str] = &[
        "null", "boolean", "object", "array", "number", "integer", "string",
    ];
    let named: Vec<&Value> = match map.get("type") {
        Some(Value::Array(types)) => types.iter().collect(),
        Some(one) => vec![one],
        None => Vec::new(),
    };
    named
        .into_iter()
        .find(|t| !t.as_str().is_some_and(|t| TYPES.contains(&t)))
        .map(|t| t.as_str().map_or_else(|| t.to_string(), str::to_owned))
}

fn is_object_schema(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => map.contains_key("properties"),
    }
}

/// Lets `schema` also accept `null`, the strict-mode spelling of "optional".
fn make_nullable(schema: &mut Value) {
    let null = Value::String("null".to_owned());
    if let Value::Object(map) = schema {
        match map.get_mut("type") {
            Some(Value::String(t)) if t != "null" => {
                let t = std::mem::take(t);
                map.insert("type".to_owned(), json!([t, "null"]));
                add_null_to_enum(map);
                return;
            }
            Some(Value::Array(types)) => {
                if !types.contains(&null) {
                    types.push(null);
                }
                add_null_to_enum(map);
                return;
            }
            Some(_) => return,
            None => {}
        }
        if let Some(Value::Array(any_of)) = map.get_mut("anyOf") {
            if !any_of.iter().any(|s| s.get("type") == Some(&null)) {
                any_of.push(json!({"type": "null"}));
            }
            return;
        }
    }
    let inner = std::mem::take(schema);
    *schema = json!({"anyOf": [inner, {"type": "null"}]});
}

fn add_null_to_enum(map: &mut Map<String, Value>) {
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}
