//! The cassette file: requests and their answers (streamed ones as their
//! events), read and checked for its format.
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of the cassette format this kit writes and reads.
pub const CASSETTE_FORMAT: u32 = 1;

/// A provider's traffic: requests and their answers, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cassette {
    /// [`CASSETTE_FORMAT`].
    pub format: u32,
    /// The exchanges, in the order they happen.
    pub interactions: Vec<Interaction>,
}

/// One request and its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interaction {
    /// What the adapter sent.
    pub request: RecordedHttpRequest,
    /// What the provider answered.
    pub response: RecordedHttpResponse,
}

/// A request as kept: its method, path (with query) and JSON body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedHttpRequest {
    /// `POST`, usually.
    pub method: String,
    /// The path, such as `/v1/chat/completions`.
    pub path: String,
    /// The body, as JSON.
    pub body: Value,
}

/// An answer as kept: a JSON body, or a stream of server-sent events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedHttpResponse {
    /// The HTTP status.
    pub status: u16,
    /// A whole JSON answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// A streamed answer, event by event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<StreamEvent>>,
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamEvent {
    /// Its `event:` name, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// Its `data:`, as JSON when it is JSON (`[DONE]` stays text).
    pub data: Value,
}

/// Why a cassette could not be read, written or played.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    /// The file could not be read or written.
    #[error("cassette `{path}`: {source}")]
    Io {
        /// The file.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
    /// The file is not a cassette.
    #[error("cassette `{path}` is not a cassette of format {CASSETTE_FORMAT}: {why}")]
    Invalid {
        /// The file.
        path: String,
        /// What was wrong.
        why: String,
    },
    /// A recording holds something shaped like a key.
    #[error(
        "refusing to save a cassette that holds something shaped like a key ({shown} at {at}); remove it from the request (keys belong in headers, which are never kept)"
    )]
    HoldsKey {
        /// Where it is.
        at: String,
        /// Its start.
        shown: String,
    },
    /// The server could not start.
    #[error("the cassette server could not start: {0}")]
    Start(std::io::Error),
}

impl Cassette {
    /// Reads the cassette at `path`.
    ///
    /// # Errors
    /// [`CassetteError`] when it cannot be read or is not a cassette.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, CassetteError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| CassetteError::Io {
            path: shown.clone(),
            source,
        })?;
        let cassette: Self = serde_json::from_str(&text).map_err(|e| CassetteError::Invalid {
            path: shown.clone(),
            why: e.to_string(),
        })?;
        if cassette.format != CASSETTE_FORMAT {
            return Err(CassetteError::Invalid {
                path: shown,
                why: format!("it is of format {}", cassette.format),
            });
        }
        Ok(cassette)
    }
}
