//! Finding skills under the roots a host configures: a bounded walk of
//! each root (hidden folders, `node_modules` and links that lead out of the
//! root skipped), every folder holding a `SKILL.md` read as a skill, and
//! one skill kept per name: project over user, the root listed first
//! within a scope, each collision reported.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use crate::problem::{Problem, Severity, problem};
use crate::read::{SKILL_FILE, read_skill};
use crate::skill::{Skill, Strictness};

/// How deep below a root skills are looked for, by default.
pub const DEFAULT_MAX_DEPTH: usize = 6;
/// Most folders looked into under one root, by default.
pub const DEFAULT_MAX_FOLDERS: usize = 2000;

/// Whose skills a root holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SkillScope {
    /// The project's (its repository's): read only when the host marks
    /// the project trusted; they win over the user's.
    Project,
    /// The user's own, for every project.
    User,
}

/// A folder skills are found under.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillRoot {
    /// The folder.
    pub path: PathBuf,
    /// Whose skills it holds.
    pub scope: SkillScope,
    /// How its skills' problems are taken.
    pub strictness: Strictness,
}

/// The roots skills are found under, and the bounds of the walk.
#[derive(Debug, Clone)]
pub struct SkillRoots {
    roots: Vec<SkillRoot>,
    trusted_project: bool,
    max_depth: usize,
    max_folders: usize,
}

/// A skill another one of the same name hid.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Shadowed {
    /// The name both have.
    pub name: String,
    /// The folder of the skill kept.
    pub kept: PathBuf,
    /// The folder of the skill hidden.
    pub hidden: PathBuf,
}

/// The skills found, and what was wrong on the way.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SkillSet {
    /// The skills, one per name, in name order.
    pub skills: Vec<Skill>,
    /// Every problem and warning: skills kept out and why, what was
    /// forgiven, collisions, roots not read.
    pub problems: Vec<Problem>,
    /// The skills a same-named one hid.
    pub shadowed: Vec<Shadowed>,
}

impl SkillSet {
    /// The skill named `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }
}

impl Default for SkillRoots {
    fn default() -> Self {
        Self::new()
    }
}

impl SkillRoots {
    /// No roots yet; the project untrusted.
    #[must_use]
    pub fn new() -> Self {
        Self {
            roots: Vec::new(),
            trusted_project: false,
            max_depth: DEFAULT_MAX_DEPTH,
            max_folders: DEFAULT_MAX_FOLDERS,
        }
    }

    /// The usual roots, read leniently (their skills come from elsewhere):
    /// `<project>/.agents/skills` and the user's `~/.agents/skills`; with
    /// `claude`, `.claude/skills` beside each as well.
    #[must_use]
    pub fn standard(project: &Path, claude: bool) -> Self {
        let mut roots = Self::new();
        let mut folders = vec![".agents/skills"];
        if claude {
            folders.push(".claude/skills");
        }
        for folder in &folders {
            roots = roots.with_root(
                project.join(folder),
                SkillScope::Project,
                Strictness::Lenient,
            );
        }
        if let Some(home) = dirs::home_dir() {
            for folder in &folders {
                roots = roots.with_root(home.join(folder), SkillScope::User, Strictness::Lenient);
            }
        }
        roots
    }

    /// Adds a root.
    #[must_use]
    pub fn with_root(
        mut self,
        path: impl Into<PathBuf>,
        scope: SkillScope,
        strictness: Strictness,
    ) -> Self {
        self.roots.push(SkillRoot {
            path: path.into(),
            scope,
            strictness,
        });
        self
    }

    /// Whether the project's skills may be read (a freshly cloned
    /// repository's skills could put anything in a model's context).
    #[must_use]
    pub fn trust_project(mut self, trusted: bool) -> Self {
        self.trusted_project = trusted;
        self
    }

    /// How deep below each root, and through how many folders, skills are
    /// looked for.
    #[must_use]
    pub fn bounded(mut self, max_depth: usize, max_folders: usize) -> Self {
        self.max_depth = max_depth;
        self.max_folders = max_folders;
        self
    }

    /// The roots, in order.
    #[must_use]
    pub fn roots(&self) -> &[SkillRoot] {
        &self.roots
    }

