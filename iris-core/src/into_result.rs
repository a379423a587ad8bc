//! Turning what a tool body returns into a [`ToolResult`].

use std::borrow::Cow;
use std::fmt::Display;

use serde::Serialize;
use serde_json::Value;

use crate::content::{ContentBlock, ImageBlock};
use crate::result::{ToolErrorKind, ToolResult};

/// A value a tool body can return.
///
/// `#[tool]` functions may also return any `T: Serialize` (or
/// `Result<T: Serialize, E: Display>`); the macro picks this trait first and
/// falls back to serialization, so implementing it changes how a type is shown
/// to the model.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "this type cannot become a tool result",
    note = "return `String`, `&str`, `()`, `ToolResult`, a `Serialize` type, or `Result<T, E>` of those with `E: Display`"
)]
pub trait IntoToolResult {
    /// Converts the value.
    fn into_tool_result(self) -> ToolResult;
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> ToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::text(self)
    }
}

impl IntoToolResult for &str {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::text(self)
    }
}

impl IntoToolResult for Cow<'_, str> {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::text(self.into_owned())
    }
}

impl IntoToolResult for Box<str> {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::text(String::from(self))
    }
}

/// A body that returns nothing succeeded; the model is told so, since some
/// providers reject an empty tool result.
impl IntoToolResult for () {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::text("done")
    }
}

impl IntoToolResult for Value {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::json(self)
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::from_content(vec![self])
    }
}

impl IntoToolResult for ImageBlock {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::from_content(vec![ContentBlock::Image(self)])
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::from_content(self)
    }
}

/// `Err` becomes an [`ToolErrorKind::Execution`] error carrying `E`'s message.
impl<T: IntoToolResult, E: Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> ToolResult {
        match self {
            Ok(value) => value.into_tool_result(),
            Err(err) => error_result(&err),
        }
    }
}

/// Wraps a serializable value: compact JSON for the model, the value as `data`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> ToolResult {
        serialized_result(&self.0)
    }
}

/// The result for a serializable value; a value that fails to serialize (a
/// map with non-string keys, a failing `Serialize` impl) is an error result
/// rather than a panic.
pub(crate) fn serialized_result<T: Serialize + ?Sized>(value: &T) -> ToolResult {
    match serde_json::to_value(value) {
        Ok(value) => ToolResult::json(value),
        Err(err) => ToolResult::error(
            ToolErrorKind::Execution,
            format!("the tool's result could not be serialized as JSON: {err}"),
        ),
    }
}

pub(crate) fn error_result(err: &dyn Display) -> ToolResult {
    ToolResult::error(ToolErrorKind::Execution, err.to_string())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    #[test]
    fn conversions() {
        assert_eq!("hi".into_tool_result().text_content(), "hi");
        assert_eq!(().into_tool_result().text_content(), "done");
        let ok: Result<String, std::io::Error> = Ok("x".into());
        assert!(!ok.into_tool_result().is_error());
        let err: Result<String, String> = Err("disk full".into());
        let err = err.into_tool_result();
        assert_eq!(err.error_kind(), Some(ToolErrorKind::Execution));
        assert_eq!(err.text_content(), "disk full");
        let json = Json(BTreeMap::from([("a", 1)])).into_tool_result();
        assert_eq!(json.data(), Some(&json!({"a": 1})));
    }

    #[test]
    fn unserializable_values_become_errors() {
        let bad = BTreeMap::from([((1, 2), "tuple keys")]);
        let result = Json(bad).into_tool_result();
        assert_eq!(result.error_kind(), Some(ToolErrorKind::Execution));
    }
}
