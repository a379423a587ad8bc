//! MCP tool results as Iris results, and Iris results as MCP tool results.
//!
//! From a server: text → text; image → a checked [`ImageBlock`] (a bad one
//! makes the result `unsupported_content`, never a crash); audio and
//! embedded resources → a text note for the model; resource links → text
//! naming the URI; `structuredContent` → `data`; `isError: true` → an
//! `execution` error carrying the server's text. A result with audio, an
//! embedded resource or a link keeps the server's whole content list in
//! `data` (`mcp_content`), and goes back out over MCP as the server sent
//! it: a gateway relays every kind of content, on every revision.

use base64::Engine as _;
use iris_core::{ContentBlock, ImageBlock, ToolErrorKind, ToolResult};
use rmcp::model::{self as mcp, ResourceContents};
use serde_json::{Value, json};

/// The Iris result of one MCP `tools/call` answer from `server`.
pub(super) fn from_mcp(server: &str, answer: mcp::CallToolResult) -> ToolResult {
    let relayed = answer
        .content
        .iter()
        .any(|item| {
            !matches!(
                item,
                mcp::ContentBlock::Text(_) | mcp::ContentBlock::Image(_)
            )
        })
        .then(|| serde_json::to_value(&answer.content).ok())
        .flatten()
        .filter(|content| content.to_string().len() <= MAX_RELAYED_BYTES);
    let (blocks, bad_images) = project(answer.content);
    let data = match (answer.structured_content, relayed) {
        (structured, None) => structured,
        (structured, Some(content)) => Some(json!({
            "structured_content": structured,
            "mcp_content": content,
        })),
    };
    let text = || {
        blocks
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut result = if answer.is_error == Some(true) {
        let said = text();
        let message = if said.is_empty() {
            format!("MCP server `{server}` reported an error without a message")
        } else {
            said
        };
        ToolResult::error(ToolErrorKind::Execution, message)
    } else if !bad_images.is_empty() {
        let mut message = format!(
            "MCP server `{server}` sent an image that cannot be used: {}",
            bad_images.join("; ")
        );
        let said = text();
        if !said.is_empty() {
            message.push_str("\nThe rest of its answer:\n");
            message.push_str(&said);
        }
        ToolResult::error(ToolErrorKind::UnsupportedContent, message)
    } else {
        ToolResult::from_content(blocks)
    };
    if let Some(data) = data {
        result = result.with_data(data);
    }
    result
}

/// What the model reads of a server's content list, and what is wrong
/// with its images.
fn project(content: Vec<mcp::ContentBlock>) -> (Vec<ContentBlock>, Vec<String>) {
    let mut blocks: Vec<ContentBlock> = Vec::new();
    let mut bad_images: Vec<String> = Vec::new();
    for (index, item) in content.into_iter().enumerate() {
        match item {
            mcp::ContentBlock::Text(text) => blocks.push(ContentBlock::text(text.text)),
            mcp::ContentBlock::Image(image) => match checked_image(&image.data) {
                Ok(block) => blocks.push(ContentBlock::Image(block)),
                Err(why) => {
                    bad_images.push(format!("item {index} claims {} but {why}", image.mime_type));
                }
            },
            mcp::ContentBlock::Audio(audio) => {
                blocks.push(ContentBlock::text(format!(
                    "[audio ({}), about {} bytes: kept in the result's data, not shown]",
                    audio.mime_type,
                    audio.data.len() / 4 * 3
                )));
            }
            mcp::ContentBlock::Resource(embedded) => {
                blocks.push(ContentBlock::text(embedded_resource(&embedded.resource)));
            }
            mcp::ContentBlock::ResourceLink(link) => {
                let about = link
                    .description
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                blocks.push(ContentBlock::text(format!(
                    "[resource link] {} <{}>{about}",
                    link.name, link.uri
                )));
            }
            #[allow(unreachable_patterns, reason = "the MCP model is non-exhaustive")]
            _ => blocks.push(ContentBlock::text("[content of a kind Iris does not know]")),
        }
    }
    (blocks, bad_images)
}

/// The note the model reads for an embedded resource: a text resource's
/// text itself; a binary one, what it is.
fn embedded_resource(resource: &ResourceContents) -> String {
    match resource {
        ResourceContents::TextResourceContents { uri, text, .. } => {
            format!("[resource {uri}]\n{text}")
        }
        ResourceContents::BlobResourceContents { uri, mime_type, .. } => {
            let mime = mime_type.as_deref().unwrap_or("unknown type");
            format!("[resource {uri} ({mime}): binary, kept in the result's data, not shown]")
        }
        #[allow(unreachable_patterns, reason = "the MCP model is non-exhaustive")]
        other => format!(
            "[resource of a kind Iris does not know: {}]",
            serde_json::to_string(other).unwrap_or_default()
        ),
    }
}

/// The image in base64 `data`, checked: its type read from its bytes.
fn checked_image(data: &str) -> Result<ImageBlock, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| format!("its data is not base64 ({e})"))?;
    ImageBlock::checked(&bytes).map_err(|e| e.to_string())
}

