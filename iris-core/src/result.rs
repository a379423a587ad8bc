//! Tool results: what the model reads, what the host keeps, and typed errors.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::{ContentBlock, ImageBlock};

/// Why a call failed, as the model and the host see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// No tool answers to the name.
    UnknownTool,
    /// The tool exists but was not offered in this request.
    ToolNotAvailable,
    /// The arguments did not match the schema.
    InvalidArguments,
    /// The permission policy refused the call.
    PermissionDenied,
    /// A `tool.before` hook refused the call.
    DeniedByHook,
    /// The body panicked.
    ToolPanicked,
    /// The body ran past its deadline.
    Timeout,
    /// The call was cancelled.
    Cancelled,
    /// The body reported a failure.
    Execution,
    /// A call id that already ran was submitted again.
    DuplicateCall,
    /// A path was refused: it leaves the workspace, holds a NUL byte, or
    /// names something other than a regular file.
    PathRefused,
    /// The file or artifact does not exist.
    NotFound,
    /// An edit or overwrite without a current read of the file: never read
    /// in this run, changed on disk since, or the lines were not read.
    StaleRead,
    /// `old_string` matched no text, or more than once without `replace_all`.
    EditMismatch,
    /// The content cannot travel to the model: a binary file, an image that
    /// is too large or of an unsupported type.
    UnsupportedContent,
    /// Iris itself failed; the message says what the host should fix.
    Internal,
    /// The process running the call stopped before its outcome was
    /// recorded: it may or may not have taken effect.
    Interrupted,
}

impl ToolErrorKind {
    /// The kind as written in results and logs, such as `unknown_tool`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolErrorKind::UnknownTool => "unknown_tool",
            ToolErrorKind::ToolNotAvailable => "tool_not_available",
            ToolErrorKind::InvalidArguments => "invalid_arguments",
            ToolErrorKind::PermissionDenied => "permission_denied",
            ToolErrorKind::DeniedByHook => "denied_by_hook",
            ToolErrorKind::ToolPanicked => "tool_panicked",
            ToolErrorKind::Timeout => "timeout",
            ToolErrorKind::Cancelled => "cancelled",
            ToolErrorKind::Execution => "execution",
            ToolErrorKind::DuplicateCall => "duplicate_call",
            ToolErrorKind::PathRefused => "path_refused",
            ToolErrorKind::NotFound => "not_found",
            ToolErrorKind::StaleRead => "stale_read",
            ToolErrorKind::EditMismatch => "edit_mismatch",
            ToolErrorKind::UnsupportedContent => "unsupported_content",
            ToolErrorKind::Internal => "internal",
            ToolErrorKind::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for ToolErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an error result says: its kind, and its message for the model.
/// An error the model reads is a [`ToolResult`] (made with
/// [`ToolResult::error`]); this is that result's error, as
/// [`ToolResult::as_error`] gives it. Shown as `kind: message`, and a
/// standard error, so a host that calls a tool from its own code can `?`
/// it into its own errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct ToolError {
    /// What kind of error.
    pub kind: ToolErrorKind,
    /// What was wrong and what to do, written for the model.
    pub message: String,
}

/// A reference to a saved or published artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRef {
    /// The handle that opens the artifact (and that `read_file` accepts).
    pub handle: String,
    /// The artifact's size in bytes.
    pub size: u64,
    /// The media type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// A name for people, such as the source file's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The outcome of one tool call.
///
/// Three faces: model content (text and image blocks), host data (`data`
/// and `stats`) and artifacts. An error is a `ToolResult` too, with a kind
/// and a message for the model. Results are values: the `with_*` methods
/// return a modified copy, so a middleware can derive its own result from
/// the one it was handed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ToolResult {
    content: Vec<ContentBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
    /// Stats, artifacts and the error are rare next to plain successes;
    /// boxing them keeps the result small where every stage passes it on.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    extra: Option<Box<Extra>>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
