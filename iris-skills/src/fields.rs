//! The rules of each front matter field, as the format states them. Each
//! check says what is wrong and the closest valid value; the reader decides
//! (by strictness) whether it keeps the skill out.

use serde_json::Value;

/// Longest `name`, in characters.
pub(crate) const MAX_NAME: usize = 64;
/// Longest `description`, in characters.
pub(crate) const MAX_DESCRIPTION: usize = 1024;
/// Longest `compatibility`, in characters.
pub(crate) const MAX_COMPATIBILITY: usize = 500;

/// The fields the format defines.
pub(crate) const KNOWN: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// What is wrong with `name` (in a folder named `folder`), each with the
/// closest valid value. A name of Unicode lowercase letters (which the
/// format's reference validator accepts) is wrong here only for being
/// outside ASCII, so that every client, file system and tool schema takes
/// it as written.
pub(crate) fn name_problems(name: &str, folder: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let length = name.chars().count();
    let suggested = suggested_name(name);
    let instead = if suggested.is_empty() {
        format!("for example `{}`", suggested_name(folder))
    } else {
        format!("for example `{suggested}`")
    };
    if length == 0 {
        problems.push(format!(
            "is empty; name the skill after its folder, `{folder}`"
        ));
        return problems;
    }
    if length > MAX_NAME {
        problems.push(format!(
            "is {length} characters long; it may have at most {MAX_NAME} ({instead})"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        problems.push(format!(
            "`{name}` may hold only lowercase ASCII letters, digits and hyphens ({instead})"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push(format!("`{name}` starts or ends with a hyphen ({instead})"));
    }
    if name.contains("--") {
        problems.push(format!("`{name}` holds two hyphens in a row ({instead})"));
    }
    if name != folder {
        problems.push(format!(
            "`{name}` is not its folder's name, `{folder}`: rename one to match the other"
        ));
    }
    problems
}

/// `name` made valid: lowercase ASCII, each run of other characters one
/// hyphen, no hyphen at either end, at most [`MAX_NAME`] characters.
pub(crate) fn suggested_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = iris_core::text::prefix(out.trim_matches('-'), MAX_NAME).to_owned();
    trimmed.trim_end_matches('-').to_owned()
}

/// What is wrong with text field `key` limited to `max` characters.
pub(crate) fn text_problem(key: &str, value: &Value, max: usize) -> Option<String> {
    let Some(text) = value.as_str() else {
        return Some(format!(
            "must be text, not {}; quote it",
            iris_core::schema::json_kind(value)
        ));
    };
    let length = text.chars().count();
    if text.trim().is_empty() {
        return Some(match key {
            "description" => "is empty; say what the skill does and when to use it".to_owned(),
            _ => "is empty; leave it out instead".to_owned(),
        });
    }
    (length > max).then(|| {
        format!("is {length} characters long; it may have at most {max}: keep it short and move detail into the body")
    })
}

/// `metadata` as a map of text to text, and what was wrong on the way
/// (values that are not text are kept as their JSON text).
pub(crate) fn metadata(value: &Value) -> (Vec<(String, String)>, Vec<String>) {
    let Some(map) = value.as_object() else {
        return (
            Vec::new(),
            vec![format!(
                "must be a mapping of names to text (`author: example-org`), not {}",
                iris_core::schema::json_kind(value)
            )],
        );
    };
    let mut entries = Vec::new();
    let mut problems = Vec::new();
    for (key, value) in map {
        match value {
            Value::String(text) => entries.push((key.clone(), text.clone())),
            Value::Number(_) | Value::Bool(_) => {
                problems.push(format!("`{key}` must be text: write `{key}: \"{value}\"`"));
                entries.push((key.clone(), value.to_string()));
            }
            other => problems.push(format!(
                "`{key}` must be text, not {}",
                iris_core::schema::json_kind(other)
            )),
        }
    }
    (entries, problems)
}

/// `allowed-tools` as a list of tool names, and what was wrong (the
/// format says a space-separated string; a list, which some clients
/// write, is read too).
pub(crate) fn allowed_tools(value: &Value) -> (Vec<String>, Option<String>) {
    match value {
        Value::String(text) => (text.split_whitespace().map(str::to_owned).collect(), None),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            let names: Vec<String> = items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            let joined = names.join(" ");
            (
                names,
                Some(format!(
                    "must be one space-separated string: `allowed-tools: {joined}`"
                )),
            )
        }
        other => (
            Vec::new(),
            Some(format!(
                "must be one space-separated string of tool names, not {}",
                iris_core::schema::json_kind(other)
            )),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_format() {
        assert!(name_problems("pdf-processing", "pdf-processing").is_empty());
        assert!(name_problems("a1", "a1").is_empty());
        let upper = name_problems("PDF-Processing", "PDF-Processing");
        assert!(upper[0].contains("`pdf-processing`"), "{upper:?}");
        assert!(name_problems("-pdf", "-pdf")[0].contains("starts or ends"));
        assert!(name_problems("pdf--processing", "pdf--processing")[0].contains("two hyphens"));
        assert!(name_problems("my_skill", "my_skill")[0].contains("`my-skill`"));
        let long = "a".repeat(65);
        assert!(name_problems(&long, &long)[0].contains("at most 64"));
        assert!(name_problems("correct-name", "wrong-name")[0].contains("`wrong-name`"));
        // What the reference validator accepts as Unicode lowercase is not
        // ASCII: read leniently, it loads with a warning.
        assert_eq!(name_problems("мой-навык", "мой-навык").len(), 1);
        assert_eq!(suggested_name("  My Skill!! v2 "), "my-skill-v2");
    }

    #[test]
    fn text_fields_have_their_bounds() {
        assert!(text_problem("description", &Value::from("Does a thing."), 1024).is_none());
        assert!(
            text_problem("description", &Value::from("x".repeat(1025)), 1024)
                .is_some_and(|p| p.contains("1025 characters"))
        );
        assert!(text_problem("description", &Value::from(" "), 1024).is_some());
        assert!(text_problem("compatibility", &Value::from(3), 500).is_some());
    }
}
