//! `iris diff LOCKFILE`: what changed in the catalog since it was locked,
//! each change classified: breaking (a caller written against the old
//! catalog now fails), compatible, or cosmetic (the text a model chooses
//! by changed, so selection may too).

mod output;

use clap::{Arg, Command};
use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::catalog::Catalog;
use crate::exit::Exit;
use crate::output::Out;

/// How much a change matters to callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    Cosmetic,
    Compatible,
    Breaking,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Change {
    pub(crate) tool: String,
    pub(crate) kind: Kind,
    pub(crate) what: String,
}

pub(crate) fn change(tool: &str, kind: Kind, what: String) -> Change {
    Change {
        tool: tool.to_owned(),
        kind,
        what,
    }
}

/// The changes from the lock `before` to the lock `after`, tool by tool.
pub(crate) fn changes(before: &Value, after: &Value) -> Vec<Change> {
    let tools = |lock: &Value| -> Vec<(String, Value)> {
        lock["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| Some((t["name"].as_str()?.to_owned(), t.clone())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (old, new) = (tools(before), tools(after));
    let mut found = Vec::new();
    for (name, was) in &old {
        match new.iter().find(|(n, _)| n == name) {
            None => found.push(change(name, Kind::Breaking, "removed".to_owned())),
            Some((_, now)) => compare_tool(name, was, now, &mut found),
        }
    }
    for (name, _) in &new {
        if !old.iter().any(|(n, _)| n == name) {
            found.push(change(name, Kind::Compatible, "added".to_owned()));
        }
    }
    found
}

fn compare_tool(name: &str, was: &Value, now: &Value, found: &mut Vec<Change>) {
    if was["hash"] == now["hash"] && was["hash"].is_string() {
        return;
    }
    if was["description"] != now["description"] {
        found.push(change(
            name,
            Kind::Cosmetic,
            "description changed (selection may change)".to_owned(),
        ));
    }
    let caps = |v: &Value| -> BTreeSet<String> {
        v["capabilities"]
            .as_array()
            .map(|c| {
                c.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (caps_was, caps_now) = (caps(was), caps(now));
    if caps_was != caps_now {
        // Losing `read_only`, or gaining `write`/`exec`, can turn an
        // allowed call into one that asks or is denied.
        let stricter = (caps_was.contains("read_only") && !caps_now.contains("read_only"))
            || caps_now
                .difference(&caps_was)
                .any(|c| c == "write" || c == "exec");
        found.push(change(
            name,
            if stricter {
                Kind::Breaking
            } else {
                Kind::Compatible
            },
            format!(
                "capabilities [{}] became [{}]{}",
                caps_was.into_iter().collect::<Vec<_>>().join(", "),
                caps_now.into_iter().collect::<Vec<_>>().join(", "),
                if stricter {
                    " (a permission policy may now ask for or refuse its calls)"
                } else {
                    ""
                }
            ),
        ));
    }
    compare_schema(name, "", &was["input_schema"], &now["input_schema"], found);
    output::compare(
        name,
        was.get("output_schema"),
        now.get("output_schema"),
        found,
    );
}

/// Compares two object schemas' properties, required lists and closure,
/// and each property's type and enum, recursing into nested objects.
fn compare_schema(tool: &str, at: &str, was: &Value, now: &Value, found: &mut Vec<Change>) {
    let empty = Map::new();
    let props = |s: &Value| {
        s.get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_else(|| empty.clone())
    };
    let (props_was, props_now) = (props(was), props(now));
    let (req_was, req_now) = (names(was, "required"), names(now, "required"));
    for (key, schema_was) in &props_was {
        let path = format!("{at}{key}");
        match props_now.get(key) {
            None => {
                let closed = now.get("additionalProperties") == Some(&Value::Bool(false));
                found.push(change(
                    tool,
                    if closed {
                        Kind::Breaking
                    } else {
                        Kind::Compatible
                    },
                    format!(
                        "parameter `{path}` removed{}",
                        if closed {
                            " (calls that pass it are now refused)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
            Some(schema_now) => {
                compare_property(tool, &path, schema_was, schema_now, found);
                if req_now.contains(key) && !req_was.contains(key) {
                    found.push(change(
                        tool,
                        Kind::Breaking,
                        format!("parameter `{path}` is now required"),
                    ));
                } else if req_was.contains(key) && !req_now.contains(key) {
                    found.push(change(
                        tool,
                        Kind::Compatible,
                        format!("parameter `{path}` is now optional"),
                    ));
                }
            }
        }
    }
    for key in props_now.keys().filter(|k| !props_was.contains_key(*k)) {
        let path = format!("{at}{key}");
        if req_now.contains(key) {
            found.push(change(
                tool,
                Kind::Breaking,
                format!("required parameter `{path}` added"),
            ));
        } else {
            found.push(change(
                tool,
                Kind::Compatible,
                format!("optional parameter `{path}` added"),
            ));
        }
    }
}

/// The types a schema admits (none named: any).
pub(super) fn types(schema: &Value) -> BTreeSet<String> {
    match schema.get("type") {
        Some(Value::String(t)) => BTreeSet::from([t.clone()]),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => BTreeSet::new(),
    }
}

/// The names a schema lists under `key` (`required`).
pub(super) fn names(schema: &Value, key: &str) -> BTreeSet<String> {
    schema
        .get(key)
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn compare_property(tool: &str, path: &str, was: &Value, now: &Value, found: &mut Vec<Change>) {
    let (types_was, types_now) = (types(was), types(now));
    if types_was != types_now && !types_was.is_empty() {
        // `integer` is within `number`: number → integer narrows.
        let accepts = |set: &BTreeSet<String>, t: &String| {
            set.is_empty() || set.contains(t) || (t == "integer" && set.contains("number"))
        };
        let narrowed = types_was.iter().any(|t| !accepts(&types_now, t));
        found.push(change(
            tool,
            if narrowed {
                Kind::Breaking
            } else {
                Kind::Compatible
            },
            format!(
                "parameter `{path}`: type {} became {}",
                json!(types_was),
                json!(types_now)
            ),
        ));
    }
    let values = |s: &Value| s.get("enum").and_then(Value::as_array).cloned();
    match (values(was), values(now)) {
        (Some(before), Some(after)) => {
            let removed: Vec<&Value> = before.iter().filter(|v| !after.contains(v)).collect();
            let added: Vec<&Value> = after.iter().filter(|v| !before.contains(v)).collect();
            if !removed.is_empty() {
                found.push(change(
                    tool,
                    Kind::Breaking,
                    format!(
                        "parameter `{path}`: enum value(s) {} removed",
                        json!(removed)
                    ),
                ));
            }
            if !added.is_empty() {
                found.push(change(
                    tool,
                    Kind::Compatible,
                    format!("parameter `{path}`: enum value(s) {} added", json!(added)),
                ));
            }
        }
        (None, Some(_)) => found.push(change(
            tool,
            Kind::Breaking,
            format!("parameter `{path}` now takes only listed values"),
        )),
        (Some(_), None) => found.push(change(
            tool,
            Kind::Compatible,
            format!("parameter `{path}` takes any value now"),
        )),
        (None, None) => {}
    }
    if was.get("description") != now.get("description") {
        found.push(change(
            tool,
            Kind::Cosmetic,
            format!("parameter `{path}`: description changed (selection and arguments may change)"),
        ));
    }
    if types_now.contains("object") || now.get("properties").is_some() {
        compare_schema(tool, &format!("{path}."), was, now, found);
    }
    if let (Some(items_was), Some(items_now)) = (was.get("items"), now.get("items")) {
        compare_property(tool, &format!("{path}[]"), items_was, items_now, found);
    }
}

pub(crate) fn run(catalog: &Catalog, lockfile: &Path, against: Option<&Path>, out: Out) -> Exit {
    let read = |path: &Path| -> Result<Value, String> {
        let program = crate::output::program();
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("`{}`: {e}", path.display()))?;
        let lock: Value = serde_json::from_str(&text).map_err(|e| {
            format!(
                "`{}` is not a lockfile ({e}); write one with `{program} lock`",
                path.display()
            )
        })?;
        if lock["tools"].is_array() {
            Ok(lock)
        } else {
            Err(format!(
                "`{}` has no `tools`; write a lockfile with `{program} lock`",
                path.display()
            ))
        }
    };
    let before = match read(lockfile) {
        Ok(lock) => lock,
        Err(why) => return out.fail(Exit::Usage, &why),
    };
    let after = match against {
        Some(path) => match read(path) {
            Ok(lock) => lock,
            Err(why) => return out.fail(Exit::Usage, &why),
        },
        None => super::lock::lock_of(catalog),
    };
    let found = changes(&before, &after);
    let count = |kind| found.iter().filter(|c| c.kind == kind).count();
    let breaking = count(Kind::Breaking);
    if out.json {
        out.json(json!({
            "changes": found,
            "summary": {"breaking": breaking, "compatible": count(Kind::Compatible), "cosmetic": count(Kind::Cosmetic)},
        }));
    } else {
        for c in &found {
            let kind = match c.kind {
                Kind::Breaking => "breaking  ",
                Kind::Compatible => "compatible",
                Kind::Cosmetic => "cosmetic  ",
            };
            out.line(&format!("{kind}  {}: {}", c.tool, c.what));
        }
        out.note(&format!(
            "{breaking} breaking, {} compatible, {} cosmetic change(s)",
            count(Kind::Compatible),
            count(Kind::Cosmetic)
        ));
    }
    if breaking > 0 {
        Exit::Breaking
    } else {
        Exit::Ok
    }
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("diff")
        .about("Classify what changed since a lockfile: breaking (exit 9), compatible or cosmetic")
        .arg(
            Arg::new("lockfile")
                .value_name("LOCKFILE")
                .default_value(super::lock::DEFAULT_LOCKFILE),
        )
        .arg(
            Arg::new("against")
                .long("against")
                .value_name("LOCKFILE")
                .help("Compare with this lockfile instead of the catalog"),
        )
        .args(crate::catalog::args())
}
