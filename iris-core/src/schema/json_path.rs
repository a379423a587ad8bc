//! How a place in tool arguments is written: `$.items[2].name`, with a key
//! that is not a plain name written quoted (`$["a.b"]`), so every path
//! names exactly one place however the model spelled its keys.

/// Appends the object key `key` to the path `out`.
pub(crate) fn push_key(out: &mut String, key: &str) {
    if is_plain(key) {
        out.push('.');
        out.push_str(key);
        return;
    }
    out.push('[');
    // A JSON string literal: quotes, backslashes and control characters
    // escaped, which is what a JSONPath reader expects inside brackets.
    out.push_str(&serde_json::Value::from(key).to_string());
    out.push(']');
}

/// Appends the array index `index` to the path `out`.
pub(crate) fn push_index(out: &mut String, index: usize) {
    out.push('[');
    out.push_str(&index.to_string());
    out.push(']');
}

/// A key written after a dot: an ASCII letter or `_`, then letters, digits
/// or `_` (the member-name shorthand of JSON paths, kept to ASCII).
fn is_plain(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(key: &str) -> String {
        let mut out = String::from("$");
        push_key(&mut out, key);
        out
    }

    #[test]
    fn plain_names_follow_a_dot_and_the_rest_are_quoted() {
        assert_eq!(key("name"), "$.name");
        assert_eq!(key("_x9"), "$._x9");
        assert_eq!(key("guest.e"), r#"$["guest.e"]"#);
        assert_eq!(key("e[oail"), r#"$["e[oail"]"#);
        assert_eq!(key(""), r#"$[""]"#);
        assert_eq!(key("9lives"), r#"$["9lives"]"#);
        assert_eq!(key("say \"hi\"\n"), r#"$["say \"hi\"\n"]"#);
        assert_eq!(key("café"), r#"$["café"]"#);
    }
}
