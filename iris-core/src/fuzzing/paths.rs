//! Whether a fault's path names a place in the input.

use serde_json::Value;

/// Whether the `$`-rooted `path` (`$.items[2].name`) names a value of
/// `input`. Keys are printed as they are, so a key holding `.` or `[` is
/// matched against the object's own keys, longest first.
#[must_use]
pub fn points_inside(input: &Value, path: &str) -> bool {
    let Some(mut rest) = path.strip_prefix('$') else {
        return false;
    };
    let mut node = input;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let Some((index, tail)) = after.split_once(']') else {
                return false;
            };
            let Some(item) = index.parse::<usize>().ok().and_then(|i| node.get(i)) else {
                return false;
            };
            node = item;
            rest = tail;
        } else if let Some(after) = rest.strip_prefix('.') {
            let Some(object) = node.as_object() else {
                return false;
            };
            let found = object
                .iter()
                .filter(|(key, _)| {
                    after.strip_prefix(key.as_str()).is_some_and(|tail| {
                        tail.is_empty() || tail.starts_with('.') || tail.starts_with('[')
                    })
                })
                .max_by_key(|(key, _)| key.len());
            let Some((key, child)) = found else {
                return false;
            };
            node = child;
            rest = &after[key.len()..];
        } else {
            return false;
        }
    }
    true
}