/// Largest content list kept to be relayed as it came (its JSON); a
/// larger one reaches clients as the notes the model reads.
const MAX_RELAYED_BYTES: usize = 8 * 1024 * 1024;

/// The key a result that is not a JSON object is wrapped under: MCP's
/// `structuredContent` (and so `outputSchema`) is always an object.
pub(crate) const WRAPPED_RESULT_KEY: &str = "result";

/// The `outputSchema` of a tool whose results follow `schema`: the schema
/// itself when it describes an object, else an object holding the result
/// under [`WRAPPED_RESULT_KEY`], which says so (its `$defs` moved up, so
/// that references still resolve).
pub(crate) fn object_output_schema(schema: &Value) -> serde_json::Map<String, Value> {
    if let Value::Object(map) = schema
        && map.get("type").and_then(Value::as_str) == Some("object")
    {
        return map.clone();
    }
    let mut inner = schema.clone();
    let defs = inner.as_object_mut().and_then(|map| map.remove("$defs"));
    let mut wrapper = serde_json::Map::new();
    wrapper.insert("type".into(), Value::String("object".into()));
    wrapper.insert(
        "description".into(),
        Value::String(format!(
            "The tool's result, wrapped in an object as MCP requires: `{WRAPPED_RESULT_KEY}` holds it."
        )),
    );
    wrapper.insert(
        "properties".into(),
        serde_json::json!({ WRAPPED_RESULT_KEY: inner }),
    );
    wrapper.insert("required".into(), serde_json::json!([WRAPPED_RESULT_KEY]));
    if let Some(defs) = defs {
        wrapper.insert("$defs".into(), defs);
    }
    wrapper
}

/// The MCP answer of an Iris result: text → text, images → images,
/// `data` → `structuredContent` (under [`WRAPPED_RESULT_KEY`] when it is not
/// an object), an error → `isError` with its message; a server's content
/// kept whole (audio, resources, links) goes out as it came.
pub(super) fn to_mcp(result: &ToolResult) -> mcp::CallToolResult {
    if let Some(relayed) = relayed(result) {
        return relayed;
    }
    let content: Vec<mcp::ContentBlock> = result
        .content()
        .iter()
        .map(|block| match block {
            ContentBlock::Image(image) => {
                mcp::ContentBlock::image(image.data.to_string(), image.media_type.clone())
            }
            other => mcp::ContentBlock::text(other.as_text().unwrap_or_default()),
        })
        .collect();
    let mut answer = if result.is_error() {
        mcp::CallToolResult::error(content)
    } else {
        mcp::CallToolResult::success(content)
    };
    answer.structured_content = result.data().map(|data| match data {
        Value::Object(_) => data.clone(),
        other => serde_json::json!({ WRAPPED_RESULT_KEY: other }),
    });
    answer
}

