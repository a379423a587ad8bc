//! Input against its tool's JSON Schema, in one walk with two uses.
//!
//! - After a failed parse: every value in the input that departs from the
//!   schema (a type, a tag, a missing or unknown key, a bound), each with
//!   its own path and what is wrong, so the model can fix them all in one
//!   retry. Generated tools parse valid input straight into their argument
//!   type; only a failure is walked. Walking the schema is one function for
//!   every tool, where tracking the path while parsing would compile each
//!   argument type's parser twice.
//! - After a successful parse: what the parser does not check. Constraints
//!   (ranges, lengths, patterns, item counts, unique items, formats), and
//!   unknown keys in nested objects the schema closes (a nested type that
//!   does not deny unknown fields would drop them silently). Only for
//!   schemas that have any ([`Constraints::of`]); a tool without pays one
//!   `Option` check.

use serde_json::{Map, Value};

use crate::error::{ArgumentError, ArgumentFault};
use crate::schema::constraints::{Constraints, violation};

/// Most faults one answer lists; the rest are counted. Hostile input with
/// thousands of faults gets a bounded answer.
pub(crate) const MAX_FAULTS: usize = 16;

/// Every departure of `input` from `schema`, or `None` when the walk finds
/// nothing wrong (the parser refused something the schema does not
/// describe).
pub(crate) fn departures(input: &Value, schema: &Value) -> Option<ArgumentError> {
    let walker = Walker::new(schema, Mode::Locate, None);
    let mut found = Faults::default();
    walker.walk(schema, input, &mut Path::root(), &mut found);
    found.into_error()
}

/// Every value of a parsed `input` outside a constraint of `schema`, and
/// every key the schema does not accept where it closes an object.
/// Checks parsed `input` against the constraints of `schema`.
pub(crate) fn check(
    constraints: &Constraints,
    input: &Value,
    schema: &Value,
) -> Result<(), ArgumentError> {
    match violations(input, schema, constraints) {
        None => Ok(()),
        Some(error) => Err(error),
    }
}

pub(crate) fn violations(
    input: &Value,
    schema: &Value,
    constraints: &Constraints,
) -> Option<ArgumentError> {
    let walker = Walker::new(schema, Mode::Validate, Some(constraints));
    let mut found = Faults::default();
    walker.walk(schema, input, &mut Path::root(), &mut found);
    // The parser took the input, so a shape the walk does not follow (an
    // alternative it could not tell apart) is not a violation.
    found.retain_checked();
    found.into_error()
}

/// Deepest a walk goes: hostile input cannot overflow the stack, and
/// recursive schemas end.
const MAX_DEPTH: usize = 128;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Any departure counts.
    Locate,
    /// Only what the parser does not check counts; shapes only pick among
    /// alternatives.
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

    fn render(&self) -> String {
        let mut out = String::from("$");
        for segment in &self.segments {
            match segment {
                Segment::Key(key) => super::json_path::push_key(&mut out, key),
                Segment::Index(index) => super::json_path::push_index(&mut out, *index),
            }
        }
        out
    }

    fn with(&self, segment: Segment) -> Self {
        let mut path = self.clone();
        path.segments.push(segment);
        path
    }
}

/// What kind of departure a fault is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The value's type.
    Type,
    /// The value's structure: a missing key, a value where none is accepted.
    Shape,
    /// Only a tag (`const` or `enum`): among alternatives, the branch that
    /// failed on a tag is the one the input was not meant for.
    Tag,
    /// A key the schema's closed object does not declare.
    Unknown,
    /// A constraint.
    Bound,
}

struct Fault {
    path: Path,
    kind: Kind,
    message: String,
}

/// The faults of one walk: the first [`MAX_FAULTS`] kept, the rest counted.
#[derive(Default)]
struct Faults {
    listed: Vec<Fault>,
    omitted: usize,
}

impl Faults {
    fn push(&mut self, path: &Path, kind: Kind, message: String) {
        if self.listed.len() < MAX_FAULTS {
            self.listed.push(Fault {
                path: path.clone(),
                kind,
                message,
            });
        } else {
            self.omitted += 1;
        }
    }

