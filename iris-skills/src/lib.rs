//! Agent Skills for Iris: folders with a `SKILL.md` (the open Agent Skills
//! format: YAML front matter with `name` and `description`, a Markdown
//! body, optional `scripts/`, `references/` and `assets/`), read and found
//! under the roots a host configures.
//!
//! - [`read_skill`] reads one folder. [`Strictness::Strict`] is for skills
//!   the host writes: every problem at once, each with `file:line:column`
//!   and the closest valid value. [`Strictness::Lenient`] is for skills
//!   from elsewhere: loaded where the format's client guidance says to (a
//!   name that does not match its folder, fields other clients add), with
//!   a warning for each; only a skill without a description or with front
//!   matter that is not YAML is skipped, saying why.
//! - [`SkillRoots`] finds skills: the project's and the user's
//!   `.agents/skills/` by default (`.claude/skills/` when asked for), a
//!   bounded walk that skips hidden folders, `node_modules` and links out
//!   of the root; project skills win over user skills (each collision
//!   reported), and project skills are read only from a project the host
//!   marks trusted.
//!
//! ```
//! use iris_skills::{SkillRoots, SkillScope, Strictness};
//! # let project = tempfile::tempdir()?;
//! let folder = project.path().join(".agents/skills/release-notes");
//! std::fs::create_dir_all(&folder)?;
//! std::fs::write(
//!     folder.join("SKILL.md"),
//!     "---\nname: release-notes\ndescription: Write release notes from merged changes. Use when a release is cut.\n---\n# Release notes\n\nGroup the changes by kind.\n",
//! )?;
//! let found = SkillRoots::new()
//!     .with_root(project.path().join(".agents/skills"), SkillScope::Project, Strictness::Strict)
//!     .trust_project(true)
//!     .find();
//! assert_eq!(found.skills[0].name, "release-notes");
//! assert!(found.problems.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod activation;
mod catalog;
mod discover;
mod escape;
mod fields;
mod front_matter;
mod problem;
mod read;
mod set;
mod skill;

pub use activation::{
    MAX_LISTED_FILES, MAX_SKILL_FILE_BYTES, activation, activation_showing, already_active,
    not_offered, read_file,
};
pub use catalog::{ACTIVATE_SKILL, Catalog, CatalogReport, DEFAULT_CATALOG_TOKENS};
pub use discover::{
    DEFAULT_MAX_DEPTH, DEFAULT_MAX_FOLDERS, Shadowed, SkillRoot, SkillRoots, SkillScope, SkillSet,
};
pub use problem::{Problem, Severity};
pub use read::{ReadSkill, SKILL_FILE, read_skill};
pub use set::Skills;
pub use skill::{Skill, Strictness};
