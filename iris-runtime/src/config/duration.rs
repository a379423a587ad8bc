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
    // Milliseconds are divided, not multiplied by 0.001, so that a day
    // of them is exactly a day.
    match unit.trim() {
        "ms" => Some(number / 1000.0),
        "s" => Some(number),
        "m" => Some(number * 60.0),
        "h" => Some(number * 3600.0),
        _ => None,
    }
}

/// A number in (0, `most`] for one unit, as a regular expression: below
/// `most` with any decimals (`below` matches 1 to `most` - 1 without
/// leading zeros), a fraction of one, or `most` itself.
macro_rules! up_to {
    ($below:literal, $most:literal, $unit:literal) => {
        concat!(
            "^(?:(?:",
            $below,
            ")(?:\\.[0-9]+)?|0\\.[0-9]*[1-9][0-9]*|",
            $most,
            "(?:\\.0+)?)",
            $unit,
            "$"
        )
    };
}

/// The text forms the loader accepts: more than 0 and at most a day.
const WITHIN_A_DAY: [&str; 4] = [
    up_to!("[1-9]|1[0-9]|2[0-3]", "24", "h"),
    up_to!("[1-9][0-9]{0,2}|1[0-3][0-9]{2}|14[0-3][0-9]", "1440", "m"),
    up_to!(
        "[1-9][0-9]{0,3}|[1-7][0-9]{4}|8[0-5][0-9]{3}|86[0-3][0-9]{2}",
        "86400",
        "s"
    ),
    up_to!(
        "[1-9][0-9]{0,6}|[1-7][0-9]{7}|8[0-5][0-9]{6}|86[0-3][0-9]{5}",
        "86400000",
        "ms"
    ),
];

impl JsonSchema for Seconds {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let text: Vec<serde_json::Value> = WITHIN_A_DAY
            .iter()
            .map(|pattern| serde_json::json!({"type": "string", "pattern": pattern}))
            .collect();
        schemars::json_schema!({
            "description": "Seconds, or text such as `5s`, `2m`, `1h`, `250ms`: more than 0 and at most a day.",
            "anyOf": [
                {"type": "number", "exclusiveMinimum": 0, "maximum": 86_400},
                {"anyOf": text}
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