    fn is_empty(&self) -> bool {
        self.listed.is_empty() && self.omitted == 0
    }

    fn append(&mut self, other: Self) {
        for fault in other.listed {
            if self.listed.len() < MAX_FAULTS {
                self.listed.push(fault);
            } else {
                self.omitted += 1;
            }
        }
        self.omitted += other.omitted;
    }

    fn has_shape(&self) -> bool {
        self.listed
            .iter()
            .any(|f| matches!(f.kind, Kind::Type | Kind::Shape | Kind::Tag))
    }

    /// How close the input came to matching a branch whose value is at
    /// depth `root`: deeper is closer. At the value itself, a wrong type is
    /// farther than a wrong tag; below it, a wrong tag (a discriminator key)
    /// says the input was meant for another branch. Fewer faults break a tie.
    fn closeness(&self, root: usize) -> (usize, u8, std::cmp::Reverse<usize>) {
        let deepest = self
            .listed
            .iter()
            .map(|f| {
                let depth = f.path.segments.len();
                let rank = match (depth == root, f.kind) {
                    (true, Kind::Type) | (false, Kind::Tag) => 0,
                    (true, Kind::Tag) => 1,
                    _ => 2,
                };
                (depth, rank)
            })
            .max()
            .unwrap_or_default();
        (
            deepest.0,
            deepest.1,
            std::cmp::Reverse(self.listed.len() + self.omitted),
        )
    }

    fn retain_checked(&mut self) {
        self.listed
            .retain(|f| matches!(f.kind, Kind::Unknown | Kind::Bound));
    }

