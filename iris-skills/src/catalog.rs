//! The catalog a run offers: each visible skill's name and description
//! (never its body) in the description of one activation tool, whose
//! `name` parameter lists the skills. The catalog has a budget; when the
//! skills do not fit, descriptions are shortened and then skills left out,
//! and the report says which: nothing is dropped without a word.

use std::sync::Arc;

use iris_core::ToolSpec;
use serde_json::json;

use crate::skill::Skill;

/// The activation tool's name.
pub const ACTIVATE_SKILL: &str = "activate_skill";

/// The catalog's budget by default, in tokens (about four characters
/// each).
pub const DEFAULT_CATALOG_TOKENS: usize = 2000;

/// A description shortened to fit is cut near this many characters.
const SHORT_DESCRIPTION: usize = 200;

const PREAMBLE: &str = "Activate a skill: load its instructions into this conversation when the task matches its description, before you start the work. The result holds the skill's instructions, its folder and a list of its files. Activate a skill once (file: null); its instructions stay. To read one of its files when the instructions point to it, call again with file set to its path relative to the skill's folder. Skills:";

/// What fit in the catalog, and what did not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CatalogReport {
    /// The budget, in tokens.
    pub budget_tokens: usize,
    /// What the activation tool's description takes, in tokens.
    pub used_tokens: usize,
    /// Skills whose description was shortened to fit.
    pub shortened: Vec<String>,
    /// Skills left out: not offered at all.
    pub left_out: Vec<String>,
}

impl CatalogReport {
    /// Whether every skill is offered whole.
    #[must_use]
    pub fn is_whole(&self) -> bool {
        self.shortened.is_empty() && self.left_out.is_empty()
    }
}

/// The skills a run offers, as the model sees them.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Offered skills' names and the description as offered.
    entries: Vec<(String, String)>,
    report: CatalogReport,
}

impl Catalog {
    /// The catalog of `skills` within `budget_tokens`: whole when it fits;
    /// else each description past 200 characters is cut
    /// at a sentence or word; else skills are left out from the end of the
    /// list (put the skills that matter most first).
    #[must_use]
    pub fn new(skills: &[Skill], budget_tokens: usize) -> Self {
        let mut entries: Vec<(String, String)> = skills
            .iter()
            .map(|s| (s.name.clone(), s.description.clone()))
            .collect();
        let mut report = CatalogReport {
            budget_tokens,
            ..CatalogReport::default()
        };
        if tokens(&entries) > budget_tokens {
            for (name, description) in &mut entries {
                if description.chars().count() > SHORT_DESCRIPTION {
                    *description = shortened(description);
                    report.shortened.push(name.clone());
                }
            }
        }
        while tokens(&entries) > budget_tokens {
            let Some((name, _)) = entries.pop() else {
                break;
            };
            report.shortened.retain(|n| *n != name);
            report.left_out.insert(0, name);
        }
        report.used_tokens = if entries.is_empty() {
            0
        } else {
            tokens(&entries)
        };
        if !report.is_whole() {
            tracing::warn!(
                shortened = ?report.shortened,
                left_out = ?report.left_out,
                budget_tokens,
                "the skill catalog did not fit its budget"
            );
        }
        Self { entries, report }
    }

    /// Whether no skill is offered (then there is no activation tool).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether `name` is offered.
    #[must_use]
    pub fn offers(&self, name: &str) -> bool {
        self.entries.iter().any(|(n, _)| n == name)
    }

    /// The offered skills' names, in catalog order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(n, _)| n.as_str())
    }

    /// What fit and what did not.
    #[must_use]
    pub fn report(&self) -> &CatalogReport {
        &self.report
    }

    /// The activation tool as the model is offered it; none when no skill
    /// is offered.
    #[must_use]
    pub fn spec(&self) -> Option<ToolSpec> {
        if self.entries.is_empty() {
            return None;
        }
        let names: Vec<&str> = self.names().collect();
        let parameters = json!({
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "enum": names,
                    "description": "The skill.",
                },
                "file": {
                    "type": ["string", "null"],
                    "description": "null to activate the skill; or a file of the skill to read, relative to its folder (such as references/guide.md).",
                },
            },
            "required": ["name", "file"],
            "additionalProperties": false,
        });
        let name = iris_core::__private::checked_tool_name(ACTIVATE_SKILL);
        Some(
            ToolSpec::new(name, description(&self.entries), Arc::new(parameters)).with_strict(true),
        )
    }
}

fn description(entries: &[(String, String)]) -> String {
    let mut text = PREAMBLE.to_owned();
    for (name, description) in entries {
        text.push_str("\n- ");
        text.push_str(&crate::escape::line(name));
        text.push_str(": ");
        text.push_str(&crate::escape::line(description));
    }
    text
}

/// The tokens the activation tool's description takes (about four
/// characters each, rounded up).
fn tokens(entries: &[(String, String)]) -> usize {
    description(entries).chars().count().div_ceil(4)
}

/// `text` cut near [`SHORT_DESCRIPTION`] characters: at the end of a
/// sentence when one ends in the second half, else at a word, with `…`.
fn shortened(text: &str) -> String {
    let head = iris_core::text::prefix(text, SHORT_DESCRIPTION);
    if let Some(end) = head.rfind(". ").filter(|&at| at >= head.len() / 2) {
        return head[..=end].to_owned();
    }
    let cut = head.rfind(' ').unwrap_or(head.len());
    format!("{}…", head[..cut].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(name: &str, description: &str) -> Skill {
        Skill {
            name: name.to_owned(),
            description: description.to_owned(),
            license: None,
            compatibility: None,
            metadata: std::collections::BTreeMap::new(),
            allowed_tools: Vec::new(),
            other_fields: std::collections::BTreeMap::new(),
            root: std::path::PathBuf::from("/skills").join(name),
            body: String::new(),
        }
    }

    #[test]
    fn a_catalog_that_fits_is_whole_and_offers_one_tool() {
        let catalog = Catalog::new(&[skill("a", "Does a."), skill("b", "Does b.")], 2000);
        assert!(catalog.report().is_whole());
        let spec = catalog.spec();
        let spec = spec.as_ref();
        assert_eq!(spec.map(|s| s.name().as_str()), Some(ACTIVATE_SKILL));
        assert!(spec.is_some_and(|s| s.description().ends_with("\n- a: Does a.\n- b: Does b.")));
        assert_eq!(
            spec.map(|s| s.parameters()["properties"]["name"]["enum"].clone()),
            Some(json!(["a", "b"]))
        );
        assert!(Catalog::new(&[], 2000).spec().is_none());
    }

    #[test]
    fn past_its_budget_a_catalog_shortens_then_leaves_out_and_says_so() {
        let long = "Handles the first thing well. ".repeat(20);
        let skills = [
            skill("first", &long),
            skill("second", &long),
            skill("third", "Short."),
        ];
        let whole = Catalog::new(&skills, 10_000);
        assert!(whole.report().is_whole());
        let shortened = Catalog::new(&skills, 250);
        assert_eq!(shortened.report().shortened, ["first", "second"]);
        assert!(shortened.report().left_out.is_empty());
        assert!(shortened.report().used_tokens <= 250);
        let cut = Catalog::new(&skills, 150);
        assert_eq!(cut.report().left_out, ["second", "third"]);
        assert_eq!(cut.report().shortened, ["first"]);
        assert!(cut.offers("first") && !cut.offers("third"));
        assert!(Catalog::new(&skills, 10).is_empty());
    }
}