struct Extra {
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    stats: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    artifacts: Vec<ArtifactRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<ToolError>,
}

/// Equal when everything a reader sees is equal: a result whose stats and
/// artifacts are empty equals one that never had any (as after a JSON round
/// trip, which leaves empty ones out).
impl PartialEq for ToolResult {
    fn eq(&self, other: &Self) -> bool {
        self.content == other.content
            && self.data == other.data
            && self.stats() == other.stats()
            && self.artifacts() == other.artifacts()
            && self.as_error() == other.as_error()
    }
}

fn empty_stats() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

impl ToolResult {
    /// A successful result holding one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            data: None,
            extra: None,
        }
    }

    /// A successful result holding `content`.
    #[must_use]
    pub fn from_content(content: Vec<ContentBlock>) -> Self {
        Self {
            content,
            data: None,
            extra: None,
        }
    }

    /// A successful result whose model text is `value` as compact JSON and
    /// whose host `data` is `value` itself.
    #[must_use]
    pub fn json(value: Value) -> Self {
        Self {
            content: vec![ContentBlock::text(compact_json(&value))],
            data: Some(value),
            extra: None,
        }
    }

    /// A failed result: the model reads `message`.
    pub fn error(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            content: vec![ContentBlock::text(message.clone())],
            extra: Some(Box::new(Extra {
                error: Some(ToolError { kind, message }),
                ..Extra::default()
            })),
            data: None,
        }
    }

    /// A result holding one image, checked by [`ImageBlock::checked`]; an
    /// unsupported or oversized image becomes an `unsupported_content`
    /// error result that says why.
    #[must_use]
    pub fn image(bytes: &[u8]) -> Self {
        match ImageBlock::checked(bytes) {
            Ok(image) => Self::from_content(vec![ContentBlock::Image(image)]),
            Err(error) => Self::error(ToolErrorKind::UnsupportedContent, error.to_string()),
        }
    }

    /// A result holding the image in file `path`, checked like
    /// [`ToolResult::image`].
    pub fn image_file(path: impl AsRef<std::path::Path>) -> Self {
        match ImageBlock::from_file(path) {
            Ok(image) => Self::from_content(vec![ContentBlock::Image(image)]),
            Err(error) => Self::error(ToolErrorKind::UnsupportedContent, error.to_string()),
        }
    }

    /// The blocks the model reads.
    #[must_use]
    pub fn content(&self) -> &[ContentBlock] {
        &self.content
    }

    /// All text blocks joined by newlines.
    #[must_use]
    pub fn text_content(&self) -> String {
        let mut out = String::new();
        for text in self.content.iter().filter_map(ContentBlock::as_text) {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(text);
        }
        out
    }

    /// Structured data for the host.
    #[must_use]
    pub fn data(&self) -> Option<&Value> {
        self.data.as_ref()
    }

    /// Measurements and notes for the host (timings, input repairs, ...).
    #[must_use]
    pub fn stats(&self) -> &Map<String, Value> {
        match &self.extra {
            Some(extra) => &extra.stats,
            None => empty_stats(),
        }
    }

    /// Artifacts saved or published by this call.
    #[must_use]
    pub fn artifacts(&self) -> &[ArtifactRef] {
        self.extra.as_ref().map_or(&[], |e| &e.artifacts)
    }

    /// The error, when this is an error result.
    #[must_use]
    pub fn as_error(&self) -> Option<&ToolError> {
        self.extra.as_ref().and_then(|e| e.error.as_ref())
    }

    /// The error kind, when this is an error result.
    #[must_use]
    pub fn error_kind(&self) -> Option<ToolErrorKind> {
        self.as_error().map(|e| e.kind)
    }

    /// Whether the call failed.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.as_error().is_some()
    }

    fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Box::default)
    }

    /// A copy with one more text block.
    #[must_use]
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.content.push(ContentBlock::text(text));
        self
    }

    /// A copy with one more image block.
    #[must_use]
    pub fn with_image(mut self, image: ImageBlock) -> Self {
        self.content.push(ContentBlock::Image(image));
        self
    }

    /// A copy whose model content is `content`.
    #[must_use]
    pub fn with_content(mut self, content: Vec<ContentBlock>) -> Self {
        self.content = content;
        self
    }

    /// A copy with host `data` set.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// A copy with `stats[key] = value`.
    #[must_use]
    pub fn with_stat(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.extra_mut().stats.insert(key.into(), value.into());
        self
    }

    /// A copy with one more artifact reference.
    #[must_use]
    pub fn with_artifact(mut self, artifact: ArtifactRef) -> Self {
        self.extra_mut().artifacts.push(artifact);
        self
    }
}

