//! Agent Skills served over MCP: the catalog as the `activate_skill` tool
//! (run control beside the executor, as `ask_question` is: no hook,
//! middleware or policy sees it; the gateway's rules do, see `control`),
//! each session's active skills kept
//! so that a second activation is a short note, and each skill's files as
//! read-only resources, `skill://<name>/<path>`.

use std::sync::PoisonError;

use iris_core::ToolResult;
use iris_runtime::ToolRegistry;
use iris_skills::{ACTIVATE_SKILL, Skill, Skills};
use rmcp::ErrorData;
use rmcp::model::{self as mcp, ResourceContents, ToolAnnotations};
use serde_json::{Map, Value, json};

use super::McpConnection;

/// The scheme of a skill's files as resources.
pub(super) const SCHEME: &str = "skill://";

/// Most files of one skill listed as resources.
const MAX_LISTED: usize = 200;

impl McpConnection {
    /// The served skills, unless a tool of the activation tool's name is
    /// in the registry (the registry's tool wins).
    fn served_skills(&self, registry: &ToolRegistry) -> Option<&Skills> {
        self.options
            .skills
            .as_ref()
            .filter(|skills| !skills.catalog().is_empty())
            .filter(|_| registry.resolve(ACTIVATE_SKILL).is_none())
    }

    /// `activate_skill` as listed, when skills are served.
    pub(super) fn skills_listing(&self, registry: &ToolRegistry) -> Option<mcp::Tool> {
        let spec = self.served_skills(registry)?.catalog().spec()?;
        let schema = match spec.parameters() {
            Value::Object(map) => map.clone(),
            _ => Map::new(),
        };
        Some(
            mcp::Tool::new(ACTIVATE_SKILL, spec.description().to_owned(), schema).with_annotations(
                ToolAnnotations::new()
                    .read_only(true)
                    .destructive(false)
                    .open_world(false),
            ),
        )
    }

    /// Run control's answer to a call of `activate_skill` (none when the
    /// call is of another tool, or skills are not served): the skill's
    /// body, folder and files, a short note when this session activated
    /// it already, or (with `file`) one of its files.
    pub(super) fn activate_skill(&self, name: &str, arguments: &Value) -> Option<ToolResult> {
        if name != ACTIVATE_SKILL {
            return None;
        }
        let registry = self.executor.registry();
        let skills = self.served_skills(&registry)?;
        let mut active = self
            .active_skills
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Some(skills.answer_served(arguments, &mut active).0)
    }

    /// Every offered skill's files, as resources.
    pub(super) fn skill_resources(&self) -> Vec<mcp::Resource> {
        let registry = self.executor.registry();
        let Some(skills) = self.served_skills(&registry) else {
            return Vec::new();
        };
        let mut resources = Vec::new();
        for name in skills.catalog().names() {
            let Some(skill) = skills.offered(name) else {
                continue;
            };
            let listed = iris_skills::activation(skill);
            let files: Vec<String> = listed
                .data()
                .and_then(|d| d.get("files"))
                .and_then(Value::as_array)
                .map(|files| {
                    files
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            for file in std::iter::once(iris_skills::SKILL_FILE.to_owned())
                .chain(files)
                .take(MAX_LISTED)
            {
                let uri = format!("{SCHEME}{}/{file}", skill.name);
                resources.push(
                    mcp::Resource::new(uri, format!("{} {file}", skill.name))
                        .with_description(skill.description.clone()),
                );
            }
        }
        resources
    }

    /// The contents of `uri` when it names a skill's file (none when it
    /// is not a `skill://` address): read-only, confined to the skill's
    /// folder.
    pub(super) fn read_skill_resource(
        &self,
        uri: &str,
    ) -> Option<Result<ResourceContents, ErrorData>> {
        let rest = uri.strip_prefix(SCHEME)?;
        let registry = self.executor.registry();
        let not_found = |why: &str| {
            ErrorData::resource_not_found(format!("`{uri}` {why}"), Some(json!({"uri": uri})))
        };
        let Some(skills) = self.served_skills(&registry) else {
            return Some(Err(not_found("names a skill, and this server serves none")));
        };
        let Some((name, file)) = rest.split_once('/') else {
            return Some(Err(not_found("names no file: `skill://<name>/<path>`")));
        };
        let Some(skill) = skills.offered(name) else {
            return Some(Err(not_found("names a skill this server does not offer")));
        };
        Some(read(skill, file, uri).map_err(|why| not_found(&why)))
    }
}

fn read(skill: &Skill, file: &str, uri: &str) -> Result<ResourceContents, String> {
    let result = iris_skills::read_file(skill, file);
    if result.is_error() {
        return Err(result.text_content());
    }
    Ok(ResourceContents::text(result.text_content(), uri).with_mime_type("text/plain"))
}
