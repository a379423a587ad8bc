//! An agent file's `skills:` section: the roots read (relative ones the
//! project's, `~/` ones the user's), every skill problem reported at its
//! place in its `SKILL.md` (read strictly, as errors; read leniently, as
//! warnings in the log), the allow list checked against what was found.

use std::path::Path;

use iris_skills::{SkillRoots, SkillScope, Strictness};
use serde_saphyr::Spanned;

use super::error::Issues;
use super::file::SkillsSection;
use crate::Skills;

/// The skills the section names, or none without a section; every problem
/// recorded in `issues`.
pub(super) fn skills(
    section: Option<&Spanned<SkillsSection>>,
    base: &Path,
    issues: &mut Issues,
) -> Option<Skills> {
    let section = section?;
    let at = section.referenced;
    let section = &section.value;
    let strictness = if section.lenient {
        Strictness::Lenient
    } else {
        Strictness::Strict
    };
    let mut roots = SkillRoots::new().trust_project(true);
    match &section.roots {
        None => {
            roots = roots.with_root(base.join(".agents/skills"), SkillScope::Project, strictness);
            if let Some(home) = dirs::home_dir() {
                roots = roots.with_root(home.join(".agents/skills"), SkillScope::User, strictness);
            }
        }
        Some(listed) => {
            for root in listed {
                let (path, scope) = if let Some(rest) = root.strip_prefix("~/") {
                    let Some(home) = dirs::home_dir() else {
                        issues.at(
                            at,
                            "skills.roots",
                            format!("`{root}`: no home folder is known here"),
                        );
                        continue;
                    };
                    (home.join(rest), SkillScope::User)
                } else {
                    (base.join(root), SkillScope::Project)
                };
                roots = roots.with_root(path, scope, strictness);
            }
        }
    }
    let found = roots.find();
    let mut warnings = Vec::new();
    for problem in &found.problems {
        if problem.is_error() && strictness == Strictness::Strict {
            issues.adopt(vec![problem.clone()]);
        } else {
            tracing::warn!(%problem, "a skill");
            warnings.push(problem.clone());
        }
    }
    let mut skills = found.skills;
    if let Some(allow) = &section.allow {
        for name in allow {
            if !skills.iter().any(|s| s.name == *name) {
                let known: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
                issues.at(
                    at,
                    "skills.allow",
                    format!(
                        "no skill `{name}` was found under the roots; {}",
                        iris_runtime::config::yaml::closest(name, &known, "skill")
                    ),
                );
            }
        }
        skills.retain(|s| allow.contains(&s.name));
    }
    let skills = Skills::new(skills)
        .honour_allowed_tools(section.honour_allowed_tools)
        .with_warnings(warnings);
    let skills = match section.catalog_tokens {
        Some(tokens) => skills.with_budget(tokens),
        None => skills,
    };
    // What did not fit the catalog is logged by the catalog and shown by
    // `iris lint`; the skills that fit are offered.
    Some(skills)
}

/// Every skill a child agent of `file` preloads is the child's own or one
/// of `own` (this agent's): a misspelled name would leave the child to run
/// without it, so it is a problem of the file, named with the closest
/// skill there is.
pub(super) fn check_preloads(
    file: &super::file::AgentFile,
    children: &[crate::ChildAgent],
    own: Option<&Skills>,
    issues: &mut Issues,
) {
    for (at, section) in file.agents.iter().enumerate() {
        let Some(child) = children.iter().find(|c| c.name() == section.name.value) else {
            continue;
        };
        let theirs = child.agent().skills();
        for name in &section.skills {
            let found = theirs
                .and_then(|s| s.skill(name))
                .or_else(|| own.and_then(|s| s.skill(name)));
            if found.is_some() {
                continue;
            }
            let known: Vec<&str> = theirs
                .into_iter()
                .chain(own)
                .flat_map(|skills| skills.iter().map(|skill| skill.name.as_str()))
                .collect();
            issues.at(
                section.name.referenced,
                format!("agents[{at}].skills"),
                format!(
                    "`{name}` is not a skill of child agent `{}` nor of this agent, so the child would run without it; {}",
                    child.name(),
                    iris_runtime::config::yaml::closest(name, &known, "skill")
                ),
            );
        }
    }
}
