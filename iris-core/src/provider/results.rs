//! Projections of [`ToolResult`]s into the messages that carry them back to
//! each provider, images included.
//!
//! | provider | function | shape |
//! |---|---|---|
//! | OpenAI Chat Completions | [`openai_chat_result`] | a `tool` message with the text; images follow in a `user` message of `image_url` parts (tool messages take text only) |
//! | OpenAI Responses | [`openai_responses_result`] | a `function_call_output` item; with images, its `output` is a list of `input_text` and `input_image` parts |
//! | Anthropic Messages | [`anthropic_result`] | a `tool_result` block of `text` and base64 `image` blocks, `is_error` on failures |
//! | Gemini | [`gemini_result`] | a `functionResponse` part, then one `inlineData` part per image |
//!
//! Images were checked when the tool made them (type and size); a type a
//! provider does not take (GIF for Gemini) is replaced by a text part that
//! says so, never dropped silently.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::content::{ContentBlock, ImageBlock};
use crate::result::ToolResult;

/// Image types Gemini's `inlineData` takes for images.
const GEMINI_IMAGE_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/webp",
    "image/heic",
    "image/heif",
];

/// The messages that answer an OpenAI Chat Completions tool call.
#[must_use]
pub fn openai_chat_result(call_id: &str, result: &ToolResult) -> Vec<Value> {
    let mut messages = vec![json!({
        "role": "tool",
        "tool_call_id": call_id,
        "content": text_or_placeholder(result),
    })];
    let images: Vec<&ImageBlock> = images(result).collect();
    if !images.is_empty() {
        let mut parts = vec![json!({
            "type": "text",
            "text": format!("Images returned by tool call {call_id}:"),
        })];
        parts.extend(
            images
                .iter()
                .map(|image| json!({"type": "image_url", "image_url": {"url": image.data_url()}})),
        );
        messages.push(json!({"role": "user", "content": parts}));
    }
    messages
}

/// The `function_call_output` input item that answers an OpenAI Responses
/// function call.
#[must_use]
pub fn openai_responses_result(call_id: &str, result: &ToolResult) -> Value {
    if images(result).next().is_none() {
        return json!({
            "type": "function_call_output",
            "call_id": call_id,
            "output": text_or_placeholder(result),
        });
    }
    let parts: Vec<Value> = result
        .content()
        .iter()
        .map(|block| match block {
            ContentBlock::Image(image) => {
                json!({
                    "type": "input_image",
                    "image_url": image.data_url(),
                    "detail": "auto",
                })
            }
            other => json!({"type": "input_text", "text": other.as_text().unwrap_or_default()}),
        })
        .collect();
    json!({"type": "function_call_output", "call_id": call_id, "output": parts})
}

/// The `tool_result` content block that answers an Anthropic `tool_use`.
#[must_use]
pub fn anthropic_result(tool_use_id: &str, result: &ToolResult) -> Value {
    let content: Vec<Value> = result
        .content()
        .iter()
        .map(|block| match block {
            ContentBlock::Image(image) => json!({
                "type": "image",
                "source": {"type": "base64", "media_type": image.media_type, "data": &*image.data},
            }),
            other => json!({"type": "text", "text": other.as_text().unwrap_or_default()}),
        })
        .collect();
    let mut block = json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": content});
    if result.is_error() {
        block["is_error"] = Value::Bool(true);
    }
    block
}

/// The parts that answer a Gemini `functionCall` of tool `name`.
#[must_use]
pub fn gemini_result(name: &str, result: &ToolResult) -> Vec<Value> {
    let mut text = result.text_content();
    let mut image_parts = Vec::new();
    for image in images(result) {
        if GEMINI_IMAGE_TYPES.contains(&image.media_type.as_str()) {
            image_parts.push(json!({
                "inlineData": {"mimeType": image.media_type, "data": &*image.data},
            }));
        } else {
            if !text.is_empty() {
                text.push('\n');
            }
            let _ = write!(
                text,
                "[an {} image could not be sent: Gemini takes PNG, JPEG, WebP, HEIC or HEIF]",
                image.media_type
            );
        }
    }
    let response = if result.is_error() {
        json!({"error": text})
    } else {
        json!({"output": text})
    };
    let mut parts = vec![json!({"functionResponse": {"name": name, "response": response}})];
    parts.extend(image_parts);
    parts
}

fn images(result: &ToolResult) -> impl Iterator<Item = &ImageBlock> {
    result.content().iter().filter_map(|block| match block {
        ContentBlock::Image(image) => Some(image),
        ContentBlock::Text { .. } => None,
    })
}

/// Providers refuse an empty tool message; an image-only result says
/// where its images went.
fn text_or_placeholder(result: &ToolResult) -> String {
    let text = result.text_content();
    if !text.is_empty() {
        text
    } else if images(result).next().is_some() {
        "(the result is the image that follows)".to_owned()
    } else {
        "done".to_owned()
    }
}