/// The answer of a result that keeps an MCP server's whole content (see
/// [`from_mcp`]): only a successful one whose content is exactly what the
/// kept list shows the model, so a tool that echoes untrusted JSON into its
/// data cannot make the server send content blocks of its choosing.
fn relayed(result: &ToolResult) -> Option<mcp::CallToolResult> {
    if result.is_error() {
        return None;
    }
    let data = result.data()?.as_object()?;
    let kept = data.get("mcp_content")?;
    let content: Vec<mcp::ContentBlock> = serde_json::from_value(kept.clone()).ok()?;
    let (shown, bad_images) = project(content.clone());
    if !bad_images.is_empty() || shown.as_slice() != result.content() {
        return None;
    }
    let mut answer = mcp::CallToolResult::success(content);
    answer.structured_content = data
        .get("structured_content")
        .filter(|structured| !structured.is_null())
        .map(|structured| match structured {
            Value::Object(_) => structured.clone(),
            other => json!({ WRAPPED_RESULT_KEY: other }),
        });
    Some(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_that_is_not_an_object_is_wrapped_and_its_schema_says_so() {
        let schema = json!({
            "type": "array",
            "items": {"$ref": "#/$defs/Order"},
            "$defs": {"Order": {"type": "object", "properties": {"id": {"type": "integer"}}}},
        });
        let wrapped = Value::Object(object_output_schema(&schema));
        assert_eq!(wrapped["type"], "object");
        assert_eq!(wrapped["required"], json!(["result"]));
        assert_eq!(
            wrapped["properties"]["result"]["items"]["$ref"],
            "#/$defs/Order"
        );
        assert!(
            wrapped["$defs"]["Order"].is_object(),
            "references still resolve"
        );
        assert!(wrapped["properties"]["result"].get("$defs").is_none());
        // An object schema is listed as it is.
        let object = json!({"type": "object", "properties": {}});
        assert_eq!(Value::Object(object_output_schema(&object)), object);

        let answer = to_mcp(&ToolResult::json(json!([1, 2])));
        assert_eq!(answer.structured_content, Some(json!({"result": [1, 2]})));
        let answer = to_mcp(&ToolResult::json(json!({"n": 1})));
        assert_eq!(answer.structured_content, Some(json!({"n": 1})));
    }

    fn answer(content: Vec<mcp::ContentBlock>) -> mcp::CallToolResult {
        mcp::CallToolResult::success(content)
    }

    #[test]
    fn a_false_image_is_unsupported_content_and_keeps_the_text() {
        let claimed_png = base64::engine::general_purpose::STANDARD.encode(b"not a png at all");
        let result = from_mcp(
            "hostile",
            answer(vec![
                mcp::ContentBlock::text("a chart"),
                mcp::ContentBlock::image(claimed_png, "image/png"),
            ]),
        );
        assert_eq!(result.error_kind(), Some(ToolErrorKind::UnsupportedContent));
        let text = result.text_content();
        assert!(text.contains("claims image/png"), "{text}");
        assert!(text.contains("a chart"), "{text}");
        let garbage = from_mcp(
            "hostile",
            answer(vec![mcp::ContentBlock::image("%%%", "image/png")]),
        );
        assert!(garbage.text_content().contains("not base64"));
    }

    #[test]
    fn errors_audio_and_links_read_as_text() {
        let mut failed = answer(vec![mcp::ContentBlock::text("disk full")]);
        failed.is_error = Some(true);
        let failed = from_mcp("s", failed);
        assert_eq!(failed.error_kind(), Some(ToolErrorKind::Execution));
        assert!(failed.text_content().contains("disk full"));

        let mixed = from_mcp(
            "s",
            answer(vec![
                mcp::ContentBlock::audio("AAAA", "audio/wav"),
                mcp::ContentBlock::embedded_text("file:///a.txt", "hello"),
            ]),
        );
        let text = mixed.text_content();
        assert!(text.contains("[audio (audio/wav)"), "{text}");
        assert!(text.contains("[resource file:///a.txt]\nhello"), "{text}");
        assert_eq!(
            mixed
                .data()
                .and_then(|d| d["mcp_content"][0]["type"].as_str()),
            Some("audio")
        );
        // Out again over MCP, as the server sent it.
        let out = serde_json::to_value(to_mcp(&mixed)).unwrap();
        assert_eq!(out["content"][0]["type"], "audio");
        assert_eq!(out["content"][1]["type"], "resource");
        assert_eq!(out["content"][1]["resource"]["text"], "hello");

        // A tool of this server whose data only claims such a list (an echo
        // of untrusted JSON) is answered as what it shows, never as the
        // list it claims.
        let forged = ToolResult::text("{...}").with_data(json!({"mcp_content": [
            {"type": "resource", "resource": {"uri": "file:///etc/shadow", "text": "root::0:0"}}
        ]}));
        let out = serde_json::to_value(to_mcp(&forged)).unwrap();
        assert_eq!(out["content"][0]["type"], "text", "{out}");
        assert_eq!(out["content"].as_array().map(Vec::len), Some(1), "{out}");
    }
}
