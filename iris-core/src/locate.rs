//! Where input departs from its tool's JSON Schema: the JSON path of the
//! first value that cannot match.
//!
//! Generated tools parse valid input straight into their argument type. Only
//! when that fails is the input walked against the schema, to tell the model
//! where the problem is; serde's message says what it is. Walking the schema
//! is one function for every tool, where tracking the path while parsing
//! would compile the argument type's parser a second time for each tool.

use serde_json::{Map, Value};

/// The JSON path (`$.items[2].name`) of the first value in `input` that
/// `schema` refuses, or `None` when the walk finds nothing wrong (the
/// parser refused something the schema does not describe).
pub(crate) fn first_mismatch(input: &Value, schema: &Value) -> Option<String> {
    let defs = schema.get("$defs").and_then(Value::as_object);
    let walker = Walker { defs, depth: 0 };
    walker
        .walk(schema, input, &mut Path::root())
        .map(Found::render)
}

/// Deepest a walk goes: hostile input cannot overflow the stack, and
/// recursive schemas end.
const MAX_DEPTH: usize = 128;

struct Walker<'s> {
    defs: Option<&'s Map<String, Value>>,
    depth: usize,
}

/// A path from the root, as segments.
#[derive(Clone)]
struct Path {
    segments: Vec<Segment>,
}

/// Where a walk stopped, and whether only a tag (`const` or `enum`) was
/// wrong there: among alternatives, the branch that failed on a tag is the
/// one the input was not meant for.
struct Found {
    path: Path,
    on_tag: bool,
}

impl Found {
    fn at(path: &Path) -> Self {
        Self {
            path: path.clone(),
            on_tag: false,
        }
    }

    fn render(self) -> String {
        self.path.render()
    }

    /// How close the input came to matching: deeper is closer, and a
    /// failure past the tag is closer than one on it.
    fn closeness(&self) -> (usize, bool) {
        (self.path.segments.len(), !self.on_tag)
    }
}

#[derive(Clone)]
enum Segment {
    Key(String),
    Index(usize),
}

impl Path {
    fn root() -> Self {
        Self {
            segments: Vec::new(),
        }
    }

    fn render(self) -> String {
        let mut out = String::from("$");
        for segment in self.segments {
            match segment {
                Segment::Key(key) => {
                    out.push('.');
                    out.push_str(&key);
                }
                Segment::Index(index) => {
                    out.push('[');
                    out.push_str(&index.to_string());
                    out.push(']');
                }
            }
        }
        out
    }
}

impl Walker<'_> {
    /// The first mismatch under `path`, or `None`.
    fn walk(&self, schema: &Value, value: &Value, path: &mut Path) -> Option<Found> {
        if self.depth > MAX_DEPTH {
            return None;
        }
        let schema = match schema {
            Value::Bool(false) => return Some(Found::at(path)),
            Value::Object(schema) => schema,
            // `true`, or nothing a schema can be: anything goes.
            _ => return None,
        };
        let deeper = Walker {
            defs: self.defs,
            depth: self.depth + 1,
        };
        if let Some(target) = schema.get("$ref").and_then(Value::as_str)
            && let Some(found) = deeper.walk(self.resolve(target)?, value, path)
        {
            return Some(found);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = schema.get(key) {
                let mismatch = deeper.best_branch(branches, value, path)?;
                return Some(mismatch);
            }
        }
        if let Some(Value::Array(all)) = schema.get("allOf") {
            for branch in all {
                if let Some(found) = deeper.walk(branch, value, path) {
                    return Some(found);
                }
            }
        }
        if let Value::Array(items) = value
            && !type_allows(schema.get("type"), value)
            && type_allows(schema.get("type"), &Value::Object(Map::new()))
        {
            // The parser reads a struct from an array too, field by field.
            return Some(
                deeper
                    .walk_fields_in_order(schema, items, path)
                    .unwrap_or_else(|| Found::at(path)),
            );
        }
        if !type_allows(schema.get("type"), value) || !within_bounds(schema, value) {
            return Some(Found::at(path));
        }
        if !listed(schema, value) {
            return Some(Found {
                path: path.clone(),
                on_tag: true,
            });
        }
        match value {
            Value::Object(object) => deeper.walk_object(schema, object, path),
            Value::Array(items) => deeper.walk_array(schema, items, path),
            _ => None,
        }
    }

    /// The schema a local `$ref` (`#/$defs/Name`) names.
    fn resolve(&self, target: &str) -> Option<&Value> {
        let name = target.strip_prefix("#/$defs/")?;
        self.defs?.get(name)
    }

    /// `None` when one branch matches; else the deepest mismatch among the
    /// branches, which is where the input came closest to one of them.
    fn best_branch(&self, branches: &[Value], value: &Value, path: &mut Path) -> Option<Found> {
        let mut best: Option<Found> = None;
        for branch in branches {
            let found = self.walk(branch, value, path)?;
            if best
                .as_ref()
                .is_none_or(|b| found.closeness() > b.closeness())
            {
                best = Some(found);
            }
        }
        best
    }

    fn walk_object(
        &self,
        schema: &Map<String, Value>,
        object: &Map<String, Value>,
        path: &mut Path,
    ) -> Option<Found> {
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties");
        // In the input's order, as the parser reads it.
        for (key, value) in object {
            let child = match properties.and_then(|p| p.get(key)) {
                Some(child) => child,
                None => match additional {
                    Some(Value::Bool(false)) => {
                        return Some(Found::at(&with(path, Segment::Key(key.clone()))));
                    }
                    Some(child @ Value::Object(_)) => child,
                    _ => continue,
                },
            };
            path.segments.push(Segment::Key(key.clone()));
            let found = self.walk(child, value, path);
            path.segments.pop();
            if found.is_some() {
                return found;
            }
        }
        let missing = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|key| !object.contains_key(key));
        missing.then(|| Found::at(path))
    }

    /// An array given where a struct is expected: its items against the
    /// struct's properties, in declaration order.
    fn walk_fields_in_order(
        &self,
        schema: &Map<String, Value>,
        items: &[Value],
        path: &mut Path,
    ) -> Option<Found> {
        let properties = schema.get("properties").and_then(Value::as_object)?;
        for (index, (item, child)) in items.iter().zip(properties.values()).enumerate() {
            path.segments.push(Segment::Index(index));
            let found = self.walk(child, item, path);
            path.segments.pop();
            if found.is_some() {
                return found;
            }
        }
        None
    }

    fn walk_array(
        &self,
        schema: &Map<String, Value>,
        items: &[Value],
        path: &mut Path,
    ) -> Option<Found> {
        let prefix = schema
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let rest = schema.get("items");
        for (index, item) in items.iter().enumerate() {
            let Some(child) = prefix.get(index).or(rest) else {
                continue;
            };
            path.segments.push(Segment::Index(index));
            let found = self.walk(child, item, path);
            path.segments.pop();
            if found.is_some() {
                return found;
            }
        }
        None
    }
}

