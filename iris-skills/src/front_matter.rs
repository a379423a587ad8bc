//! `SKILL.md` split into its YAML front matter (between `---` lines at the
//! top) and its Markdown body.

/// The parts of a `SKILL.md`.
pub(crate) struct Parts<'a> {
    /// The YAML between the delimiters.
    pub(crate) yaml: &'a str,
    /// The file's 1-based line on which `yaml` starts.
    pub(crate) first_line: usize,
    /// The Markdown after the closing delimiter, trimmed.
    pub(crate) body: &'a str,
}

/// The front matter and body of `text`, or why it has none.
pub(crate) fn split(text: &str) -> Result<Parts<'_>, &'static str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let opening = lines.next().unwrap_or_default();
    if opening.trim_end() != "---" {
        return Err(
            "it does not start with front matter: a `---` line, `name:` and `description:`, and a closing `---` line",
        );
    }
    let start = opening.len();
    let mut at = start;
    for line in lines {
        if line.trim_end() == "---" {
            let yaml = &text[start..at];
            let body = text[at + line.len()..].trim();
            return Ok(Parts {
                yaml,
                first_line: 2,
                body,
            });
        }
        at += line.len();
    }
    Err("its front matter has no closing `---` line")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_and_body_are_apart() {
        let parts = split("---\nname: a\r\n---\r\n\n# Body\n").ok();
        assert_eq!(parts.as_ref().map(|p| p.yaml), Some("name: a\r\n"));
        assert_eq!(parts.as_ref().map(|p| p.body), Some("# Body"));
        assert!(split("# no front matter\n").is_err());
        assert!(split("---\nname: a\n").is_err());
        assert!(split("\u{feff}---\n---\n").is_ok());
    }
}
