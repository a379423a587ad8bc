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

    /// Every skill, offered or not.
    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter()
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
        self.skills.iter().find(|s| s.name == name)
    }

    /// The skill named `name`, when the catalog offers it.
    #[must_use]
    pub fn offered(&self, name: &str) -> Option<&Skill> {
        if !self.catalog.offers(name) {
            return None;
        }
        self.skills.iter().find(|s| s.name == name)
    }
}
