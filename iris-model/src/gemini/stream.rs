//! Reading a Gemini answer streamed as server-sent events: each event is a
//! chunk of the answer with its next parts (text handed on as it arrives,
//! calls whole), the finish reason and usage in the last. The stream ends
//! when the server closes it; one that closes before a finish reason broke
//! off.

use serde_json::Value;

use super::Reading;
use crate::sse::SseReader;
use crate::{ModelError, ModelResponse, OnDelta};

/// Reads `response` to its end.
pub(super) async fn read(
    response: reqwest::Response,
    on_delta: OnDelta<'_>,
) -> Result<ModelResponse, ModelError> {
    let mut events = SseReader::new(response);
    let mut reading = Reading::default();
    let mut finished = false;
    while let Some(event) = events.next().await? {
        let Ok(chunk) = serde_json::from_str::<Value>(&event.data) else {
            return Err(ModelError::new(
                "the answer's stream sent an event that is not JSON",
            ));
        };
        reading.take(&chunk, on_delta)?;
        finished |= chunk["candidates"][0]["finishReason"].is_string()
            || chunk["promptFeedback"]["blockReason"].is_string();
    }
    if !finished {
        return Err(ModelError::new(
            "the answer's stream ended before it finished (no finish reason); ask again",
        ));
    }
    reading.finished()
}
