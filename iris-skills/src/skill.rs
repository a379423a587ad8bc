//! A skill as read: what its front matter says, its body, and where it is.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

/// How a skill's problems are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strictness {
    /// Skills the host writes: any problem keeps the skill out, and every
    /// problem is reported at once.
    Strict,
    /// Skills from elsewhere: loaded with warnings where the format's
    /// client guidance says to; skipped only without a description or
    /// with front matter that is not YAML.
    #[default]
    Lenient,
}

/// A skill read from its folder.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Skill {
    /// Its name: what activates it.
    pub name: String,
    /// What it does and when to use it: all a model sees before it is
    /// activated.
    pub description: String,
    /// Its license, when it names one.
    pub license: Option<String>,
    /// What it needs of its environment, when it says.
    pub compatibility: Option<String>,
    /// Further facts about it (author, version, …).
    pub metadata: BTreeMap<String, String>,
    /// The tools it asks to be pre-approved for (`allowed-tools`): read and
    /// reported; honoured only when the host opts in, and never past a
    /// deny rule.
    pub allowed_tools: Vec<String>,
    /// Front matter fields the format does not define (other clients'
    /// extensions), kept as written; read leniently only.
    pub other_fields: BTreeMap<String, Value>,
    /// Its folder.
    pub root: PathBuf,
    /// The Markdown after the front matter, trimmed: what activation
    /// returns.
    pub body: String,
}