/// `value` as compact JSON, written straight into a growing buffer.
///
/// `Value`'s `Display` goes through the formatter token by token (about 2x
/// slower on objects), and `serde_json::to_string` starts every buffer at
/// 128 bytes, which a result keeps for as long as it lives. A `Value`
/// always serializes to UTF-8; `Display` is only the fallback.
fn compact_json(value: &Value) -> String {
    // Integers, booleans and null, the commonest results after text, are
    // written at their size: the general path grows a buffer from empty and
    // then checks it is UTF-8, twice the instructions of the whole
    // conversion of a small number.
    match value {
        Value::Null => return "null".to_owned(),
        Value::Bool(true) => return "true".to_owned(),
        Value::Bool(false) => return "false".to_owned(),
        Value::Number(number) => {
            if let Some(integer) = number.as_i64() {
                return itoa::Buffer::new().format(integer).to_owned();
            }
            if let Some(integer) = number.as_u64() {
                return itoa::Buffer::new().format(integer).to_owned();
            }
        }
        _ => {}
    }
    let mut buffer = Vec::new();
    match serde_json::to_writer(&mut buffer, value) {
        Ok(()) => String::from_utf8(buffer).unwrap_or_else(|_| value.to_string()),
        Err(_) => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    proptest::proptest! {
        /// The short paths write what serde_json writes.
        #[test]
        fn scalars_are_written_as_serde_json_writes_them(
            signed: i64,
            unsigned: u64,
            float: f64,
            flag: bool,
        ) {
            let mut values = vec![json!(signed), json!(unsigned), json!(flag), Value::Null];
            if float.is_finite() {
                values.push(json!(float));
            }
            for value in values {
                proptest::prop_assert_eq!(compact_json(&value), serde_json::to_string(&value).unwrap());
            }
        }
    }

    #[test]
    fn derived_copies_leave_the_original_alone() {
        let original = ToolResult::text("16");
        let copy = original.clone().with_stat("wrapped_seconds", 0.5);
        assert!(original.stats().is_empty());
        assert_eq!(copy.stats()["wrapped_seconds"], json!(0.5));
        assert_eq!(copy.text_content(), "16");
    }

    #[test]
    fn errors_carry_kind_and_message() {
        let err = ToolResult::error(ToolErrorKind::UnknownTool, "no tool `x`");
        assert_eq!(err.error_kind(), Some(ToolErrorKind::UnknownTool));
        assert_eq!(err.text_content(), "no tool `x`");
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(json["error"]["kind"], "unknown_tool");
    }

    #[test]
    fn json_results_keep_data() {
        let r = ToolResult::json(json!({"a": 1}));
        assert_eq!(r.text_content(), r#"{"a":1}"#);
        assert_eq!(r.data(), Some(&json!({"a": 1})));
    }

    #[test]
    fn json_text_is_compact_and_escaped() {
        let value = json!({"quote": "say \"hi\"\n", "é": [1.5, null, true], "z": {}});
        let r = ToolResult::json(value.clone());
        assert_eq!(
            r.text_content(),
            r#"{"quote":"say \"hi\"\n","é":[1.5,null,true],"z":{}}"#
        );
        assert_eq!(r.text_content(), value.to_string(), "same text as Display");
    }
}
