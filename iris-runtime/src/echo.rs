//! Text echoed back to the model or a person: a call id, a tool name, a
//! path, an intent. Hostile input must not fill the model's context, so
//! every echo is cut to a bound, saying how much was left out (with the
//! cutters of `iris_core::text`, which every crate cuts text with), and
//! what a person is shown has its hidden characters written out.

use std::borrow::Cow;

pub use iris_core::text::shorten_to;

/// Most characters of model- or caller-given text (a call id, a tool name)
/// echoed back in a message: hostile input must not fill the model's context.
pub const ECHO_CHARS: usize = 64;

/// `text` cut to [`ECHO_CHARS`] characters for a message, saying how much
/// was left out.
#[must_use]
pub fn shorten(text: &str) -> Cow<'_, str> {
    shorten_to(text, ECHO_CHARS)
}

/// `text` as a person may be shown it: cut to `max` characters (saying how
/// much was left out), and with the characters that reorder or hide text
/// (bidirectional controls, zero-width and other control characters)
/// written as escapes, so what the person reads is what the run holds.
#[must_use]
pub fn for_person(text: &str, max: usize) -> String {
    let head = iris_core::text::prefix(text, max);
    let mut shown = String::with_capacity(head.len());
    for c in head.chars() {
        if hides(c) {
            shown.push_str(&c.escape_unicode().to_string());
        } else {
            shown.push(c);
        }
    }
    if head.len() < text.len() {
        let rest = text[head.len()..].chars().count();
        shown.push_str("… (");
        shown.push_str(&rest.to_string());
        shown.push_str(" more characters not shown)");
    }
    shown
}

/// Whether `c` reorders or hides text when a terminal, a page or a model's
/// reader shows it:
/// a control character, a format character (Unicode's `Cf`: bidirectional
/// controls, zero-width characters, joiners, the soft hyphen, tag
/// characters), a line or paragraph separator, or a character Unicode
/// says to draw as nothing (`Default_Ignorable_Code_Point`: variation
/// selectors, the Hangul fillers).
#[must_use]
pub fn hides(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{0600}'..='\u{0605}'
                | '\u{061C}'
                | '\u{06DD}'
                | '\u{070F}'
                | '\u{0890}'..='\u{0891}'
                | '\u{08E2}'
                | '\u{115F}'..='\u{1160}'
                | '\u{17B4}'..='\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFFB}'
                | '\u{110BD}'
                | '\u{110CD}'
                | '\u{13430}'..='\u{1343F}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

#[cfg(test)]
mod tests {
    use super::for_person;

    /// A call's arguments as a person is asked about them (finding: the
    /// text was unbounded and bidirectional controls passed raw, so a
    /// person could be shown something other than what runs).
    #[test]
    fn a_person_sees_bounded_text_with_hidden_characters_escaped() {
        let reversed = "{\"path\":\"notes\u{202E}txt.exe\"}";
        assert_eq!(
            for_person(reversed, 100),
            "{\"path\":\"notes\\u{202e}txt.exe\"}"
        );
        assert_eq!(for_person("a\u{200B}b\nc", 100), "a\\u{200b}b\\u{a}c");
        let huge = "x".repeat(1_000_000);
        let shown = for_person(&huge, 2_000);
        assert!(
            shown.ends_with("… (998000 more characters not shown)"),
            "{}",
            &shown[1_990..]
        );
        assert!(shown.chars().count() < 2_100);
    }

    /// Every invisible or format character a question could hide text
    /// with is shown as an escape (finding: word joiners, the soft hyphen,
    /// tag characters, U+2028 and the Hangul filler passed through).
    #[test]
    fn invisible_and_format_characters_are_escaped() {
        for hidden in [
            '\u{2060}',
            '\u{00AD}',
            '\u{E0041}',
            '\u{E007F}',
            '\u{2028}',
            '\u{2029}',
            '\u{3164}',
            '\u{115F}',
            '\u{FE0F}',
            '\u{180E}',
            '\u{FFF9}',
        ] {
            let shown = for_person(&format!("a{hidden}b"), 100);
            assert_eq!(
                shown,
                format!("a{}b", hidden.escape_unicode()),
                "U+{:04X}",
                u32::from(hidden)
            );
        }
        assert_eq!(for_person("café – naïve 日本", 100), "café – naïve 日本");
    }
}
