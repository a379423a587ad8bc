//! One skill folder read: its `SKILL.md` split, the front matter parsed
//! with each key's place, every field checked, and the problems taken as
//! the strictness says.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use serde_saphyr::Spanned;

use crate::fields::{self, KNOWN, MAX_COMPATIBILITY, MAX_DESCRIPTION};
use crate::front_matter;
use crate::problem::{Problem, Severity, problem};
use crate::skill::{Skill, Strictness};

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// A skill read, with the warnings its reading gave.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReadSkill {
    /// The skill.
    pub skill: Skill,
    /// What was forgiven (read leniently) or is worth knowing.
    pub warnings: Vec<Problem>,
}

type Fields = BTreeMap<String, Spanned<Value>>;

/// Reads the skill in `folder` (its `SKILL.md`).
///
/// # Errors
/// Every problem that keeps it out: read strictly, any problem at all;
/// read leniently, a missing or empty description, front matter that is
/// not YAML, or a `SKILL.md` that cannot be read.
pub fn read_skill(folder: &Path, strictness: Strictness) -> Result<ReadSkill, Vec<Problem>> {
    let file = folder.join(SKILL_FILE);
    // Opened beneath its folder: a `SKILL.md` that links out of it, or is
    // another name for a file elsewhere, is not the skill's own.
    let text = iris_runtime::__wings::open_beneath(folder, Path::new(SKILL_FILE))
        .map_err(|why| format!("cannot read the skill file: {why}"))
        .and_then(|opened| iris_runtime::config::yaml::read_bounded_file(opened, "skill file"))
        .map_err(|message| vec![problem(&file, "", message, Severity::Error)])?;
    let parts =
        front_matter::split(&text).map_err(|why| vec![problem(&file, "", why, Severity::Error)])?;
    let mut reading = Reading {
        file: file.clone(),
        first_line: parts.first_line,
        strictness,
        problems: Vec::new(),
    };
    let fields = reading.parse(parts.yaml)?;
    let folder_name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let skill = reading.skill(&fields, &folder_name, folder, parts.body);
    let (errors, warnings): (Vec<_>, Vec<_>) =
        reading.problems.into_iter().partition(Problem::is_error);
    match skill {
        Some(skill) if errors.is_empty() => Ok(ReadSkill { skill, warnings }),
        _ => {
            let mut all = errors;
            all.extend(warnings);
            all.sort_by_key(|p| (p.line, p.column));
            Err(all)
        }
    }
}

/// The problems found while reading one file.
struct Reading {
    file: PathBuf,
    first_line: usize,
    strictness: Strictness,
    problems: Vec<Problem>,
}

impl Reading {
    /// A problem at `at` that keeps the skill out when read strictly and
    /// only warns when read leniently.
    fn forgivable(&mut self, key: &str, at: Option<&Spanned<Value>>, message: String) {
        let severity = match self.strictness {
            Strictness::Strict => Severity::Error,
            Strictness::Lenient => Severity::Warning,
        };
        self.push(key, at, message, severity);
    }

    /// A problem that keeps the skill out however it is read.
    fn fatal(&mut self, key: &str, at: Option<&Spanned<Value>>, message: String) {
        self.push(key, at, message, Severity::Error);
    }

    fn push(
        &mut self,
        key: &str,
        at: Option<&Spanned<Value>>,
        message: String,
        severity: Severity,
    ) {
        let mut problem = problem(&self.file, key, message, severity);
        if let Some(at) = at {
            let place = at.referenced;
            problem = problem.at(place.line() + self.first_line as u64 - 1, place.column());
        }
        self.problems.push(problem);
    }

    /// The front matter's fields with their places. Read leniently, front
    /// matter that other clients' parsers accept (an unquoted `: ` inside a
    /// value) is read again with such values quoted.
    fn parse(&mut self, yaml: &str) -> Result<Fields, Vec<Problem>> {
        let failed = match iris_runtime::config::yaml::from_str::<Fields>(yaml, "skill file") {
            Ok(fields) => return Ok(fields),
            Err(error) => error,
        };
        if self.strictness == Strictness::Lenient
            && let Some(quoted) = quote_colon_values(yaml)
            && let Ok(fields) =
                iris_runtime::config::yaml::from_str::<Fields>(&quoted, "skill file")
        {
            self.push(
                "",
                None,
                "the front matter is not valid YAML (a value holds an unquoted `: `); it was read with such values quoted, as other clients do: quote them".to_owned(),
                Severity::Warning,
            );
            return Ok(fields);
        }
        let mut problem = problem(
            &self.file,
            failed.key.trim_start_matches('.'),
            format!("the front matter is not YAML: {}", failed.message),
            Severity::Error,
        );
        if let Some(line) = failed.line {
            problem = problem.at(
                line + self.first_line as u64 - 1,
                failed.column.unwrap_or(0),
            );
        }
        Err(vec![problem])
    }

