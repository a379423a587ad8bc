//! What `iris lint` finds in an agent's skills: each skill read again
//! strictly (the format's rules a lenient reading forgave), the catalog's
//! budget (descriptions shortened, skills left out), and descriptions that
//! say nearly what another skill's or a tool's does.

use std::collections::BTreeSet;

use iris_agent::Skills;
use iris_core::ToolDefinition;
use iris_skills::{Strictness, read_skill};

use super::{Finding, Level, RULES};

/// Word overlap (Jaccard) past which two descriptions shadow each other.
const SHADOWED_OVERLAP: f64 = 0.7;

/// The findings of `skills`, beside the agent's `tools`.
pub(crate) fn findings(skills: &Skills, tools: &[&ToolDefinition]) -> Vec<Finding> {
    let mut found = Vec::new();
    for skill in skills.iter() {
        if let Err(problems) = read_skill(&skill.root, Strictness::Strict) {
            for problem in problems {
                found.push(finding(&skill.name, "skill-format", problem.to_string()));
            }
        }
    }
    let report = skills.report();
    for name in &report.shortened {
        found.push(finding(
            name,
            "skill-catalog-shortened",
            format!(
                "its description was shortened to fit the catalog's {} tokens: put what matters first, or raise the budget",
                report.budget_tokens
            ),
        ));
    }
    for name in &report.left_out {
        found.push(finding(
            name,
            "skill-left-out",
            format!(
                "left out of the catalog: the skills before it took its {} tokens; raise the budget, allow fewer skills or shorten descriptions",
                report.budget_tokens
            ),
        ));
    }
    let listed: Vec<(String, &str)> = skills
        .iter()
        .map(|s| (format!("skill `{}`", s.name), s.description.as_str()))
        .chain(
            tools
                .iter()
                .map(|t| (format!("tool `{}`", t.name()), t.description())),
        )
        .collect();
    for (at, skill) in skills.iter().enumerate() {
        let own = words(&skill.description);
        for (other, description) in listed.iter().enumerate().filter(|(i, _)| *i != at) {
            let overlap = jaccard(&own, &words(description.1));
            if overlap >= SHADOWED_OVERLAP {
                found.push(finding(
                    &skill.name,
                    "skill-shadowed",
                    format!(
                        "its description shares {:.0}% of its words with {}'s: say what sets it apart and when to use it",
                        overlap * 100.0,
                        listed[other].0
                    ),
                ));
            }
        }
    }
    found
}

fn finding(skill: &str, rule: &'static str, message: String) -> Finding {
    let level = RULES
        .iter()
        .find(|(id, _, _)| *id == rule)
        .map_or(Level::Warning, |(_, level, _)| *level);
    Finding {
        tool: format!("skill:{skill}"),
        rule,
        level,
        provider: None,
        at: None,
        message,
    }
}

fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
        .map(str::to_lowercase)
        .collect()
}

#[allow(clippy::cast_precision_loss, reason = "word counts are far below 2^52")]
fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}
