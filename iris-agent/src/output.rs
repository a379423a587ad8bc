//! Typed output: what an agent's final answer must be. A Rust type (or, for
//! agent files, a JSON Schema) is sent with the provider's native structured
//! output; the answer is then checked by the same parser as tool arguments
//! (the schema's walk, and the type's own deserializer), and one that does
//! not fit goes back to the model with its located faults, a few times.

use std::sync::Arc;

use iris_core::ArgumentError;
use iris_core::schemars::JsonSchema;
use iris_model::OutputFormat;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A check of an answer beyond its schema: a Rust type's own parser.
type Parse = Arc<dyn Fn(&Value) -> Result<(), ArgumentError> + Send + Sync>;

/// What an agent's final answer must be: a value of a Rust type
/// ([`Output::of`]) or of a JSON Schema ([`Output::schema`]).
///
/// Providers take only objects as structured output: a type or schema that
/// is not one (a list, a string, an enum) travels as the one property
/// `response` of an object, and the value read back is the property's.
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Invoice {
///     /// Who is billed.
///     customer: String,
///     /// In cents.
///     total: u64,
/// }
///
/// let output = iris_agent::Output::of::<Invoice>().retries(1);
/// assert_eq!(output.format().name(), "Invoice");
/// assert_eq!(output.format().schema()["required"], serde_json::json!(["customer", "total"]));
/// let invoice = output.check(r#"{"customer": "Ada", "total": 1200}"#)?;
/// assert_eq!(invoice["total"], 1200);
/// assert!(output.check(r#"{"customer": "Ada", "total": -1}"#).is_err());
/// # Ok::<(), iris_agent::OutputError>(())
/// ```
#[derive(Clone)]
pub struct Output {
    format: OutputFormat,
    /// The format's schema, read once for checking answers.
    checked: iris_core::schema::ValueCheck,
    parse: Option<Parse>,
    retries: u32,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output")
            .field("name", &self.format.name())
            .field("typed", &self.parse.is_some())
            .field("retries", &self.retries)
            .finish_non_exhaustive()
    }
}

/// Why an answer is not the output its run asks for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The answer is not JSON.
    #[error("the answer is not JSON ({why}); answer with only the JSON value")]
    NotJson {
        /// What the JSON reader said.
        why: String,
    },
    /// The answer is JSON, but not of the output's shape.
    #[error("the answer does not fit the output's schema: {0}")]
    Mismatch(#[source] ArgumentError),
    /// The run did not finish with an output to read.
    #[error("the run has no output to read: {0}")]
    Missing(String),
}

impl Output {
    /// Answers retried unless set: an answer that does not fit goes back to
    /// the model this many times before the run ends without an output.
    pub const DEFAULT_RETRIES: u32 = 2;

    /// Answers of the Rust type `T`, named by `T`'s schema name (the
    /// type's name). `T`'s schema is its schema as a tool's arguments
    /// (objects closed as `T` reads them), and an answer must also parse
    /// into `T`.
    #[must_use]
    pub fn of<T: DeserializeOwned + JsonSchema + 'static>() -> Self {
        let schema = iris_core::schema::input_schema_for::<T>();
        let parse: Parse =
            Arc::new(|value: &Value| iris_core::schema::parse_arguments::<T>(value).map(drop));
        Self::new(&T::schema_name(), schema, Some(parse))
    }

    /// Answers of `schema` (a JSON Schema), named `name` (made a name every
    /// provider takes: letters, digits, `_` and `-`, at most 64).
    #[must_use]
    pub fn schema(name: &str, schema: Value) -> Self {
        Self::new(name, schema, None)
    }

    fn new(name: &str, schema: Value, parse: Option<Parse>) -> Self {
        let format = OutputFormat::new(name, schema);
        Self {
            checked: iris_core::schema::ValueCheck::new(format.schema()),
            format,
            parse,
            retries: Self::DEFAULT_RETRIES,
        }
    }

    /// An answer that does not fit goes back to the model at most `count`
    /// times (by default [`Output::DEFAULT_RETRIES`]); 0 ends the run at
    /// the first.
    #[must_use]
    pub fn retries(mut self, count: u32) -> Self {
        self.retries = count;
        self
    }

    /// The schema and name sent to the provider.
    #[must_use]
    pub fn format(&self) -> &OutputFormat {
        &self.format
    }

    /// How many times an answer that does not fit goes back to the model.
    #[must_use]
    pub fn retry_count(&self) -> u32 {
        self.retries
    }

    /// The value of the answer `text`, or why it is not this output.
    ///
    /// # Errors
    /// [`OutputError::NotJson`] or [`OutputError::Mismatch`] with every
    /// fault located.
    pub fn check(&self, text: &str) -> Result<Value, OutputError> {
        let value: Value =
            serde_json::from_str(unfenced(text)).map_err(|err| OutputError::NotJson {
                why: err.to_string(),
            })?;
        // A strict provider answers `null` for the optional properties it
        // was made to require: they read as left out.
        let schema = self.format.schema();
        let stripped = match iris_core::schema::without_optional_nulls(&value, schema) {
            std::borrow::Cow::Owned(stripped) => Some(stripped),
            std::borrow::Cow::Borrowed(_) => None,
        };
        let value = stripped.unwrap_or(value);
        self.checked
            .check(&value, schema)
            .map_err(OutputError::Mismatch)?;
        let value = self.format.value_of(value);
        if let Some(parse) = &self.parse {
            parse(&value).map_err(OutputError::Mismatch)?;
        }
        Ok(value)
    }
}

/// Most text of an answer read for partial values as it streams: past it,
/// observers wait for the whole answer (reading a prefix again at every
/// piece costs the square of its length).
const MAX_PARTIAL_BYTES: usize = 256 * 1024;

impl Output {
    /// The value the start of an answer, `text`, holds so far: its JSON
    /// read as far as it is valid (open strings, lists and objects closed
    /// where the text stops), for a form that fills in as the answer
    /// streams. `None` before any value starts, or past 256 KiB.
    #[must_use]
    pub fn partial(&self, text: &str) -> Option<Value> {
        if text.len() > MAX_PARTIAL_BYTES {
            return None;
        }
        let trimmed = text.trim_start();
        let body = trimmed
            .strip_prefix("```json")
            .or_else(|| trimmed.strip_prefix("```"))
            .unwrap_or(trimmed);
        let parsed = jiter::JsonValue::parse_with_config(
            body.trim().as_bytes(),
            false,
            jiter::PartialMode::TrailingStrings,
        )
        .ok()?;
        Some(self.format.value_of(from_jiter(&parsed)))
    }
}

/// A value read by the partial reader as a JSON value.
fn from_jiter(value: &jiter::JsonValue<'_>) -> Value {
    match value {
        jiter::JsonValue::Null => Value::Null,
        jiter::JsonValue::Bool(b) => Value::Bool(*b),
        jiter::JsonValue::Int(i) => Value::from(*i),
        jiter::JsonValue::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
        }
        jiter::JsonValue::Str(s) => Value::String(s.to_string()),
        jiter::JsonValue::Array(items) => Value::Array(items.iter().map(from_jiter).collect()),
        jiter::JsonValue::Object(entries) => Value::Object(
            entries
                .iter()
                .map(|(key, value)| (key.to_string(), from_jiter(value)))
                .collect(),
        ),
    }
}

/// The text inside one Markdown code fence, if the model wrapped its JSON
/// in one (`` ```json ``), else `text` trimmed.
fn unfenced(text: &str) -> &str {
    let trimmed = text.trim();
    trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .map_or(trimmed, str::trim)
}
