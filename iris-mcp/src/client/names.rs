//! Model-facing names for remote tools: `prefix__wire_name`, made valid for
//! every provider (`^[A-Za-z0-9_-]{1,64}$`). A name that does not fit as it
//! is gets its other characters replaced and a short hash of the wire name
//! appended, so two wire names never meet in one model-facing name and the
//! same wire name always maps to the same one.

use std::fmt::Write as _;

use iris_core::MAX_TOOL_NAME_LEN;
use sha2::{Digest, Sha256};

/// Hex digits of the hash suffix.
const HASH_DIGITS: usize = 8;

/// The model-facing name of `wire_name` under `prefix`, and whether it had
/// to be changed from `prefix__wire_name` (from `wire_name` itself under
/// an empty prefix: a gateway fronting one server serves its names as
/// they are).
pub(super) fn model_facing(prefix: &str, wire_name: &str) -> (String, bool) {
    let plain = if prefix.is_empty() {
        wire_name.to_owned()
    } else {
        format!("{prefix}__{wire_name}")
    };
    if plain.len() <= MAX_TOOL_NAME_LEN && plain.chars().all(allowed) {
        return (plain, false);
    }
    let mut name: String = plain
        .chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .collect();
    let keep = MAX_TOOL_NAME_LEN - HASH_DIGITS - 1;
    if name.len() > keep {
        // Only ASCII is left, so any byte index is a character boundary.
        name.truncate(keep);
    }
    name.push('_');
    let digest = Sha256::digest(wire_name.as_bytes());
    for byte in digest.iter().take(HASH_DIGITS / 2) {
        let _ = write!(name, "{byte:02x}");
    }
    (name, true)
}

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_stay_and_others_are_shortened_with_a_stable_hash() {
        assert_eq!(
            model_facing("fs", "read_file"),
            ("fs__read_file".to_owned(), false)
        );
        let (dotted, changed) = model_facing("gh", "repos.list");
        assert!(changed);
        assert!(dotted.starts_with("gh__repos_list_"), "{dotted}");
        assert_ne!(dotted, model_facing("gh", "repos_list").0);
        let long = "x".repeat(100);
        let (short, changed) = model_facing("server", &long);
        assert!(changed && short.len() == MAX_TOOL_NAME_LEN, "{short}");
        assert_eq!(short, model_facing("server", &long).0, "deterministic");
        assert_eq!(
            model_facing("", "read_file"),
            ("read_file".to_owned(), false),
            "an empty prefix serves the name as it is"
        );
        assert!(model_facing("", "repos.list").1);
        let (unicode, _) = model_facing("s", "日本語ツール");
        assert!(iris_core::check_tool_name(&unicode).is_ok(), "{unicode}");
    }
}
