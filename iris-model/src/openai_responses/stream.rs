//! Reading an OpenAI Responses answer streamed as server-sent events: text
//! deltas handed on as they arrive; the whole answer, calls and usage
//! included, read from the final `response.completed` (or
//! `response.incomplete`) event, the same way an unstreamed answer is.

use serde_json::Value;

use crate::sse::SseReader;
use crate::{ModelDelta, ModelError, ModelResponse, OnDelta};

/// Most calls one answer's deltas are told apart for.
const MAX_CALLS: usize = 1024;

/// Reads `response` to its final event; `parse` reads the answer it holds.
pub(super) async fn read(
    response: reqwest::Response,
    on_delta: OnDelta<'_>,
    parse: fn(&Value) -> Result<ModelResponse, ModelError>,
) -> Result<ModelResponse, ModelError> {
    let mut events = SseReader::new(response);
    // The output indexes of the answer's calls, in the order they appeared.
    let mut calls: Vec<u64> = Vec::new();
    while let Some(event) = events.next().await? {
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
            return Err(ModelError::new(
                "the answer's stream sent an event that is not JSON",
            ));
        };
        match data["type"].as_str() {
            Some("response.output_text.delta") => {
                if let Some(piece) = data["delta"].as_str().filter(|p| !p.is_empty()) {
                    on_delta(ModelDelta::Text(piece));
                }
            }
            Some("response.output_item.added") if data["item"]["type"] == "function_call" => {
                let index = call_index(&mut calls, &data);
                on_delta(ModelDelta::ToolCall {
                    index,
                    id: data["item"]["call_id"].as_str(),
                    name: data["item"]["name"].as_str(),
                    arguments: data["item"]["arguments"].as_str().unwrap_or_default(),
                });
            }
            Some("response.function_call_arguments.delta") => {
                let index = call_index(&mut calls, &data);
                on_delta(ModelDelta::ToolCall {
                    index,
                    id: None,
                    name: None,
                    arguments: data["delta"].as_str().unwrap_or_default(),
                });
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

/// The place among the answer's calls of the call at the event's output
/// index, given one when first seen.
fn call_index(calls: &mut Vec<u64>, data: &Value) -> usize {
    let output = data["output_index"].as_u64().unwrap_or(u64::MAX);
    calls.iter().position(|&o| o == output).unwrap_or_else(|| {
        // Bounded, so a server naming endless calls cannot grow it.
        if calls.len() < MAX_CALLS {
            calls.push(output);
        }
        calls.len() - 1
    })
}
