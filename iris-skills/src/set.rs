//! The skills a run (or a served session) may activate, with their
//! catalog: from code ([`Skills::new`] over skills found with
//! [`SkillRoots`](crate::SkillRoots)) or from an agent file's `skills:`
//! section.

use std::sync::Arc;

use crate::catalog::{Catalog, CatalogReport, DEFAULT_CATALOG_TOKENS};
use crate::skill::Skill;

/// The skills a run may activate, and their catalog.
#[derive(Debug, Clone)]
pub struct Skills {
    all: Arc<Vec<Skill>>,
    catalog: Arc<Catalog>,
    /// Whether an active skill's `allowed-tools` pre-approve calls the
    /// policy would ask about.
    honour_allowed_tools: bool,
    /// What finding and reading them forgave (lenient reading), kept to
    /// show the host.
    warnings: Arc<Vec<crate::Problem>>,
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
        let honour = self.honour_allowed_tools;
        let warnings = self.warnings;
        let skills = Arc::try_unwrap(self.all).unwrap_or_else(|shared| (*shared).clone());
        let mut skills = Self::within(skills, tokens).honour_allowed_tools(honour);
        skills.warnings = warnings;
        skills
    }

    fn within(skills: Vec<Skill>, tokens: usize) -> Self {
        let catalog = Catalog::new(&skills, tokens);
        Self {
            all: Arc::new(skills),
            catalog: Arc::new(catalog),
            honour_allowed_tools: false,
            warnings: Arc::default(),
        }
    }

    /// The answer to a call of the activation tool with `arguments`, where
    /// `active` holds the skills active already (a new activation is
    /// added): with `file`, that file of the skill; else the skill's body,
    /// folder and files, or a short note when it is active already; a
    /// refusal for a skill the catalog does not offer. With the answer,
    /// the skill newly activated, if any.
    #[must_use]
    pub fn answer(
        &self,
        arguments: &serde_json::Value,
        active: &mut Vec<String>,
    ) -> (iris_core::ToolResult, Option<String>) {
        self.answer_showing(arguments, active, false)
    }

    /// [`answer`](Self::answer) for a caller of a server: a skill's folder
    /// is shown as its resource address (`skill://<name>/`), never as a
    /// path of the server's.
    pub fn answer_served(
        &self,
        arguments: &serde_json::Value,
        active: &mut Vec<String>,
    ) -> (iris_core::ToolResult, Option<String>) {
        self.answer_showing(arguments, active, true)
    }

    fn answer_showing(
        &self,
        arguments: &serde_json::Value,
        active: &mut Vec<String>,
        served: bool,
    ) -> (iris_core::ToolResult, Option<String>) {
        let asked = arguments
            .get("name")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        let Some(skill) = self.offered(asked) else {
            return (crate::not_offered(asked, self.catalog.names()), None);
        };
        if let Some(file) = arguments.get("file").and_then(serde_json::Value::as_str) {
            return (crate::read_file(skill, file), None);
        }
        if active.iter().any(|a| a == asked) {
            return (crate::already_active(asked), None);
        }
        active.push(asked.to_owned());
        let activated = if served {
            crate::activation_showing(skill, &format!("skill://{}/", skill.name))
        } else {
            crate::activation(skill)
        };
        (activated, Some(asked.to_owned()))
    }

    /// Keeps `warnings` (what finding the skills forgave) to show the host.
    #[must_use]
    pub fn with_warnings(mut self, warnings: Vec<crate::Problem>) -> Self {
        self.warnings = Arc::new(warnings);
        self
    }

    /// What finding and reading the skills forgave.
    #[must_use]
    pub fn warnings(&self) -> &[crate::Problem] {
        &self.warnings
    }

    /// Lets an active skill's `allowed-tools` pre-approve calls of the
    /// tools it names: a call the policy would ask a person about runs
    /// without asking while the skill is active. Only plain tool names
    /// count (a pattern such as `Bash(git:*)` is another client's and is
    /// never read as one); a call the policy denies stays denied, and the
    /// tools keep their own confinement. Off unless set.
    #[must_use]
    pub fn honour_allowed_tools(mut self, honour: bool) -> Self {
        self.honour_allowed_tools = honour;
        self
    }

    /// The active skill (of `active`) whose `allowed-tools` pre-approve a
    /// call of `tool`, when the host lets them.
    #[must_use]
    pub fn pre_approving(&self, active: &[String], tool: &str) -> Option<&Skill> {
        if !self.honour_allowed_tools {
            return None;
        }
        active
            .iter()
            .filter_map(|name| self.skill(name))
            .find(|skill| skill.allowed_tools.iter().any(|allowed| allowed == tool))
    }

    /// Every skill, offered or not.
    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.all.iter()
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

    /// The skill named `name`, offered or not (a child preloads from its
    /// parent's skills whatever the catalog's budget left out).
    #[must_use]
    pub fn skill(&self, name: &str) -> Option<&Skill> {
        self.all.iter().find(|s| s.name == name)
    }

    /// The skill named `name`, when the catalog offers it.
    #[must_use]
    pub fn offered(&self, name: &str) -> Option<&Skill> {
        if !self.catalog.offers(name) {
            return None;
        }
        self.all.iter().find(|s| s.name == name)
    }
}
