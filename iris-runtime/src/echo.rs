//! Text echoed back to the model or a person: a call id, a tool name, a
//! path, an intent. Hostile input must not fill the model's context, so
//! every echo goes through here and is cut to a bound, saying how much was
//! left out.

use std::borrow::Cow;

/// Most characters of model- or caller-given text (a call id, a tool name)
/// echoed back in a message: hostile input must not fill the model's context.
pub const ECHO_CHARS: usize = 64;

/// `text` cut to [`ECHO_CHARS`] characters for a message, saying how much
/// was left out.
#[must_use]
pub fn shorten(text: &str) -> Cow<'_, str> {
    shorten_to(text, ECHO_CHARS)
}

/// `text` cut to `max` characters, saying how much was left out.
#[must_use]
pub fn shorten_to(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((cut, _)) => Cow::Owned(format!(
            "{}... ({} more characters)",
            &text[..cut],
            text[cut..].chars().count()
        )),
    }
}
