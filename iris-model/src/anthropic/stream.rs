//! Reading an Anthropic Messages answer streamed as server-sent events:
//! content blocks opened, filled by deltas (text handed on as it arrives,
//! tool input joined from its JSON fragments) and closed; the stop reason
//! and usage from the message events; an `error` event ends the answer.

use iris_core::ToolUseBlock;
use serde_json::Value;

use crate::sse::SseReader;
use crate::{FinishReason, ModelDelta, ModelError, ModelResponse, OnDelta, Usage};

/// Most content blocks one answer may open; a server naming more is not
/// believed.
const MAX_BLOCKS: usize = 1024;

/// One content block being put together.
enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        input: String,
    },
    /// A block of a kind the run has no use for (thinking, for one).
    Other,
}

/// Reads `response` to its `message_stop`.
pub(super) async fn read(
    response: reqwest::Response,
    on_delta: OnDelta<'_>,
) -> Result<ModelResponse, ModelError> {
    let mut events = SseReader::new(response);
    let mut blocks: Vec<Block> = Vec::new();
    let mut usage = Usage::default();
    let mut stop_reason: Option<String> = None;
    while let Some(event) = events.next().await? {
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
            return Err(ModelError::new(
                "the answer's stream sent an event that is not JSON",
            ));
        };
        match data["type"].as_str() {
            Some("message_start") => {
                usage = super::usage(&data["message"]["usage"]);
            }
            Some("content_block_start") => open_block(&data, &mut blocks, on_delta)?,
            Some("content_block_delta") => fill_block(&data, &mut blocks, on_delta),
            Some("message_delta") => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    stop_reason = Some(reason.to_owned());
                }
                // The delta's counts are running totals; the prompt's are
                // given again only by some servers.
                let delta = &data["usage"];
                if let Some(tokens) = delta["output_tokens"].as_u64() {
                    usage.output_tokens = tokens;
                }
                if delta["input_tokens"].is_u64() {
                    usage = Usage {
                        output_tokens: usage.output_tokens,
                        ..super::usage(delta)
                    };
                }
            }
            Some("message_stop") => return Ok(finished(blocks, stop_reason.as_deref(), usage)),
            Some("error") => {
                let message = data["error"]["message"]
                    .as_str()
                    .unwrap_or("no message given");
                return Err(ModelError::new(format!(
                    "the model endpoint failed mid-stream: {message}"
                )));
            }
            _ => {}
        }
    }
    Err(ModelError::new(
        "the answer's stream ended before it finished (no `message_stop`); ask again",
    ))
}

/// Opens the block a `content_block_start` event names.
///
/// # Errors
/// [`ModelError`] for a block past [`MAX_BLOCKS`] or out of order: a part
/// of the answer is never dropped silently.
fn open_block(
    data: &Value,
    blocks: &mut Vec<Block>,
    on_delta: OnDelta<'_>,
) -> Result<(), ModelError> {
    let index = block_index(data, blocks.len())?;
    let block = &data["content_block"];
    let opened = match block["type"].as_str() {
        Some("text") => {
            let text = block["text"].as_str().unwrap_or_default();
            if !text.is_empty() {
                on_delta(ModelDelta::Text(text));
            }
            Block::Text(text.to_owned())
        }
        Some("tool_use") => {
            let id = block["id"].as_str().unwrap_or_default();
            let name = block["name"].as_str().unwrap_or_default();
            on_delta(ModelDelta::ToolCall {
                index: calls_before(blocks, index),
                id: Some(id),
                name: Some(name),
                arguments: "",
            });
            Block::ToolUse {
                id: id.to_owned(),
                name: name.to_owned(),
                input: String::new(),
            }
        }
        _ => Block::Other,
    };
    if index == blocks.len() {
        blocks.push(opened);
    } else {
        blocks[index] = opened;
    }
    Ok(())
}

/// Adds a `content_block_delta` event's piece to its open block.
fn fill_block(data: &Value, blocks: &mut [Block], on_delta: OnDelta<'_>) {
    let Some(index) = data["index"].as_u64().and_then(|i| usize::try_from(i).ok()) else {
        return;
    };
    let delta = &data["delta"];
    let call = calls_before(blocks, index);
    match (blocks.get_mut(index), delta["type"].as_str()) {
        (Some(Block::Text(text)), Some("text_delta")) => {
            let piece = delta["text"].as_str().unwrap_or_default();
            if !piece.is_empty() {
                text.push_str(piece);
                on_delta(ModelDelta::Text(piece));
            }
        }
        (Some(Block::ToolUse { input, .. }), Some("input_json_delta")) => {
            let piece = delta["partial_json"].as_str().unwrap_or_default();
            input.push_str(piece);
            on_delta(ModelDelta::ToolCall {
                index: call,
                id: None,
                name: None,
                arguments: piece,
            });
        }
        _ => {}
    }
}

/// The place among the answer's calls of a call in block `index`: the
/// calls in the blocks before it.
fn calls_before(blocks: &[Block], index: usize) -> usize {
    blocks
        .iter()
        .take(index)
        .filter(|b| matches!(b, Block::ToolUse { .. }))
        .count()
}

/// The index of a block being opened: the next one, or one already open
/// (blocks come in order).
fn block_index(data: &Value, open: usize) -> Result<usize, ModelError> {
    let named = data["index"].as_u64();
    match named.and_then(|i| usize::try_from(i).ok()) {
        Some(index) if index >= MAX_BLOCKS => Err(ModelError::new(format!(
            "the answer's stream opened more than {MAX_BLOCKS} content blocks; Iris reads at most {MAX_BLOCKS} per answer"
        ))),
        Some(index) if index <= open => Ok(index),
        _ => Err(ModelError::new(format!(
            "the answer's stream opened content block {} when {open} were open; blocks come in order",
            named.map_or_else(|| "without an index".to_owned(), |i| i.to_string())
        ))),
    }
}

fn finished(blocks: Vec<Block>, stop_reason: Option<&str>, usage: Usage) -> ModelResponse {
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in blocks {
        match block {
            Block::Text(piece) => text.push_str(&piece),
            Block::ToolUse { id, name, input } => {
                // A call without arguments streams no fragment at all.
                let input = if input.trim().is_empty() {
                    Value::Object(serde_json::Map::new())
                } else {
                    serde_json::from_str(&input).unwrap_or(Value::String(input))
                };
                tool_calls.push(ToolUseBlock::new(id, name, input));
            }
            Block::Other => {}
        }
    }
    let finish = match stop_reason {
        Some("tool_use") => FinishReason::ToolCalls,
        Some("max_tokens") => FinishReason::Length,
        Some("refusal") => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    };
    ModelResponse {
        text: (!text.is_empty()).then_some(text),
        tool_calls,
        usage,
        finish,
    }
}
