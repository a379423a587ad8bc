//! JSON Pointer helpers shared by the schema rewrites.

/// Appends `token` to a JSON Pointer, escaping `~` and `/`.
pub(super) fn child(at: &str, token: &str) -> String {
    let escaped = token.replace('~', "~0").replace('/', "~1");
    format!("{at}/{escaped}")
}

/// The `$defs` name a local reference points to (`#/$defs/Name`).
pub(super) fn local_def_name(reference: &str) -> Option<&str> {
    reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))
}
