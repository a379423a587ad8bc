//! The constraints of a tool's schema that parsing into its type does not
//! check: ranges, lengths, patterns, item counts, unique items, formats, and
//! closed nested objects.
//! Found and compiled once per definition; checked after every parse of a
//! tool that has any.

use serde_json::{Map, Value};

/// Keywords whose presence means a check after parsing.
const CHECKED: &[&str] = &[
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// String formats checked at parse time; others (and numeric formats,
/// which the types enforce) are left to the model.
const FORMATS: &[&str] = &["date", "date-time", "time", "email", "uuid", "ipv4", "ipv6"];

/// A schema's compiled constraints.
#[derive(Debug, Clone)]
pub(crate) struct Constraints {
    /// Each `pattern` of the schema, compiled.
    patterns: Vec<(String, regex_lite::Regex)>,
}

impl PartialEq for Constraints {
    fn eq(&self, other: &Self) -> bool {
        self.patterns.len() == other.patterns.len()
            && self
                .patterns
                .iter()
                .zip(&other.patterns)
                .all(|(a, b)| a.0 == b.0)
    }
}

impl Constraints {
    /// The constraints of `schema`, or `None` when it has none beyond what
    /// its types say (the common case: nothing to check after parsing).
    pub(crate) fn of(schema: &Value) -> Option<Self> {
        let mut found = false;
        let mut patterns = Vec::new();
        scan(schema, &mut found, &mut patterns, 0);
        found.then_some(Self { patterns })
    }

    /// The compiled `pattern`; `None` for one the engine cannot compile,
    /// which is then not checked.
    pub(crate) fn pattern(&self, pattern: &str) -> Option<&regex_lite::Regex> {
        self.patterns
            .iter()
            .find(|(p, _)| p == pattern)
            .map(|(_, regex)| regex)
    }
}

fn scan(
    node: &Value,
    found: &mut bool,
    patterns: &mut Vec<(String, regex_lite::Regex)>,
    depth: usize,
) {
    if depth > 128 {
        return;
    }
    match node {
        Value::Object(map) => {
            // A closed object below the root: a nested type that does not
            // deny unknown fields itself would drop them silently.
            let closed_below_root =
                depth > 0 && map.get("additionalProperties") == Some(&Value::Bool(false));
            if constrains(map) || closed_below_root {
                *found = true;
            }
            if let Some(pattern) = map.get("pattern").and_then(Value::as_str)
                && !patterns.iter().any(|(p, _)| p == pattern)
                && let Ok(regex) = regex_lite::Regex::new(pattern)
            {
                patterns.push((pattern.to_owned(), regex));
            }
            for value in map.values() {
                scan(value, found, patterns, depth + 1);
            }
        }
        Value::Array(items) => {
            for item in items {
                scan(item, found, patterns, depth + 1);
            }
        }
        _ => {}
    }
}

/// Whether this schema node asks for a check its type does not make.
fn constrains(map: &Map<String, Value>) -> bool {
    CHECKED.iter().any(|k| map.contains_key(*k))
        || map
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| FORMATS.contains(&f))
        || ["minimum", "maximum"]
            .iter()
            .any(|k| map.contains_key(*k) && !only_implied(map, k))
}

/// Whether `minimum`/`maximum` only restate the integer format (`uint8`
/// brings 0 and 255), which parsing into the type enforces.
fn only_implied(schema: &Map<String, Value>, key: &str) -> bool {
    let format = schema.get("format").and_then(Value::as_str);
    let bound = schema.get(key).and_then(Value::as_f64);
    match (format.and_then(implied_bound), bound) {
        (Some((min, max)), Some(bound)) => {
            (key == "minimum" && bound <= min) || (key == "maximum" && bound >= max)
        }
        _ => false,
    }
}

