//! A call's arguments from the command line: `key=value` (a string),
//! `key:=json` (any JSON), a file of JSON, or JSON on stdin.

use serde_json::{Map, Value};

/// The arguments `pairs` give, on top of `base` (a file's or stdin's
/// object, when given).
///
/// # Errors
/// What was wrong with a pair, said so that it can be fixed.
pub(crate) fn parse(base: Option<Value>, pairs: &[String]) -> Result<Value, String> {
    let mut object = match base {
        None => Map::new(),
        Some(Value::Object(object)) => object,
        Some(other) => {
            return Err(format!(
                "the arguments must be a JSON object, such as {{\"path\": \"a.txt\"}}; got {}",
                iris_core::schema::json_kind(&other)
            ));
        }
    };
    for pair in pairs {
        if let Some((key, json)) = pair.split_once(":=") {
            let value: Value = serde_json::from_str(json).map_err(|e| {
                format!("`{pair}`: the value after `:=` must be JSON ({e}); for a string, write `{key}={json}`")
            })?;
            object.insert(key.to_owned(), value);
        } else if let Some((key, text)) = pair.split_once('=') {
            object.insert(key.to_owned(), Value::String(text.to_owned()));
        } else {
            return Err(format!(
                "`{pair}` is not an argument; write `key=text` for a string or `key:=json` for anything else (`count:=3`, `tags:=[\"a\"]`)"
            ));
        }
    }
    Ok(Value::Object(object))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pairs_become_an_object() {
        let pairs = [
            "path=a b.txt".to_owned(),
            "count:=3".to_owned(),
            "tags:=[\"x\"]".to_owned(),
            "eq=a=b".to_owned(),
        ];
        assert_eq!(
            parse(Some(json!({"count": 1, "keep": true})), &pairs).ok(),
            Some(json!({"count": 3, "keep": true, "path": "a b.txt", "tags": ["x"], "eq": "a=b"}))
        );
        assert!(
            parse(None, &["count:=three".to_owned()])
                .unwrap_err()
                .contains("must be JSON")
        );
        assert!(
            parse(None, &["loose".to_owned()])
                .unwrap_err()
                .contains("`key=text`")
        );
        assert!(
            parse(Some(json!([1])), &[])
                .unwrap_err()
                .contains("got array")
        );
    }
}
