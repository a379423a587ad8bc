//! What of a tool's parameters the search index reads: property names,
//! descriptions and enum values, and the examples inside descriptions, kept
//! apart because they name things a tool handles, not what it is for.

use std::borrow::Cow;

use serde_json::Value;

/// Most schema nodes visited for parameter names, so a hostile schema
/// cannot make indexing slow.
pub(super) const MAX_SCHEMA_NODES: usize = 256;

/// A piece of a tool's parameters that is indexed.
pub(super) enum ParameterText<'s> {
    /// A property name.
    Name(&'s str),
    /// A property's description.
    Description(&'s str),
    /// One string of a property's `enum`.
    Value(&'s str),
}

/// Calls `visit` with each property name, description and enum value in
/// `schema`, nested objects included, within `budget` nodes.
pub(super) fn visit_parameters(
    schema: &Value,
    budget: &mut usize,
    visit: &mut impl FnMut(ParameterText<'_>),
) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    match schema {
        // One pass over the keys: schema maps keep insertion order and hash
        // with SipHash, so a lookup per keyword would cost more than this.
        Value::Object(map) => {
            for (key, child) in map {
                match (key.as_str(), child) {
                    ("properties", Value::Object(properties)) => {
                        for (name, property) in properties {
                            visit(ParameterText::Name(name));
                            if let Some(description) =
                                property.get("description").and_then(Value::as_str)
                            {
                                visit(ParameterText::Description(description));
                            }
                            visit_parameters(property, budget, visit);
                        }
                    }
                    ("enum", Value::Array(values)) => {
                        for value in values.iter().filter_map(Value::as_str) {
                            visit(ParameterText::Value(value));
                        }
                    }
                    ("$defs", Value::Object(definitions)) => {
                        for definition in definitions.values() {
                            visit_parameters(definition, budget, visit);
                        }
                    }
                    ("items" | "anyOf" | "oneOf" | "allOf", _) => {
                        visit_parameters(child, budget, visit);
                    }
                    _ => {}
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                visit_parameters(item, budget, visit);
            }
        }
        _ => {}
    }
}

/// Words that start an example in a parameter description; the example
/// runs to the end of its clause.
const EXAMPLE_MARKERS: &[&str] = &["e.g.", "eg.", "such as", "for example", "for instance"];
/// [`EXAMPLE_MARKERS`] starting a sentence.
const CAPITALIZED_MARKERS: &[&str] = &["E.g.", "Eg.", "Such as", "For example", "For instance"];

/// A parameter description split into its prose and its examples: quoted
/// text (`'..'`, `".."`, `` `..` ``, curly quotes) and what follows an
/// example marker up to the end of the clause.
pub(super) fn split_examples(description: &str) -> (Cow<'_, str>, Cow<'_, str>) {
    // Most descriptions hold no example: nothing to copy then.
    let has_quote = description.contains(['\'', '"', '`', '\u{2018}', '\u{201C}']);
    // Substring search is fast where a case-blind scan is not; markers
    // start a sentence or follow a word, so two casings cover them.
    let has_marker = EXAMPLE_MARKERS
        .iter()
        .chain(CAPITALIZED_MARKERS)
        .any(|marker| description.contains(marker));
    if !has_quote && !has_marker {
        return (Cow::Borrowed(description), Cow::Borrowed(""));
    }
    let lower = description.to_ascii_lowercase();
    let mut prose = String::with_capacity(description.len());
    let mut examples = String::new();
    let mut chars = description.char_indices().peekable();
    while let Some((at, ch)) = chars.next() {
        let closing = match ch {
            '\'' => Some('\''),
            '"' => Some('"'),
            '`' => Some('`'),
            '\u{2018}' => Some('\u{2019}'),
            '\u{201C}' => Some('\u{201D}'),
            _ => None,
        };
        // An apostrophe inside a word ("don't") opens nothing.
        let inside_word = ch == '\''
            && description[..at]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric);
        if let (Some(closing), false) = (closing, inside_word) {
            let rest = &description[at + ch.len_utf8()..];
            if let Some(end) = rest.find(closing) {
                examples.push_str(&rest[..end]);
                examples.push(' ');
                let stop = at + ch.len_utf8() + end;
                while chars.peek().is_some_and(|&(i, _)| i <= stop) {
                    chars.next();
                }
                prose.push(' ');
                continue;
            }
        }
        if let Some(marker) = EXAMPLE_MARKERS
            .iter()
            .find(|m| lower[at..].starts_with(**m) && starts_word(&lower, at))
        {
            let after = at + marker.len();
            let end = lower[after..]
                .find([')', ';', '.', '\n'])
                .map_or(lower.len(), |i| after + i);
            examples.push_str(&description[after..end]);
            examples.push(' ');
            while chars.peek().is_some_and(|&(i, _)| i < end) {
                chars.next();
            }
            prose.push(' ');
            continue;
        }
        prose.push(ch);
    }
    (Cow::Owned(prose), Cow::Owned(examples))
}

fn starts_word(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_are_told_apart_from_prose() {
        let (prose, examples) =
            split_examples("The city, such as 'San Francisco, CA'. Don't guess it.");
        assert_eq!(
            prose.split_whitespace().collect::<Vec<_>>(),
            ["The", "city,", ".", "Don't", "guess", "it."]
        );
        assert!(examples.contains("San Francisco, CA"), "{examples}");
        let (prose, examples) = split_examples("Format (e.g. pdf or docx) of the \"output\" file");
        assert_eq!(
            prose.split_whitespace().collect::<Vec<_>>(),
            ["Format", "(", ")", "of", "the", "file"]
        );
        assert_eq!(
            examples.split_whitespace().collect::<Vec<_>>(),
            ["pdf", "or", "docx", "output"]
        );
    }

    #[test]
    fn names_descriptions_and_enum_values_are_visited() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["Psychologist", "Dentist"], "description": "Who."},
                "near": {"type": "object", "properties": {"city": {"type": "string"}}}
            }
        });
        let mut seen = Vec::new();
        let mut budget = MAX_SCHEMA_NODES;
        visit_parameters(&schema, &mut budget, &mut |text| {
            seen.push(match text {
                ParameterText::Name(t) => format!("name {t}"),
                ParameterText::Description(t) => format!("description {t}"),
                ParameterText::Value(t) => format!("value {t}"),
            });
        });
        assert_eq!(
            seen,
            [
                "name kind",
                "description Who.",
                "value Psychologist",
                "value Dentist",
                "name near",
                "name city"
            ]
        );
    }
}