    /// Finds and reads every skill under the roots.
    #[must_use]
    pub fn find(&self) -> SkillSet {
        let mut set = SkillSet::default();
        let mut kept: BTreeMap<String, (SkillScope, Skill)> = BTreeMap::new();
        let mut roots: Vec<&SkillRoot> = self.roots.iter().collect();
        // Project roots first (they win), each scope in the order given.
        roots.sort_by_key(|root| root.scope);
        for root in roots {
            if root.scope == SkillScope::Project && !self.trusted_project {
                if root.path.is_dir() {
                    set.problems.push(problem(
                        &root.path,
                        "",
                        "the project's skills here were not read: the project is not marked trusted",
                        Severity::Warning,
                    ));
                }
                continue;
            }
            for folder in self.walk(root, &mut set.problems) {
                match read_skill(&folder, root.strictness) {
                    Ok(read) => {
                        set.problems.extend(read.warnings);
                        keep(&mut kept, &mut set, root.scope, read.skill);
                    }
                    Err(problems) => set.problems.extend(problems),
                }
            }
        }
        set.skills = kept.into_values().map(|(_, skill)| skill).collect();
        set
    }

    /// The skill folders under `root`, breadth first within the bounds.
    fn walk(&self, root: &SkillRoot, problems: &mut Vec<Problem>) -> Vec<PathBuf> {
        let Ok(base) = root.path.canonicalize() else {
            return Vec::new();
        };
        let mut found = Vec::new();
        let mut queue = VecDeque::from([(base.clone(), 0_usize)]);
        let mut visited = 0_usize;
        while let Some((folder, depth)) = queue.pop_front() {
            visited += 1;
            if visited > self.max_folders {
                problems.push(problem(
                    &root.path,
                    "",
                    format!(
                        "stopped after looking into {} folders; skills further in were not looked for (move them nearer the root)",
                        self.max_folders
                    ),
                    Severity::Warning,
                ));
                break;
            }
            if depth > 0 && folder.join(SKILL_FILE).is_file() {
                found.push(folder);
                continue;
            }
            if depth >= self.max_depth {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            let mut children: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|entry| {
                    let name = entry.file_name();
                    let name = name.to_string_lossy();
                    !name.starts_with('.') && name != "node_modules"
                })
                .map(|entry| entry.path())
                .filter(|path| within(&base, path, problems))
                .collect();
            children.sort();
            queue.extend(children.into_iter().map(|child| (child, depth + 1)));
        }
        found
    }
}

/// Whether `path` is a folder that stays inside `base` (a link that leads
/// out of the root is skipped, and said so).
fn within(base: &Path, path: &Path, problems: &mut Vec<Problem>) -> bool {
    let Ok(kind) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if kind.is_dir() {
        return true;
    }
    if !kind.file_type().is_symlink() {
        return false;
    }
    match path.canonicalize() {
        Ok(target) if target.is_dir() && target.starts_with(base) => true,
        Ok(target) if target.is_dir() => {
            problems.push(problem(
                path,
                "",
                format!(
                    "links out of its root (to {}); not followed",
                    target.display()
                ),
                Severity::Warning,
            ));
            false
        }
        _ => false,
    }
}

/// Keeps `skill` unless one of its name is kept already (from a scope that
/// wins, or a root listed earlier); the collision is reported either way.
fn keep(
    kept: &mut BTreeMap<String, (SkillScope, Skill)>,
    set: &mut SkillSet,
    scope: SkillScope,
    skill: Skill,
) {
    match kept.get(&skill.name) {
        None => {
            kept.insert(skill.name.clone(), (scope, skill));
        }
        Some((kept_scope, first)) => {
            let why = if *kept_scope < scope {
                "a project skill wins over a user skill"
            } else {
                "the root listed first wins"
            };
            set.problems.push(problem(
                skill.root.join(SKILL_FILE),
                "name",
                format!(
                    "`{}` is also the name of {}, which is kept ({why}); this one is hidden",
                    skill.name,
                    first.root.display()
                ),
                Severity::Warning,
            ));
            set.shadowed.push(Shadowed {
                name: skill.name.clone(),
                kept: first.root.clone(),
                hidden: skill.root,
            });
        }
    }
}
