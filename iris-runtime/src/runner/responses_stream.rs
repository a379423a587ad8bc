//! Reading an OpenAI Responses answer streamed as server-sent events: text
//! deltas handed on as they arrive; the whole answer, calls and usage
//! included, read from the final `response.completed` (or
//! `response.incomplete`) event, the same way an unstreamed answer is.

use serde_json::Value;

use super::model::{ModelError, ModelResponse, OnText};
use super::sse::SseReader;

/// Reads `response` to its final event; `parse` reads the answer it holds.
pub(super) async fn read(
    response: reqwest::Response,
    on_text: OnText<'_>,
    parse: fn(&Value) -> Result<ModelResponse, ModelError>,
) -> Result<ModelResponse, ModelError> {
    let mut events = SseReader::new(response);
    while let Some(event) = events.next().await? {
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
            return Err(ModelError::new(
                "the answer's stream sent an event that is not JSON",
            ));
        };
        match data["type"].as_str() {
            Some("response.output_text.delta") => {
                if let Some(piece) = data["delta"].as_str().filter(|p| !p.is_empty()) {
                    on_text(piece);
                }
            }
            Some("response.completed" | "response.incomplete") => {
                return parse(&data["response"]);
            }
            Some("response.failed") => {
                let message = data["response"]["error"]["message"]
                    .as_str()
                    .unwrap_or("no message given");
                return Err(ModelError::new(format!(
                    "the model endpoint failed mid-stream: {message}"
                )));
            }
            Some("error") => {
                let message = data["message"]
                    .as_str()
                    .or_else(|| data["error"]["message"].as_str())
                    .unwrap_or("no message given");
                return Err(ModelError::new(format!(
                    "the model endpoint failed mid-stream: {message}"
                )));
            }
            _ => {}
        }
    }
    Err(ModelError::new(
        "the answer's stream ended before it finished (no `response.completed`); ask again",
    ))
}