fn with(path: &Path, segment: Segment) -> Path {
    let mut path = path.clone();
    path.segments.push(segment);
    path
}

/// Whether `value` has one of the types `types` names (any, when absent).
fn type_allows(types: Option<&Value>, value: &Value) -> bool {
    match types {
        Some(Value::String(name)) => is_type(name, value),
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .any(|name| is_type(name, value)),
        _ => true,
    }
}

fn is_type(name: &str, value: &Value) -> bool {
    match (name, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// `enum` and `const`, when the schema has them.
fn listed(schema: &Map<String, Value>, value: &Value) -> bool {
    let in_enum = match schema.get("enum") {
        Some(Value::Array(options)) => options.contains(value),
        _ => true,
    };
    in_enum && schema.get("const").is_none_or(|c| c == value)
}

/// `minimum`, `maximum` and their exclusive forms, for numbers.
fn within_bounds(schema: &Map<String, Value>, value: &Value) -> bool {
    let Some(n) = value.as_f64() else {
        return true;
    };
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    bound("minimum").is_none_or(|min| n >= min)
        && bound("maximum").is_none_or(|max| n <= max)
        && bound("exclusiveMinimum").is_none_or(|min| n > min)
        && bound("exclusiveMaximum").is_none_or(|max| n < max)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::first_mismatch;

    fn schema() -> serde_json::Value {
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "title": {"type": "string"},
                "size": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
                "owner": {"anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}]},
                "people": {"type": "array", "items": {"$ref": "#/$defs/Person"}},
                "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
                "shape": {"oneOf": [
                    {"type": "object", "properties": {"Circle": {"type": "object", "properties": {"r": {"type": "number"}}, "required": ["r"]}}, "required": ["Circle"], "additionalProperties": false},
                    {"type": "string", "enum": ["Dot"]}
                ]}
            },
            "required": ["title"],
            "$defs": {
                "Person": {
                    "type": "object",
                    "properties": {"email": {"type": "string"}},
                    "required": ["email"]
                }
            }
        })
    }

    fn at(input: &serde_json::Value) -> Option<String> {
        first_mismatch(input, &schema())
    }

    #[test]
    fn valid_input_has_no_mismatch() {
        assert_eq!(
            at(&json!({"title": "a", "owner": null, "shape": "Dot"})),
            None
        );
        assert_eq!(
            at(&json!({"title": "a", "owner": {"email": "e"}, "pair": ["x", 2]})),
            None
        );
    }

    #[test]
    fn names_the_first_bad_value_in_input_order() {
        assert_eq!(
            at(&json!({"size": "big", "title": 3})).as_deref(),
            Some("$.size")
        );
        assert_eq!(
            at(&json!({"title": "a", "size": 300})).as_deref(),
            Some("$.size")
        );
        assert_eq!(
            at(&json!({"title": "a", "people": [{"email": "e"}, {"email": 3}]})).as_deref(),
            Some("$.people[1].email")
        );
        assert_eq!(
            at(&json!({"title": "a", "pair": ["x", "y"]})).as_deref(),
            Some("$.pair[1]")
        );
    }

    #[test]
    fn unknown_and_missing_keys() {
        assert_eq!(
            at(&json!({"title": "a", "colour": 1})).as_deref(),
            Some("$.colour")
        );
        assert_eq!(at(&json!({})).as_deref(), Some("$"));
        assert_eq!(
            at(&json!({"title": "a", "people": [{}]})).as_deref(),
            Some("$.people[0]")
        );
    }

    #[test]
    fn alternatives_report_the_branch_that_came_closest() {
        assert_eq!(
            at(&json!({"title": "a", "owner": {"email": 1}})).as_deref(),
            Some("$.owner.email")
        );
        assert_eq!(
            at(&json!({"title": "a", "shape": {"Circle": {"r": "big"}}})).as_deref(),
            Some("$.shape.Circle.r")
        );
    }

    #[test]
    fn hostile_depth_ends_the_walk() {
        let mut deep = json!(1);
        for _ in 0..1_000 {
            deep = json!([deep]);
        }
        let nested = json!({"type": "array", "items": {"$ref": "#/$defs/Nested"}, "$defs": {"Nested": {"type": "array", "items": {"$ref": "#/$defs/Nested"}}}});
        assert_eq!(first_mismatch(&deep, &nested), None);
    }
}