    fn into_error(self) -> Option<ArgumentError> {
        let faults = self
            .listed
            .into_iter()
            .map(|f| ArgumentFault::new(f.path.render(), f.message))
            .collect();
        ArgumentError::from_faults(faults).map(|error| error.with_omitted(self.omitted))
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

    /// Adds every departure of `value` (at `path`) from `schema` to `out`.
    fn walk(&self, schema: &Value, value: &Value, path: &mut Path, out: &mut Faults) {
        if self.depth > MAX_DEPTH {
            return;
        }
        let schema = match schema {
            Value::Bool(false) => {
                out.push(path, Kind::Shape, "no value is accepted here".to_owned());
                return;
            }
            Value::Object(schema) => schema,
            // `true`, or nothing a schema can be: anything goes.
            _ => return,
        };
        let deeper = self.deeper();
        if let Some(target) = schema.get("$ref").and_then(Value::as_str)
            && let Some(target) = self.resolve(target)
        {
            let mut below = Faults::default();
            deeper.walk(target, value, path, &mut below);
            if !below.is_empty() {
                out.append(below);
                return;
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = schema.get(key) {
                if let Some(best) = deeper.best_branch(branches, value, path) {
                    out.append(best);
                }
                return;
            }
        }
        if let Some(Value::Array(all)) = schema.get("allOf") {
            let mut below = Faults::default();
            for branch in all {
                deeper.walk(branch, value, path, &mut below);
            }
            if !below.is_empty() {
                out.append(below);
                return;
            }
        }
        if let Value::Array(items) = value
            && !type_allows(schema.get("type"), value)
            && type_allows(schema.get("type"), &Value::Object(Map::new()))
        {
            // The parser reads a struct from an array too, field by field.
            let mut fields = Faults::default();
            deeper.walk_fields_in_order(schema, items, path, &mut fields);
            if fields.is_empty() {
                out.push(path, Kind::Type, mismatch(schema.get("type"), value));
            } else {
                out.append(fields);
            }
            return;
        }
        if !type_allows(schema.get("type"), value) {
            out.push(path, Kind::Type, mismatch(schema.get("type"), value));
            return;
        }
        if let Some(message) = unlisted(schema, value) {
            out.push(path, Kind::Tag, message);
            return;
        }
        if let Some(message) = violation(schema, value, self.constraints) {
            out.push(path, Kind::Bound, message);
        }
        match value {
            Value::Object(object) => deeper.walk_object(schema, object, path, out),
            Value::Array(items) => deeper.walk_array(schema, items, path, out),
            _ => {}
        }
    }

    /// The schema a local `$ref` (`#/$defs/Name`) names.
    fn resolve(&self, target: &str) -> Option<&'s Value> {
        let name = target.strip_prefix("#/$defs/")?;
        self.defs?.get(name)
    }

    /// `None` when one branch matches. Else, to locate: the faults of the
    /// branch the input came closest to; to validate: those of the first
    /// branch whose shape the value has (the one the parser took).
    fn best_branch(&self, branches: &[Value], value: &Value, path: &mut Path) -> Option<Faults> {
        let mut best: Option<Faults> = None;
        for branch in branches {
            let mut found = Faults::default();
            self.walk(branch, value, path, &mut found);
            if found.is_empty() {
                return None;
            }
            let better = match (&best, self.mode) {
                (None, _) => true,
                (Some(b), Mode::Locate) => {
                    let root = path.segments.len();
                    found.closeness(root) > b.closeness(root)
                }
                (Some(b), Mode::Validate) => b.has_shape() && !found.has_shape(),
            };
            if better {
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
        out: &mut Faults,
    ) {
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties");
        // In the input's order, as the parser reads it.
        for (key, value) in object {
            let child = match properties.and_then(|p| p.get(key)) {
                Some(child) => child,
                None => match additional {
                    Some(Value::Bool(false)) => {
                        let at = path.with(Segment::Key(key.clone()));
                        out.push(&at, Kind::Unknown, unknown_key(key, properties));
                        continue;
                    }
                    Some(child @ Value::Object(_)) => child,
                    _ => continue,
                },
            };
            path.segments.push(Segment::Key(key.clone()));
            self.walk(child, value, path, out);
            path.segments.pop();
        }
        let required = schema.get("required").and_then(Value::as_array);
        for key in required.into_iter().flatten().filter_map(Value::as_str) {
            if !object.contains_key(key) {
                out.push(path, Kind::Shape, format!("missing field `{key}`"));
            }
        }
    }

    /// An array given where a struct is expected: its items against the
    /// struct's properties, in declaration order.
    fn walk_fields_in_order(
        &self,
        schema: &Map<String, Value>,
        items: &[Value],
        path: &mut Path,
        out: &mut Faults,
    ) {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return;
        };
        for (index, (item, child)) in items.iter().zip(properties.values()).enumerate() {
            path.segments.push(Segment::Index(index));
            self.walk(child, item, path, out);
            path.segments.pop();
        }
    }

    fn walk_array(
        &self,
        schema: &Map<String, Value>,
        items: &[Value],
        path: &mut Path,
        out: &mut Faults,
    ) {
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
            self.walk(child, item, path, out);
            path.segments.pop();
        }
    }
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

/// What was expected where a value of the wrong type was found.
fn mismatch(types: Option<&Value>, value: &Value) -> String {
    let named: Vec<&str> = match types {
        Some(Value::String(name)) => vec![type_name(name)],
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .map(type_name)
            .collect(),
        _ => Vec::new(),
    };
    let expected = match named.as_slice() {
        [] => "another value".to_owned(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    };
    format!("expected {expected}, found {}", shown(value))
}

fn type_name(name: &str) -> &str {
    match name {
        "null" => "null",
        "boolean" => "a boolean",
        "string" => "a string",
        "array" => "an array",
        "object" => "an object",
        "number" => "a number",
        "integer" => "an integer",
        other => other,
    }
}

/// A value as a fault's message quotes it: scalars shown (cut), containers named.
fn shown(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("the number {n}"),
        Value::String(text) => format!("the string {}", quoted(text)),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// Longest part of the input a message quotes.
const QUOTED_CHARS: usize = 40;

/// `text` cut to [`QUOTED_CHARS`], as a JSON string.
fn quoted(text: &str) -> String {
    Value::String(crate::text::clip(text, QUOTED_CHARS).into_owned()).to_string()
}

/// What is wrong with a value outside the schema's `enum` or `const`.
fn unlisted(schema: &Map<String, Value>, value: &Value) -> Option<String> {
    if let Some(Value::Array(options)) = schema.get("enum")
        && !options.contains(value)
    {
        const SHOWN: usize = 12;
        let mut listed: Vec<String> = options.iter().take(SHOWN).map(literal).collect();
        if options.len() > SHOWN {
            listed.push(format!("… ({} in all)", options.len()));
        }
        return Some(format!(
            "expected one of {}, found {}",
            listed.join(", "),
            literal(value)
        ));
    }
    match schema.get("const") {
        Some(expected) if expected != value => Some(format!(
            "expected {}, found {}",
            literal(expected),
            literal(value)
        )),
        _ => None,
    }
}

/// A value as JSON in backticks, cut.
fn literal(value: &Value) -> String {
    match value {
        Value::String(text) => format!("`{}`", quoted(text)),
        Value::Array(_) | Value::Object(_) => shown(value),
        scalar => format!("`{scalar}`"),
    }
}

/// An unknown key, and the keys the object accepts.
pub(crate) fn unknown_key(key: &str, properties: Option<&Map<String, Value>>) -> String {
    const SHOWN: usize = 24;
    let known: Vec<String> = properties
        .into_iter()
        .flat_map(Map::keys)
        .take(SHOWN)
        .map(|k| format!("`{k}`"))
        .collect();
    let key = crate::text::clip(key, QUOTED_CHARS);
    if known.is_empty() {
        return format!("unknown field `{key}`; this object takes no fields");
    }
    let more = properties.map_or(0, Map::len).saturating_sub(SHOWN);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("unknown field `{key}`, expected {}{tail}", known.join(", "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::departures;
    use crate::schema::constraints::Constraints;

    #[test]
    fn reports_the_first_value_outside_a_bound() {
        let schema = json!({"type": "object", "properties": {
            "sides": {"type": "integer", "format": "uint8", "minimum": 1, "maximum": 100},
            "name": {"type": "string", "minLength": 2, "pattern": "^[a-z]+$"},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 3},
            "day": {"type": ["string", "null"], "format": "date"}
        }});
        let constraints = Constraints::of(&schema).unwrap();
        let check = |input: serde_json::Value| {
            super::check(&constraints, &input, &schema)
                .map_err(|e| format!("{} {}", e.path(), e.message()))
        };
        assert_eq!(
            check(json!({"sides": 6, "name": "ab", "tags": ["a"], "day": null})),
            Ok(())
        );
        assert_eq!(
            check(json!({"sides": 0})),
            Err("$.sides 0 is below the minimum 1".to_owned())
        );
        assert_eq!(
            check(json!({"sides": 1000})),
            Err("$.sides 1000 is above the maximum 100".to_owned())
        );
        assert!(
            check(json!({"name": "a"}))
                .unwrap_err()
                .contains("at least 2")
        );
        assert!(
            check(json!({"name": "AB"}))
                .unwrap_err()
                .contains("pattern")
        );
        assert!(
            check(json!({"tags": ["a", "a"]}))
                .unwrap_err()
                .starts_with("$.tags repeats item 1")
        );
        assert!(
            check(json!({"tags": ["a", "b", "c", "d"]}))
                .unwrap_err()
                .contains("at most 3")
        );
        assert!(
            check(json!({"day": "2026-13-01"}))
                .unwrap_err()
                .contains("`date`")
        );
    }

    #[test]
    fn a_long_array_is_checked_for_repeats_in_linear_time() {
        let schema = json!({"type": "array", "uniqueItems": true});
        let constraints = Constraints::of(&schema).unwrap();
        let mut items: Vec<serde_json::Value> = (0..200_000).map(|i| json!(i)).collect();
        assert!(super::check(&constraints, &json!(items.clone()), &schema).is_ok());
        items.push(json!(7));
        let err = super::check(&constraints, &json!(items), &schema).unwrap_err();
        assert!(err.message().contains("repeats item 200000"), "{err}");
    }

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

    /// Each fault as `path: message`.
    fn faults(input: &serde_json::Value) -> Vec<String> {
        departures(input, &schema()).map_or_else(Vec::new, |error| {
            error
                .faults()
                .iter()
                .map(|f| format!("{}: {}", f.path(), f.message()))
                .collect()
        })
    }

    fn paths(input: &serde_json::Value) -> Vec<String> {
        faults(input)
            .into_iter()
            .map(|f| f.split(": ").next().unwrap_or_default().to_owned())
            .collect()
    }

    #[test]
    fn valid_input_has_no_departure() {
        assert!(faults(&json!({"title": "a", "owner": null, "shape": "Dot"})).is_empty());
        assert!(
            faults(&json!({"title": "a", "owner": {"email": "e"}, "pair": ["x", 2]})).is_empty()
        );
    }

    #[test]
    fn every_bad_value_is_named_in_input_order() {
        assert_eq!(
            faults(&json!({"size": "big", "title": 3})),
            [
                "$.size: expected an integer, found the string \"big\"",
                "$.title: expected a string, found the number 3"
            ]
        );
        assert_eq!(
            faults(&json!({"title": "a", "size": 300})),
            ["$.size: 300 is above the maximum 255"]
        );
        assert_eq!(
            paths(&json!({"title": "a", "people": [{"email": "e"}, {"email": 3}]})),
            ["$.people[1].email"]
        );
        assert_eq!(
            paths(&json!({"title": "a", "pair": ["x", "y"]})),
            ["$.pair[1]"]
        );
    }

    #[test]
    fn unknown_and_missing_keys_each_have_their_own_fault() {
        assert_eq!(
            faults(&json!({"title": "a", "colour": 1, "tint": 2})),
            [
                "$.colour: unknown field `colour`, expected `title`, `size`, `owner`, `people`, `pair`, `shape`",
                "$.tint: unknown field `tint`, expected `title`, `size`, `owner`, `people`, `pair`, `shape`"
            ]
        );
        assert_eq!(faults(&json!({})), ["$: missing field `title`"]);
        assert_eq!(
            faults(&json!({"title": "a", "people": [{}, {"email": 1}]})),
            [
                "$.people[0]: missing field `email`",
                "$.people[1].email: expected a string, found the number 1"
            ]
        );
    }

    #[test]
    fn alternatives_report_the_branch_that_came_closest() {
        assert_eq!(
            paths(&json!({"title": "a", "owner": {"email": 1}})),
            ["$.owner.email"]
        );
        assert_eq!(
            paths(&json!({"title": "a", "shape": {"Circle": {"r": "big"}}})),
            ["$.shape.Circle.r"]
        );
        assert_eq!(
            faults(&json!({"title": "a", "shape": "Square"})),
            ["$.shape: expected one of `\"Dot\"`, found `\"Square\"`"]
        );
    }

    #[test]
    fn hostile_input_gets_a_bounded_answer() {
        let many: serde_json::Map<String, serde_json::Value> =
            (0..10_000).map(|i| (format!("k{i}"), json!(i))).collect();
        let mut input = serde_json::Value::Object(many);
        input["title"] = json!("a");
        let error = departures(&input, &schema()).expect("unknown keys");
        assert_eq!(error.faults().len(), super::MAX_FAULTS);
        assert_eq!(error.omitted(), 10_000 - super::MAX_FAULTS);
        assert!(error.to_string().starts_with("10000 problems:"), "{error}");

        let mut deep = json!(1);
        for _ in 0..1_000 {
            deep = json!([deep]);
        }
        let nested = json!({"type": "array", "items": {"$ref": "#/$defs/Nested"}, "$defs": {"Nested": {"type": "array", "items": {"$ref": "#/$defs/Nested"}}}});
        assert!(departures(&deep, &nested).is_none());
    }
}
