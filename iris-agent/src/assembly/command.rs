//! `tools.command`: tools whose body is a program, from the agent file.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use iris_core::{Capabilities, ToolDefinition, ToolName};
use iris_tools::command::CommandTool;
use serde_json::{Map, Value, json};

use super::error::Issues;
use super::file::{CommandToolSection, ParameterKind, ParameterSection};
use super::sources::{Chosen, expand_variables};

/// The command tools of the file, each checked; what is wrong is reported
/// at its key.
pub(super) fn command_tools(
    sections: &[CommandToolSection],
    base: &Path,
    issues: &mut Issues,
) -> Vec<Chosen> {
    sections
        .iter()
        .enumerate()
        .filter_map(|(i, section)| {
            command_tool(section, &format!("tools.command[{i}]"), base, issues)
        })
        .collect()
}

fn command_tool(
    section: &CommandToolSection,
    key: &str,
    base: &Path,
    issues: &mut Issues,
) -> Option<Chosen> {
    let place = section.name.referenced;
    let name = match ToolName::new(section.name.value.clone()) {
        Ok(name) => name,
        Err(err) => {
            issues.at(place, format!("{key}.name"), err.to_string());
            return None;
        }
    };
    let schema = input_schema(section, key, issues)?;
    let definition = match ToolDefinition::builder(name, section.description.clone())
        .input_schema(schema)
        .capabilities(
            section
                .capabilities
                .iter()
                .copied()
                .collect::<Capabilities>(),
        )
        .build()
    {
        Ok(definition) => definition,
        Err(err) => {
            issues.at(place, key, err.to_string());
            return None;
        }
    };
    let argv = &section.command;
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    let cwd = section
        .cwd
        .as_ref()
        .map_or_else(|| base.to_path_buf(), |dir| base.join(dir));
    // A program named by a relative path (`./count.sh`, `tools/count.py`)
    // is found from the working directory, the same on every platform.
    let mut program = argv.value.clone();
    if let Some(first) = program.first_mut()
        && first.contains(['/', '\\'])
        && Path::new(first.as_str()).is_relative()
    {
        *first = cwd.join(&*first).display().to_string();
    }
    let mut tool = match CommandTool::new(definition, program) {
        Ok(tool) => tool,
        Err(err) => {
            issues.at(argv.referenced, format!("{key}.command"), err.to_string());
            return None;
        }
    };
    for (variable, value) in &section.env {
        match expand_variables(&value.value) {
            Ok(expanded) => tool = tool.env(variable, expanded),
            Err(missing) => issues.at(
                value.referenced,
                format!("{key}.env.{variable}"),
                format!(
                    "environment variable `{missing}` is not set; set it before starting the agent"
                ),
            ),
        }
    }
    tool = tool.current_dir(cwd).output(section.output);
    if let Some(timeout) = section.timeout {
        tool = tool.timeout(timeout.0);
    }
    Some((key.to_owned(), place, Arc::new(tool)))
}

/// The tool's input schema: `input_schema` as written, or one made from
/// `parameters` (closed, every parameter not `optional` required).
fn input_schema(section: &CommandToolSection, key: &str, issues: &mut Issues) -> Option<Value> {
    match (&section.input_schema, &section.parameters) {
        (Some(schema), Some(_)) => {
            issues.at(
                schema.referenced,
                format!("{key}.input_schema"),
                "give `parameters` or `input_schema`, not both",
            );
            None
        }
        (Some(schema), None) => {
            let is_object = schema.value.get("type").and_then(Value::as_str) == Some("object");
            if is_object {
                Some(schema.value.clone())
            } else {
                issues.at(
                    schema.referenced,
                    format!("{key}.input_schema"),
                    "`input_schema` must be a JSON Schema of `type: object` (the arguments are one object), such as {type: object, properties: {path: {type: string}}}",
                );
                None
            }
        }
        (None, Some(parameters)) => Some(schema_of(&parameters.value)),
        (None, None) => {
            Some(json!({"type": "object", "properties": {}, "additionalProperties": false}))
        }
    }
}

fn schema_of(parameters: &BTreeMap<String, ParameterSection>) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, parameter) in parameters {
        let mut schema = json!({"type": parameter.kind.as_str()});
        if let Some(description) = &parameter.description {
            schema["description"] = json!(description);
        }
        if let Some(values) = &parameter.values {
            schema["enum"] = json!(values);
        }
        if parameter.kind == ParameterKind::Array {
            let items = parameter.items.unwrap_or(ParameterKind::String);
            schema["items"] = json!({"type": items.as_str()});
        }
        if !parameter.optional {
            required.push(name.clone());
        }
        properties.insert(name.clone(), schema);
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}