/// The range an integer format allows.
#[allow(
    clippy::cast_precision_loss,
    reason = "bounds compared as JSON numbers are"
)]
fn implied_bound(format: &str) -> Option<(f64, f64)> {
    Some(match format {
        "uint8" => (0.0, f64::from(u8::MAX)),
        "uint16" => (0.0, f64::from(u16::MAX)),
        "uint32" => (0.0, f64::from(u32::MAX)),
        "uint64" | "uint" | "uint128" => (0.0, u64::MAX as f64),
        "int8" => (f64::from(i8::MIN), f64::from(i8::MAX)),
        "int16" => (f64::from(i16::MIN), f64::from(i16::MAX)),
        "int32" => (f64::from(i32::MIN), f64::from(i32::MAX)),
        "int64" | "int" | "int128" => (i64::MIN as f64, i64::MAX as f64),
        _ => return None,
    })
}

/// What is wrong with `value` against the constraints of `schema`, in
/// words for the model; `None` when it keeps them all.
pub(crate) fn violation(
    schema: &Map<String, Value>,
    value: &Value,
    constraints: Option<&Constraints>,
) -> Option<String> {
    match value {
        Value::Number(n) => number_violation(schema, n),
        Value::String(text) => string_violation(schema, text, constraints),
        Value::Array(items) => {
            count_violation(schema, items.len(), "minItems", "maxItems", "items")
                .or_else(|| unique_violation(schema, items))
        }
        Value::Object(object) => count_violation(
            schema,
            object.len(),
            "minProperties",
            "maxProperties",
            "keys",
        ),
        _ => None,
    }
}

fn number_violation(schema: &Map<String, Value>, n: &serde_json::Number) -> Option<String> {
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    let value = n.as_f64()?;
    if let Some(min) = bound("minimum")
        && value < min
    {
        return Some(format!("{n} is below the minimum {}", show(min)));
    }
    if let Some(max) = bound("maximum")
        && value > max
    {
        return Some(format!("{n} is above the maximum {}", show(max)));
    }
    if let Some(min) = bound("exclusiveMinimum")
        && value <= min
    {
        return Some(format!("{n} must be greater than {}", show(min)));
    }
    if let Some(max) = bound("exclusiveMaximum")
        && value >= max
    {
        return Some(format!("{n} must be less than {}", show(max)));
    }
    if let Some(step) = bound("multipleOf")
        && step > 0.0
        && ((value / step).round() * step - value).abs() > f64::EPSILON * value.abs().max(1.0)
    {
        return Some(format!("{n} is not a multiple of {}", show(step)));
    }
    None
}

