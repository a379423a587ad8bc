//! The one way Iris cuts text it shows (to a model, a person, a log or a
//! terminal): by characters, never inside one, and marked where it was
//! cut, so a reader knows something was left out. Every crate cuts text
//! through here.

use std::borrow::Cow;

/// The start of `text`: at most `max` characters, unmarked. For a bound
/// that is not a display (a generated value, a file name's stem); text a
/// reader sees is cut with [`clip`] or [`shorten_to`].
#[must_use]
pub fn prefix(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        None => text,
        Some((cut, _)) => &text[..cut],
    }
}

/// `text` for one line of a list or a message: unchanged when it has at
/// most `max` characters, otherwise its first `max` characters followed by
/// `…`.
#[must_use]
pub fn clip(text: &str, max: usize) -> Cow<'_, str> {
    let head = prefix(text, max);
    if head.len() == text.len() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("{head}…"))
    }
}

/// `text` echoed back to a model: unchanged when it has at most `max`
/// characters, otherwise its first `max` characters and how many more were
/// left out, so hostile input cannot fill the model's context.
#[must_use]
pub fn shorten_to(text: &str, max: usize) -> Cow<'_, str> {
    let head = prefix(text, max);
    if head.len() == text.len() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!(
            "{head}... ({} more characters)",
            text[head.len()..].chars().count()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_count_characters_and_mark_the_cut() {
        assert_eq!(prefix("héllo", 2), "hé");
        assert_eq!(prefix("hi", 5), "hi");
        assert_eq!(clip("héllo wörld", 5), "héllo…");
        assert!(matches!(clip("short", 5), Cow::Borrowed("short")));
        assert_eq!(shorten_to("abcdef", 2), "ab... (4 more characters)");
        assert!(matches!(shorten_to("ab", 2), Cow::Borrowed("ab")));
    }
}
