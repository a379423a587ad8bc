//! Durations as configuration files write them: a number of seconds, or
//! text such as `5s`, `2m`, `250ms`.

use schemars::JsonSchema;
use serde::Deserialize;

/// A duration: a number of seconds, or text such as `5s`, `2m`, `1h`,
/// `250ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Seconds(pub std::time::Duration);

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Number(f64),
            Text(String),
        }
        let seconds = match Written::deserialize(deserializer)? {
            Written::Number(seconds) => seconds,
            Written::Text(text) => parse_seconds(&text).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "`{text}` is not a duration; write a number of seconds or text such as `5s`, `2m`, `250ms`"
                ))
            })?,
        };
        if !(seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0) {
            return Err(serde::de::Error::custom(
                "a duration must be more than 0 and at most a day (86400 seconds)",
            ));
        }
        Ok(Self(std::time::Duration::from_secs_f64(seconds)))
    }
}

fn parse_seconds(text: &str) -> Option<f64> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let factor = match unit.trim() {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    Some(number * factor)
}

impl JsonSchema for Seconds {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Seconds, or text such as `5s`, `2m`, `1h`, `250ms`.",
            "anyOf": [
                {"type": "number", "exclusiveMinimum": 0},
                {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?(ms|s|m|h)$"}
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::parse_seconds;

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(parse_seconds("5s"), Some(5.0));
        assert_eq!(parse_seconds("2m"), Some(120.0));
        assert_eq!(parse_seconds("250ms"), Some(0.25));
        assert_eq!(parse_seconds("1.5h"), Some(5400.0));
        assert_eq!(parse_seconds("5"), None);
        assert_eq!(parse_seconds("five s"), None);
    }
}
