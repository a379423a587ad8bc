//! Whether a fault's path names a place in the input.

use serde_json::Value;

/// Whether the `$`-rooted `path` (`$.items[2].name`, `$["a.b"]`) names a
/// value of `input`. A plain key follows a dot; any other key is a JSON
/// string in brackets, so each path reads one way only.
#[must_use]
pub fn points_inside(input: &Value, path: &str) -> bool {
    let Some(mut rest) = path.strip_prefix('$') else {
        return false;
    };
    let mut node = input;
    while !rest.is_empty() {
        let Some((child, tail)) = step(node, rest) else {
            return false;
        };
        node = child;
        rest = tail;
    }
    true
}

/// The value one segment of `rest` names inside `node`, and what follows.
fn step<'v, 'p>(node: &'v Value, rest: &'p str) -> Option<(&'v Value, &'p str)> {
    if let Some(quoted) = rest
        .strip_prefix('[')
        .filter(|after| after.starts_with('"'))
    {
        // A quoted key: read one JSON string, then the closing bracket.
        let mut strings = serde_json::Deserializer::from_str(quoted).into_iter::<String>();
        let key = strings.next()?.ok()?;
        let tail = quoted[strings.byte_offset()..].strip_prefix(']')?;
        return Some((node.as_object()?.get(&key)?, tail));
    }
    if let Some(after) = rest.strip_prefix('[') {
        let (index, tail) = after.split_once(']')?;
        return Some((node.get(index.parse::<usize>().ok()?)?, tail));
    }
    let after = rest.strip_prefix('.')?;
    let end = after.find(['.', '[']).unwrap_or(after.len());
    let (key, tail) = after.split_at(end);
    Some((node.as_object()?.get(key)?, tail))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::points_inside;

    #[test]
    fn each_path_reads_one_way() {
        let input = json!({"guest": {"e[oail": 1}, "guest.e": 99, "a": [{"b": 2}]});
        assert!(points_inside(&input, "$"));
        assert!(points_inside(&input, r#"$.guest["e[oail"]"#));
        assert!(points_inside(&input, r#"$["guest.e"]"#));
        assert!(points_inside(&input, "$.a[0].b"));
        assert!(!points_inside(&input, "$.guest.e[oail"));
        assert!(!points_inside(&input, "$.a[1]"));
        assert!(!points_inside(&input, r#"$["guest.e""#));
        assert!(!points_inside(&input, "$.nowhere"));
    }
}