fn string_violation(
    schema: &Map<String, Value>,
    text: &str,
    constraints: Option<&Constraints>,
) -> Option<String> {
    let length = text.chars().count();
    if let Some(found) = count_violation(schema, length, "minLength", "maxLength", "characters") {
        return Some(found);
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
        && let Some(regex) = constraints.and_then(|c| c.pattern(pattern))
        && !regex.is_match(text)
    {
        return Some(format!("does not match the pattern `{pattern}`"));
    }
    if let Some(format) = schema.get("format").and_then(Value::as_str)
        && !format_ok(format, text)
    {
        return Some(format!("is not a valid `{format}`"));
    }
    None
}

/// A length or count against `min`/`max` of `schema`.
fn count_violation(
    schema: &Map<String, Value>,
    count: usize,
    min: &str,
    max: &str,
    unit: &str,
) -> Option<String> {
    let limit = |key: &str| {
        schema
            .get(key)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    let counted = if count == 1 {
        unit.trim_end_matches('s')
    } else {
        unit
    };
    if let Some(min) = limit(min)
        && count < min
    {
        return Some(format!("has {count} {counted}; at least {min} are needed"));
    }
    if let Some(max) = limit(max)
        && count > max
    {
        return Some(format!("has {count} {counted}; at most {max} are allowed"));
    }
    None
}

fn unique_violation(schema: &Map<String, Value>, items: &[Value]) -> Option<String> {
    if schema.get("uniqueItems") != Some(&Value::Bool(true)) {
        return None;
    }
    let repeated = first_repeat(items)?;
    Some(format!(
        "repeats item {repeated}; every item must be different"
    ))
}

/// The index of the first item equal to an earlier one. Pairwise for short
/// arrays; by their JSON text past that, so a long array costs linear time,
/// not quadratic (objects that differ only in key order then count as
/// different).
fn first_repeat(items: &[Value]) -> Option<usize> {
    const PAIRWISE: usize = 64;
    if items.len() <= PAIRWISE {
        return (1..items.len()).find(|&i| items[..i].contains(&items[i]));
    }
    let mut seen = std::collections::HashSet::with_capacity(items.len());
    items.iter().position(|item| !seen.insert(item.to_string()))
}

/// A bound as the author would write it: `1`, not `1.0`.
fn show(bound: f64) -> String {
    if bound.fract() == 0.0 && bound.abs() < 1e15 {
        format!("{bound:.0}")
    } else {
        bound.to_string()
    }
}

/// Whether `text` is a valid `format` (always, for a format not checked).
fn format_ok(format: &str, text: &str) -> bool {
    match format {
        "date" => is_date(text),
        "time" => is_time(text),
        "date-time" => text
            .split_once(['T', 't', ' '])
            .is_some_and(|(date, time)| is_date(date) && is_time(time)),
        "email" => text.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && !domain.is_empty() && !domain.contains('@') && !text.contains(' ')
        }),
        "uuid" => is_uuid(text),
        "ipv4" => text.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<std::net::Ipv6Addr>().is_ok(),
        _ => true,
    }
}

fn digits(text: &str, n: usize) -> bool {
    text.len() == n && text.bytes().all(|b| b.is_ascii_digit())
}

/// `YYYY-MM-DD` with a month and day that can exist.
fn is_date(text: &str) -> bool {
    let mut parts = text.split('-');
    let (Some(y), Some(m), Some(d), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    digits(y, 4)
        && digits(m, 2)
        && digits(d, 2)
        && (1..=12).contains(&m.parse::<u8>().unwrap_or(0))
        && (1..=31).contains(&d.parse::<u8>().unwrap_or(0))
}

/// `HH:MM:SS` with optional fraction and an offset (`Z`, `+02:00`).
fn is_time(text: &str) -> bool {
    let (clock, _offset) = match text.find(['Z', 'z', '+', '-']) {
        Some(at) => text.split_at(at),
        None => (text, ""),
    };
    let clock = clock.split('.').next().unwrap_or_default();
    let mut parts = clock.split(':');
    let (Some(h), Some(m), s) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    digits(h, 2)
        && digits(m, 2)
        && s.is_none_or(|s| digits(s, 2))
        && h.parse::<u8>().is_ok_and(|h| h < 24)
        && m.parse::<u8>().is_ok_and(|m| m < 60)
}

fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Constraints, format_ok};

    #[test]
    fn types_alone_ask_for_no_check() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
            "s": {"type": "string"},
            "x": {"type": "integer", "format": "int64"}
        }});
        assert!(Constraints::of(&schema).is_none());
    }

    #[test]
    fn formats() {
        assert!(format_ok("date-time", "2026-11-30T12:00:00Z"));
        assert!(format_ok("date-time", "2026-11-30T12:00:00.5+01:00"));
        assert!(!format_ok("date-time", "yesterday"));
        assert!(format_ok("uuid", "67e55044-10b1-426f-9247-bb680e5fe0c8"));
        assert!(!format_ok("uuid", "67e55044"));
        assert!(format_ok("email", "a@b.c") && !format_ok("email", "a b@c"));
        assert!(format_ok("ipv4", "10.0.0.1") && !format_ok("ipv4", "10.0.0"));
        assert!(format_ok("uri", "anything"));
    }
}
