//! Replacing local `$ref`s by the schemas they point to, for targets
//! without references, with guards against recursion and fan-out.

use serde_json::{Map, Value, json};

use super::ProjectionNote;
use super::walk::{child, local_def_name, merge_ref};

/// Most schema nodes an inlined schema may hold; a type referenced from
/// many places can otherwise multiply the schema's size.
pub(super) const MAX_INLINED_NODES: usize = 4096;

struct InlinePass<'d> {
    defs: &'d Map<String, Value>,
    expanding: Vec<String>,
    nodes: usize,
    notes: Vec<ProjectionNote>,
}

/// `schema` with every local `$ref` replaced and `$defs` removed.
///
/// A reference back into a type being expanded (recursion) and references
/// past the node limit become `{"type": "object"}` and are reported.
pub(super) fn inline_refs(schema: &Value) -> (Value, Vec<ProjectionNote>) {
    let empty = Map::new();
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut pass = InlinePass {
        defs,
        expanding: Vec::new(),
        nodes: 0,
        notes: Vec::new(),
    };
    let mut out = schema.clone();
    if let Value::Object(map) = &mut out {
        map.shift_remove("$defs");
    }
    pass.visit(&mut out, "");
    (out, pass.notes)
}

impl InlinePass<'_> {
    fn visit(&mut self, node: &mut Value, at: &str) {
        self.nodes += 1;
        let Value::Object(map) = node else {
            return;
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str).map(str::to_owned) {
            self.replace_ref(node, at, reference);
            return;
        }
        // A combinator that is not a list of schemas means nothing a target
        // can read, and its references could not be followed: it is dropped,
        // and said so, rather than sent with references into removed `$defs`.
        let malformed: Vec<String> = map
            .iter()
            .filter(|(key, value)| is_schema_list_keyword(key) && !value.is_array())
            .map(|(key, _)| key.clone())
            .collect();
        for key in malformed {
            map.shift_remove(&key);
            self.notes.push(ProjectionNote::DroppedKeyword {
                at: at.to_owned(),
                keyword: key,
            });
        }
        for (key, value) in map.iter_mut() {
            match value {
                Value::Object(_) if is_schema_keyword(key) => self.visit(value, &child(at, key)),
                Value::Object(children) if is_schema_map_keyword(key) => {
                    let base = child(at, key);
                    for (name, value) in children.iter_mut() {
                        self.visit(value, &child(&base, name));
                    }
                }
                Value::Array(children) if is_schema_list_keyword(key) => {
                    let base = child(at, key);
                    for (i, value) in children.iter_mut().enumerate() {
                        self.visit(value, &child(&base, &i.to_string()));
                    }
                }
                _ => {}
            }
        }
    }

    fn replace_ref(&mut self, node: &mut Value, at: &str, reference: String) {
        let Value::Object(map) = node else {
            return;
        };
        let name = local_def_name(&reference).map(str::to_owned);
        let target = name
            .as_deref()
            .and_then(|n| self.defs.get(n))
            .and_then(Value::as_object);
        let recursive = name
            .as_deref()
            .is_some_and(|n| self.expanding.iter().any(|e| e == n));
        let (Some(name), Some(target), false) = (name.clone(), target, recursive) else {
            self.cut(map, at, reference, recursive);
            return;
        };
        if self.nodes >= MAX_INLINED_NODES {
            map.shift_remove("$ref");
            map.insert("type".to_owned(), json!("object"));
            self.notes.push(ProjectionNote::TooLarge {
                at: at.to_owned(),
                limit: MAX_INLINED_NODES,
            });
            return;
        }
        *node = merge_ref(target, map);
        self.notes.push(ProjectionNote::InlinedRef {
            at: at.to_owned(),
            reference,
        });
        self.expanding.push(name);
        self.visit(node, at);
        self.expanding.pop();
    }

    fn cut(&mut self, map: &mut Map<String, Value>, at: &str, reference: String, recursive: bool) {
        map.shift_remove("$ref");
        map.insert("type".to_owned(), json!("object"));
        if recursive {
            self.notes.push(ProjectionNote::RecursionCut {
                at: at.to_owned(),
                reference,
            });
        } else {
            self.notes.push(ProjectionNote::DroppedKeyword {
                at: at.to_owned(),
                keyword: format!("$ref {reference}"),
            });
        }
    }
}

fn is_schema_keyword(key: &str) -> bool {
    matches!(
        key,
        "items" | "additionalProperties" | "not" | "contains" | "if" | "then" | "else"
    )
}

fn is_schema_map_keyword(key: &str) -> bool {
    matches!(key, "properties" | "patternProperties")
}

fn is_schema_list_keyword(key: &str) -> bool {
    matches!(key, "anyOf" | "oneOf" | "allOf" | "prefixItems")
}
