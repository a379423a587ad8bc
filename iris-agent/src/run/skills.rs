//! Skills, offered and activated by run control: the runner offers the
//! catalog as one activation tool (never a discovery candidate, never in
//! the executor's offer), reads the model's call itself (no hook,
//! middleware or permission rule sees it), and records each activation in
//! the run state, so a resume in another process, or with another model,
//! knows which skills are active.

use std::sync::Arc;

use iris_core::{ToolResult, ToolUseBlock};
use iris_runtime::RunEvent;
use iris_skills::{ACTIVATE_SKILL, Catalog, CatalogReport, DEFAULT_CATALOG_TOKENS, Skill};

use super::AgentRunner;

/// The skills a runner's runs may activate, and their catalog.
#[derive(Debug, Clone)]
pub struct Skills {
    skills: Arc<Vec<Skill>>,
    catalog: Arc<Catalog>,
}

impl Skills {
    /// `skills` (one per name; put those that matter most first, as the
    /// catalog leaves out from the end when it must), with a catalog of
    /// [`DEFAULT_CATALOG_TOKENS`].
    #[must_use]
    pub fn new(skills: impl IntoIterator<Item = Skill>) -> Self {
        Self::within(skills.into_iter().collect(), DEFAULT_CATALOG_TOKENS)
    }

    /// The same skills with a catalog of `tokens`.
    #[must_use]
    pub fn with_budget(self, tokens: usize) -> Self {
        let skills = Arc::try_unwrap(self.skills).unwrap_or_else(|shared| (*shared).clone());
        Self::within(skills, tokens)
    }

    fn within(skills: Vec<Skill>, tokens: usize) -> Self {
        let catalog = Catalog::new(&skills, tokens);
        Self {
            skills: Arc::new(skills),
            catalog: Arc::new(catalog),
        }
    }

    /// What fit in the catalog, and what was shortened or left out.
    #[must_use]
    pub fn report(&self) -> &CatalogReport {
        self.catalog.report()
    }

    /// The catalog the model is offered.
    #[must_use]
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The skill named `name`, when the catalog offers it.
    fn offered(&self, name: &str) -> Option<&Skill> {
        if !self.catalog.offers(name) {
            return None;
        }
        self.skills.iter().find(|s| s.name == name)
    }
}

impl AgentRunner {
    /// Whether `call` activates a skill (run control's, where skills are
    /// offered).
    pub(super) fn is_skill_activation(&self, call: &ToolUseBlock) -> bool {
        call.name == ACTIVATE_SKILL && self.skills.as_ref().is_some_and(|s| !s.catalog.is_empty())
    }

    /// Run control's answer to an activation: the skill's body, folder and
    /// files, or a short note when `active` already holds it (the skills
    /// active in the run, to which a new activation is added); with a
    /// `file`, that file of the skill.
    pub(super) fn activate(
        &self,
        call: &ToolUseBlock,
        run: &iris_core::RunId,
        active: &mut Vec<String>,
    ) -> ToolResult {
        let Some(skills) = &self.skills else {
            return iris_skills::not_offered("?", std::iter::empty());
        };
        let name = call
            .input
            .get("name")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        let Some(skill) = skills.offered(name) else {
            return iris_skills::not_offered(name, skills.catalog.names());
        };
        if let Some(file) = call.input.get("file").and_then(serde_json::Value::as_str) {
            // One of its files, read-only and confined to its folder.
            return iris_skills::read_file(skill, file);
        }
        if active.iter().any(|a| a == name) {
            return iris_skills::already_active(name);
        }
        active.push(name.to_owned());
        self.agent.executor().emit_event(RunEvent::SkillActivated {
            run_id: run.clone(),
            call_id: call.id.clone(),
            skill: name.to_owned(),
        });
        iris_skills::activation(skill)
    }

    /// The activation tool's spec, when skills are offered.
    pub(super) fn skill_spec(&self) -> Option<iris_core::ToolSpec> {
        self.skills.as_ref().and_then(|s| s.catalog.spec())
    }
}
