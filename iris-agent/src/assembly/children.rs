//! An agent file's `agents`: each child's own file read from the agent
//! file's folder and assembled with the same names (tools, factories,
//! hooks, middleware), its own `agents` too, and declared as a child agent
//! of the agent being built. Every problem is reported where it is: a bad
//! entry at its key, a child file's own problems in that file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use iris_core::ToolName;

use super::error::Issues;
use super::file::{AgentFile, ChildSection};
use super::names::Assembly;
use crate::ChildAgent;

/// Most levels of agent files below the first: a deeper chain is refused
/// (its files would never end loading if they named each other).
const MAX_FILE_DEPTH: usize = 8;

/// The child agents `file` declares, each assembled from its own file;
/// `tools` are the names the agent's own tools take, `chain` the files
/// above this one (the first first).
pub(super) fn children(
    names: &Assembly,
    file: &AgentFile,
    base: &Path,
    tools: &BTreeSet<String>,
    chain: &[PathBuf],
    issues: &mut Issues,
) -> Vec<ChildAgent> {
    let mut children: Vec<ChildAgent> = Vec::with_capacity(file.agents.len());
    let mut seen: Vec<&str> = Vec::with_capacity(file.agents.len());
    for (at, section) in file.agents.iter().enumerate() {
        let name = section.name.value.as_str();
        let key = |field: &str| format!("agents[{at}].{field}");
        if let Err(why) = ToolName::new(name.to_owned()) {
            issues.at(section.name.referenced, key("name"), why.to_string());
            continue;
        }
        if tools.contains(name) {
            issues.at(
                section.name.referenced,
                key("name"),
                format!("the agent has a tool named `{name}`, and the model could not tell the two apart; give the child agent another name"),
            );
            continue;
        }
        if seen.contains(&name) {
            issues.at(
                section.name.referenced,
                key("name"),
                format!("`{name}` names another child agent of this file already; give each its own name"),
            );
            continue;
        }
        seen.push(name);
        if section.description.trim().is_empty() {
            issues.at(
                section.name.referenced,
                key("description"),
                "the model chooses a child agent by its description; say what it does",
            );
            continue;
        }
        if let Some(child) = child(names, section, base, chain, &key("file"), issues) {
            children.push(child);
        }
    }
    children
}

/// The child agent of `section`, or `None` (with its problems noted).
fn child(
    names: &Assembly,
    section: &ChildSection,
    base: &Path,
    chain: &[PathBuf],
    key: &str,
    issues: &mut Issues,
) -> Option<ChildAgent> {
    let at = section.file.referenced;
    let (full, canonical) = match child_file(section, base, chain) {
        Ok(found) => found,
        Err(why) => {
            issues.at(at, key, why);
            return None;
        }
    };
    let relative = Path::new(&section.file.value);
    let text = match super::sources::read_beneath(base, relative, "child agent file") {
        Ok(text) => text,
        Err(message) => {
            issues.at(at, key, message);
            return None;
        }
    };
    let mut below = chain.to_vec();
    below.push(canonical);
    let agent = match names.parse_below(&text, &full, &below) {
        Ok(agent) => agent,
        Err(error) => {
            let count = error.issues.len();
            issues.at(
                at,
                key,
                format!(
                    "the child agent file has {count} problem(s), listed with it; fix them there"
                ),
            );
            issues.adopt(error.issues);
            return None;
        }
    };
    let model = match agent.model().map(iris_model::ModelConfig::build_model) {
        Some(Ok(model)) => Some(model),
        Some(Err(error)) => {
            issues.at(
                at,
                key,
                format!("the child agent's model cannot be reached: {error}"),
            );
            return None;
        }
        None => None,
    };
    let mut child = ChildAgent::new(
        section.name.value.clone(),
        section.description.clone(),
        agent,
    );
    if let Some(model) = model {
        child = child.model(model);
    }
    Some(with_switches(child, section))
}

/// Where the child file of `section` is (as named, and resolved), or why
/// it may not be read: named outside the folder, a file above this one,
/// or too deep a chain.
fn child_file(
    section: &ChildSection,
    base: &Path,
    chain: &[PathBuf],
) -> Result<(PathBuf, PathBuf), String> {
    let relative = Path::new(&section.file.value);
    // Named inside the folder by the words alone: no absolute path, no
    // step up (the folder itself may not exist yet to resolve against).
    let escapes = relative.is_absolute()
        || relative.components().any(|part| {
            !matches!(
                part,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
    if escapes {
        return Err(format!(
            "`{}` leaves the agent file's folder; name a child agent's file relative to this file, inside its folder (no absolute path, no `..`)",
            section.file.value
        ));
    }
    let full = base.join(relative);
    let canonical = full.canonicalize().unwrap_or_else(|_| full.clone());
    if chain.contains(&canonical) {
        return Err(format!(
            "`{}` is an agent file above this one: an agent that delegates to itself, directly or not, would never end loading; name another file",
            full.display()
        ));
    }
    if chain.len() >= MAX_FILE_DEPTH {
        return Err(format!(
            "agent files nest {MAX_FILE_DEPTH} levels deep at most; flatten the team"
        ));
    }
    Ok((full, canonical))
}

/// `child` with the limits and switches `section` sets.
fn with_switches(mut child: ChildAgent, section: &ChildSection) -> ChildAgent {
    if let Some(steps) = section.max_steps {
        child = child.max_steps(steps);
    }
    if let Some(tokens) = section.max_tokens {
        child = child.max_tokens(tokens);
    }
    if let Some(deadline) = section.deadline {
        child = child.deadline(deadline.0);
    }
    if section.concurrency_safe {
        child = child.concurrency_safe();
    }
    if section.parent_history {
        child = child.with_parent_history();
    }
    if section.widen_permissions {
        child = child.widen_permissions();
    }
    if !section.skills.is_empty() {
        child = child.preload_skills(section.skills.iter().cloned());
    }
    child
}
