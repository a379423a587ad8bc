//! An agent file's `output`: the schema its final answer must match,
//! written in the file or read from one beside it.

use std::path::Path;

use serde_json::Value;
use serde_saphyr::Spanned;

use super::error::Issues;
use super::file::OutputSection;
use super::sources::read_beneath;
use crate::Output;

/// The output `section` asks for, or `None` (with the problem noted) when
/// it cannot be one.
pub(super) fn output(
    section: Option<&Spanned<OutputSection>>,
    base: &Path,
    issues: &mut Issues,
) -> Option<Output> {
    let section = section?;
    let at = section.referenced;
    let section = &section.value;
    let schema = match (&section.schema, &section.schema_file) {
        (Some(_), Some(path)) => {
            issues.at(
                path.referenced,
                "output.schema_file",
                "give `schema` or `schema_file`, not both",
            );
            return None;
        }
        (None, None) => {
            issues.at(
                at,
                "output",
                "say what the answer must be: a JSON Schema as `schema`, or a file holding one as `schema_file`",
            );
            return None;
        }
        (Some(schema), None) => schema.clone(),
        (None, Some(path)) => {
            let text = match read_beneath(base, Path::new(&path.value), "output schema file") {
                Ok(text) => text,
                Err(message) => {
                    issues.at(path.referenced, "output.schema_file", message);
                    return None;
                }
            };
            // JSON is YAML: one reader for both, bounded as the agent file.
            match iris_runtime::config::yaml::from_str::<Value>(&text, "output schema") {
                Ok(schema) => schema,
                Err(problem) => {
                    issues.at(
                        path.referenced,
                        "output.schema_file",
                        format!("`{}` is not a schema: {problem}", path.value),
                    );
                    return None;
                }
            }
        }
    };
    if !schema.is_object() {
        issues.at(
            at,
            "output.schema",
            format!(
                "a schema is a JSON object (such as `{{type: object, properties: ...}}`), not {}",
                iris_core::schema::json_kind(&schema)
            ),
        );
        return None;
    }
    let name = section.name.as_deref().unwrap_or("output");
    let mut output = Output::schema(name, schema);
    if let Some(retries) = section.retries {
        output = output.retries(retries);
    }
    Some(output)
}
