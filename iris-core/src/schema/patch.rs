//! [`Patch`]: an argument that tells "leave it", "clear it" and "set it"
//! apart, which `Option<Option<T>>` cannot (serde reads both a missing
//! field and `null` as the outer `None`).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};

/// The schema keyword that marks a [`Patch`] property, so that projections
/// and the `null` handling of strict inputs treat its `null` as "clear".
pub(crate) const PATCH_KEYWORD: &str = "x-iris-patch";

/// An update to an optional value: left out, `null`, or a value.
///
/// | the model sends | you get |
/// |---|---|
/// | nothing (the property is absent) | [`Patch::Keep`] |
/// | `null` | [`Patch::Clear`] |
/// | a value | [`Patch::Set`] |
///
/// ```
/// use iris_core::Patch;
/// # use iris_core::{serde, serde_json};
///
/// #[derive(serde::Deserialize)]
/// # #[serde(crate = "iris_core::serde")]
/// struct UpdateContact {
///     /// The new nickname; `null` removes it, leaving it out keeps it.
///     #[serde(default)]
///     nickname: Patch<String>,
/// }
///
/// let parse = |text| serde_json::from_str::<UpdateContact>(text).unwrap().nickname;
/// assert_eq!(parse("{}"), Patch::Keep);
/// assert_eq!(parse(r#"{"nickname": null}"#), Patch::Clear);
/// assert_eq!(parse(r#"{"nickname": "Bo"}"#), Patch::Set("Bo".to_owned()));
/// ```
///
/// A `#[tool]` parameter of this type is optional (the macro adds
/// `#[serde(default)]`); in an `#[args]` struct or a nested type, put
/// `#[serde(default)]` on the field yourself. Its schema is `T`'s, also
/// accepting `null`; say in the doc comment what `null` does, since the model
/// reads only that.
///
/// Strict providers (OpenAI strict mode) must send every property, so they
/// cannot leave one out: a tool with a `Patch` parameter is sent non-strict,
/// and the projection report says why.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Patch<T> {
    /// The property was left out: keep the current value.
    #[default]
    Keep,
    /// The property was `null`: remove the current value.
    Clear,
    /// The property held a value: replace the current value with it.
    Set(T),
}

impl<T> Patch<T> {
    /// Applies the update to `current`.
    ///
    /// ```
    /// use iris_core::Patch;
    /// let mut nickname = Some("Bo".to_owned());
    /// Patch::Keep.apply_to(&mut nickname);
    /// assert_eq!(nickname.as_deref(), Some("Bo"));
    /// Patch::Clear.apply_to(&mut nickname);
    /// assert_eq!(nickname, None);
    /// ```
    pub fn apply_to(self, current: &mut Option<T>) {
        match self {
            Patch::Keep => {}
            Patch::Clear => *current = None,
            Patch::Set(value) => *current = Some(value),
        }
    }

    /// `Some(None)` to clear, `Some(Some(value))` to set, `None` to keep.
    pub fn into_option(self) -> Option<Option<T>> {
        match self {
            Patch::Keep => None,
            Patch::Clear => Some(None),
            Patch::Set(value) => Some(Some(value)),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Reached only when the property is present: absence is the
        // field's `#[serde(default)]`.
        Ok(match Option::<T>::deserialize(deserializer)? {
            None => Patch::Clear,
            Some(value) => Patch::Set(value),
        })
    }
}

impl<T: JsonSchema> JsonSchema for Patch<T> {
    fn schema_name() -> Cow<'static, str> {
        <Option<T>>::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        Cow::Owned(format!("iris::Patch<{}>", T::schema_id()))
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = <Option<T>>::json_schema(generator);
        schema.insert(PATCH_KEYWORD.to_owned(), true.into());
        schema
    }
}