    /// The skill the fields make, every problem recorded on the way; none
    /// when it cannot be made at all.
    fn skill(
        &mut self,
        fields: &Fields,
        folder_name: &str,
        folder: &Path,
        body: &str,
    ) -> Option<Skill> {
        let name = self.name(fields, folder_name);
        let description = self.description(fields);
        let license = self.text(fields, "license", usize::MAX);
        let compatibility = self.text(fields, "compatibility", MAX_COMPATIBILITY);
        let metadata = self.metadata(fields);
        let allowed_tools = self.allowed_tools(fields);
        let mut other_fields = BTreeMap::new();
        for (key, value) in fields {
            if KNOWN.contains(&key.as_str()) {
                continue;
            }
            let hint = iris_runtime::config::yaml::closest(key, KNOWN, "field");
            let message = match self.strictness {
                Strictness::Strict => format!("is not a field of the format; {hint}"),
                Strictness::Lenient => format!(
                    "is not a field of the format (another client's?); kept as written, unused by Iris; {hint}"
                ),
            };
            self.forgivable(key, Some(value), message);
            other_fields.insert(key.clone(), value.value.clone());
        }
        Some(Skill {
            name,
            description: description?,
            license,
            compatibility,
            metadata,
            allowed_tools,
            other_fields,
            root: folder.to_path_buf(),
            body: body.to_owned(),
        })
    }

    fn name(&mut self, fields: &Fields, folder_name: &str) -> String {
        let Some(at) = fields.get("name") else {
            self.forgivable(
                "name",
                None,
                format!(
                    "is missing; write `name: {}` (the folder's name)",
                    fields::suggested_name(folder_name)
                ),
            );
            return folder_name.to_owned();
        };
        let Some(name) = at.value.as_str() else {
            self.forgivable(
                "name",
                Some(at),
                format!(
                    "must be text; write `name: {}`",
                    fields::suggested_name(folder_name)
                ),
            );
            return folder_name.to_owned();
        };
        for problem in fields::name_problems(name, folder_name) {
            self.forgivable("name", Some(at), problem);
        }
        if name.trim().is_empty() {
            return folder_name.to_owned();
        }
        name.to_owned()
    }

    /// The description: without one a skill cannot be offered, so its lack
    /// keeps the skill out however it is read; a long one only warns when
    /// read leniently.
    fn description(&mut self, fields: &Fields) -> Option<String> {
        let Some(at) = fields.get("description") else {
            self.fatal(
                "description",
                None,
                "is missing; say what the skill does and when to use it (a model sees only this before it activates the skill)".to_owned(),
            );
            return None;
        };
        match at.value.as_str() {
            Some(text) if !text.trim().is_empty() => {
                if let Some(problem) =
                    fields::text_problem("description", &at.value, MAX_DESCRIPTION)
                {
                    self.forgivable("description", Some(at), problem);
                }
                Some(text.trim().to_owned())
            }
            _ => {
                let problem = fields::text_problem("description", &at.value, MAX_DESCRIPTION)
                    .unwrap_or_default();
                self.fatal("description", Some(at), problem);
                None
            }
        }
    }

    fn text(&mut self, fields: &Fields, key: &str, max: usize) -> Option<String> {
        let at = fields.get(key)?;
        if let Some(problem) = fields::text_problem(key, &at.value, max) {
            self.forgivable(key, Some(at), problem);
        }
        at.value.as_str().map(str::to_owned)
    }

    fn metadata(&mut self, fields: &Fields) -> BTreeMap<String, String> {
        let Some(at) = fields.get("metadata") else {
            return BTreeMap::new();
        };
        let (entries, problems) = fields::metadata(&at.value);
        for problem in problems {
            self.forgivable("metadata", Some(at), problem);
        }
        entries.into_iter().collect()
    }

    fn allowed_tools(&mut self, fields: &Fields) -> Vec<String> {
        let Some(at) = fields.get("allowed-tools") else {
            return Vec::new();
        };
        let (tools, problem) = fields::allowed_tools(&at.value);
        if let Some(problem) = problem {
            self.forgivable("allowed-tools", Some(at), problem);
        }
        tools
    }
}

/// `yaml` with each top-level plain value that holds `: ` quoted, or
/// `None` when there is none to quote.
fn quote_colon_values(yaml: &str) -> Option<String> {
    let mut changed = false;
    let mut out = String::with_capacity(yaml.len() + 16);
    for line in yaml.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let ending = &line[content.len()..];
        let rewritten = content.split_once(": ").and_then(|(key, value)| {
            let plain_key = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            let value = value.trim();
            let plain_value = !value.is_empty()
                && !value.starts_with(['"', '\'', '|', '>', '{', '[', '&', '*', '!', '#']);
            (plain_key && plain_value && value.contains(": "))
                .then(|| format!("{key}: '{}'", value.replace('\'', "''")))
        });
        match rewritten {
            Some(line) => {
                changed = true;
                out.push_str(&line);
            }
            None => out.push_str(content),
        }
        out.push_str(ending);
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unquoted_values_with_a_colon_are_quoted() {
        let yaml = "name: pdf\ndescription: Use this skill when: the user asks\nlicense: 'MIT: see file'\n";
        assert_eq!(
            quote_colon_values(yaml).as_deref(),
            Some(
                "name: pdf\ndescription: 'Use this skill when: the user asks'\nlicense: 'MIT: see file'\n"
            )
        );
        assert!(quote_colon_values("name: pdf\n").is_none());
    }
}
