//! `iris lock`: the catalog pinned in a lockfile (each tool's description,
//! capabilities, input schema and their hash), for `iris diff` to compare
//! against in review and CI.

use clap::{Arg, Command};
use std::fmt::Write as _;
use std::path::Path;

use iris_core::ToolDefinition;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::catalog::Catalog;
use crate::exit::Exit;
use crate::output::Out;

/// The lockfile's name when none is given.
pub(crate) const DEFAULT_LOCKFILE: &str = "iris.lock.json";

/// The catalog as a lockfile: tools in name order, each with its hash, and
/// the hash of them all.
pub(crate) fn lock_of(catalog: &Catalog) -> Value {
    let registry = catalog.agent.registry();
    let mut definitions: Vec<&ToolDefinition> =
        registry.tools().map(|t| t.definition_dyn()).collect();
    definitions.sort_by(|a, b| a.name().as_str().cmp(b.name().as_str()));
    let tools: Vec<Value> = definitions
        .iter()
        .map(|d| {
            let mut tool = json!({
                "name": d.name().as_str(),
                "description": d.description(),
                "capabilities": super::list::tags(d),
                "input_schema": d.input_schema(),
            });
            // Pinned when the tool describes its results: a tool without
            // one keeps the hash it had.
            if let Some(output) = d.output_schema() {
                tool["output_schema"] = output.clone();
            }
            tool["hash"] = json!(hash(&tool));
            tool
        })
        .collect();
    let whole: Vec<&Value> = tools.iter().map(|t| &t["hash"]).collect();
    json!({
        "format": crate::output::FORMAT,
        "hash": hash(&json!(whole)),
        "tools": tools,
    })
}

/// SHA-256 of `value`'s canonical JSON text (object keys sorted at every
/// depth), so equal values hash equally however their keys were ordered.
fn hash(value: &Value) -> String {
    let mut text = String::new();
    canonical(value, &mut text);
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().fold(String::with_capacity(64), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

fn canonical(value: &Value, text: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            text.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                text.push_str(&Value::String(key.clone()).to_string());
                text.push(':');
                canonical(&map[key], text);
            }
            text.push('}');
        }
        Value::Array(items) => {
            text.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                canonical(item, text);
            }
            text.push(']');
        }
        other => text.push_str(&other.to_string()),
    }
}

pub(crate) fn run(catalog: &Catalog, output: &str, out: Out) -> Exit {
    let lock = lock_of(catalog);
    let text = serde_json::to_string_pretty(&lock).unwrap_or_default() + "\n";
    if output == "-" {
        out.line(text.trim_end());
        return Exit::Ok;
    }
    if let Err(e) = std::fs::write(Path::new(output), text) {
        return out.fail(Exit::Unreachable, &format!("cannot write `{output}`: {e}"));
    }
    let count = lock["tools"].as_array().map_or(0, Vec::len);
    if out.json {
        out.json(json!({"written": output, "tools": count, "hash": lock["hash"]}));
    } else {
        out.note(&format!("{count} tool(s) pinned in {output}"));
    }
    Exit::Ok
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("lock")
        .about("Pin the catalog (tools, schemas, hashes) in a lockfile")
        .arg(
            Arg::new("output")
                .long("output")
                .short('o')
                .value_name("FILE")
                .default_value(DEFAULT_LOCKFILE)
                .help("Where to write it (`-` for stdout)"),
        )
        .args(crate::catalog::args())
}
