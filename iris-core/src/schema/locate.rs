//! Input against its tool's JSON Schema, in one walk with two uses.
//!
//! - After a failed parse, where the input departs from the schema: the
//!   JSON path of the first value that cannot match. Generated tools parse
//!   valid input straight into their argument type; only a failure is walked,
//!   to tell the model where the problem is (serde's message says what it
//!   is). Walking the schema is one function for every tool, where tracking
//!   the path while parsing would compile each argument type's parser twice.
//! - After a successful parse, the constraints serde does not check (ranges,
//!   lengths, patterns, item counts, unique items, formats): the first value
//!   outside one, with the bound. Only for schemas that have any
//!   ([`Constraints::of`]); a tool without pays one `Option` check.

use serde_json::{Map, Value};

use crate::schema::constraints::{Constraints, violation};

/// The JSON path (`$.items[2].name`) of the first value in `input` that
/// `schema` refuses, or `None` when the walk finds nothing wrong (the
/// parser refused something the schema does not describe).
pub(crate) fn first_mismatch(input: &Value, schema: &Value) -> Option<String> {
    let walker = Walker::new(schema, Mode::Locate, None);
    walker
        .walk(schema, input, &mut Path::root())
        .map(|found| found.path.render())
}

/// The first value of a parsed `input` outside a constraint of `schema`:
/// its path and what is wrong with it.
pub(crate) fn first_violation(
    input: &Value,
    schema: &Value,
    constraints: &Constraints,
) -> Option<(String, String)> {
    let walker = Walker::new(schema, Mode::Validate, Some(constraints));
    match walker.walk(schema, input, &mut Path::root()) {
        Some(Found {
            path,
            kind: Kind::Bound(message),
        }) => Some((path.render(), message)),
        // The parser took it, so a shape the walk does not follow (an
        // alternative it could not tell apart) is not a violation.
        _ => None,
    }
}

/// Deepest a walk goes: hostile input cannot overflow the stack, and
/// recursive schemas end.
const MAX_DEPTH: usize = 128;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Any departure counts.
    Locate,
    /// Only constraints count; shapes only pick among alternatives.
    Validate,
}

struct Walker<'s> {
    defs: Option<&'s Map<String, Value>>,
    mode: Mode,
    constraints: Option<&'s Constraints>,
    depth: usize,
}

/// A path from the root, as segments.
#[derive(Clone)]
struct Path {
    segments: Vec<Segment>,
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

/// What was wrong where the walk stopped.
enum Kind {
    /// The value's type or structure (a missing or unknown key).
    Shape,
    /// Only a tag (`const` or `enum`): among alternatives, the branch that
    /// failed on a tag is the one the input was not meant for.
    Tag,
    /// A constraint, with what the model reads about it.
    Bound(String),
}

struct Found {
    path: Path,
    kind: Kind,
}

impl Found {
    fn at(path: &Path, kind: Kind) -> Self {
        Self {
            path: path.clone(),
            kind,
        }
    }

    /// How close the input came to matching: deeper is closer, and a
    /// failure past the tag is closer than one on it.
    fn closeness(&self) -> (usize, bool) {
        (self.path.segments.len(), !matches!(self.kind, Kind::Tag))
    }
}

impl<'s> Walker<'s> {
    fn new(schema: &'s Value, mode: Mode, constraints: Option<&'s Constraints>) -> Self {
        Self {
            defs: schema.get("$defs").and_then(Value::as_object),
            mode,
            constraints,
            depth: 0,
        }
    }

    fn deeper(&self) -> Self {
        Self {
            defs: self.defs,
            mode: self.mode,
            constraints: self.constraints,
            depth: self.depth + 1,
        }
    }

    /// The first departure under `path`, or `None`.
    fn walk(&self, schema: &Value, value: &Value, path: &mut Path) -> Option<Found> {
        if self.depth > MAX_DEPTH {
            return None;
        }
        let schema = match schema {
            Value::Bool(false) => return Some(Found::at(path, Kind::Shape)),
            Value::Object(schema) => schema,
            // `true`, or nothing a schema can be: anything goes.
            _ => return None,
        };
        let deeper = self.deeper();
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
                    .unwrap_or_else(|| Found::at(path, Kind::Shape)),
            );
        }
        if !type_allows(schema.get("type"), value) {
            return Some(Found::at(path, Kind::Shape));
        }
        if !listed(schema, value) {
            return Some(Found::at(path, Kind::Tag));
        }
        if let Some(message) = violation(schema, value, self.constraints) {
            return Some(Found::at(path, Kind::Bound(message)));
        }
        match value {
            Value::Object(object) => deeper.walk_object(schema, object, path),
            Value::Array(items) => deeper.walk_array(schema, items, path),
            _ => None,
        }
    }

    /// The schema a local `$ref` (`#/$defs/Name`) names.
    fn resolve(&self, target: &str) -> Option<&'s Value> {
        let name = target.strip_prefix("#/$defs/")?;
        self.defs?.get(name)
    }

    /// `None` when one branch matches. Else, to locate: the deepest
    /// departure, where the input came closest to a branch; to validate: a
    /// constraint of a branch whose shape the value has.
    fn best_branch(&self, branches: &[Value], value: &Value, path: &mut Path) -> Option<Found> {
        let mut best: Option<Found> = None;
        for branch in branches {
            let found = self.walk(branch, value, path)?;
            let better = match (&best, self.mode) {
                (None, _) => true,
                (Some(b), Mode::Locate) => found.closeness() > b.closeness(),
                (Some(b), Mode::Validate) => {
                    matches!(found.kind, Kind::Bound(_)) && !matches!(b.kind, Kind::Bound(_))
                }
            };
            if better {
                best = Some(found);
            }
        }
        best
    }

    /// Whether a departure below this node ends the walk. To validate, a
    /// value whose shape the walk does not follow is the parser's business
    /// (it took the input), and its siblings are still checked.
    fn ends(&self, found: &Found) -> bool {
        self.mode == Mode::Locate || !matches!(found.kind, Kind::Shape)
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
                        let found = Found::at(&with(path, Segment::Key(key.clone())), Kind::Shape);
                        if self.ends(&found) {
                            return Some(found);
                        }
                        continue;
                    }
                    Some(child @ Value::Object(_)) => child,
                    _ => continue,
                },
            };
            path.segments.push(Segment::Key(key.clone()));
            let found = self.walk(child, value, path);
            path.segments.pop();
            if let Some(found) = found
                && self.ends(&found)
            {
                return Some(found);
            }
        }
        let missing = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|key| !object.contains_key(key));
        (missing && self.mode == Mode::Locate).then(|| Found::at(path, Kind::Shape))
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
            if let Some(found) = found
                && self.ends(&found)
            {
                return Some(found);
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
