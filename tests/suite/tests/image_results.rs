//! Image blocks travel from a tool, through the executor, into each
//! provider's result shape; bad images are clear error results.

use iris::content::ImageBlock;
use iris::provider::{
    anthropic_result, gemini_result, openai_chat_result, openai_responses_result,
};
use iris::{
    RunId, ToolContext, ToolErrorKind, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock,
};
use serde_json::json;

/// A 1x1 transparent PNG.
pub(crate) const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

/// Render the sales chart.
#[iris::tool(read_only)]
fn render_chart(
    /// Which quarter.
    quarter: u8,
) -> ToolResult {
    ToolResult::text(format!("Sales chart for Q{quarter}"))
        .with_image(ImageBlock::checked(PIXEL_PNG).unwrap())
}

/// Render a chart from raw bytes the caller gives.
#[iris::tool(read_only)]
fn render_bytes(
    /// The bytes.
    bytes: Vec<u8>,
) -> ToolResult {
    ToolResult::image(&bytes)
}

async fn call(name: &str, input: serde_json::Value) -> ToolResult {
    let mut registry = ToolRegistry::new();
    registry
        .register(RenderChart)
        .unwrap()
        .register(RenderBytes)
        .unwrap();
    let executor = ToolExecutor::builder(registry).build().unwrap();
    let cx = ToolContext::builder(".", RunId::new("run")).build();
    let outcome = executor
        .execute_one(ToolUseBlock::new("call_1", name, input), &cx)
        .await;
    outcome.result().cloned().unwrap()
}

#[tokio::test]
async fn images_reach_every_provider_shape() {
    let result = call("render_chart", json!({"quarter": 3})).await;
    assert!(!result.is_error());
    insta::assert_json_snapshot!("image_openai_chat", openai_chat_result("call_1", &result));
    insta::assert_json_snapshot!(
        "image_openai_responses",
        openai_responses_result("call_1", &result)
    );
    insta::assert_json_snapshot!("image_anthropic", anthropic_result("call_1", &result));
    insta::assert_json_snapshot!("image_gemini", gemini_result("render_chart", &result));
}

#[test]
fn a_type_gemini_does_not_take_is_said_not_dropped() {
    let gif = ToolResult::image(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;");
    assert!(!gif.is_error());
    insta::assert_json_snapshot!("image_gemini_gif", gemini_result("render", &gif));
}

#[tokio::test]
async fn unsupported_and_oversized_images_are_error_results() {
    let pdf = call("render_bytes", json!({"bytes": b"%PDF-1.7".to_vec()})).await;
    assert_eq!(pdf.error_kind(), Some(ToolErrorKind::UnsupportedContent));
    assert!(
        pdf.text_content().contains("PNG, JPEG, GIF or WebP"),
        "{}",
        pdf.text_content()
    );

    let mut big = PIXEL_PNG.to_vec();
    big.resize(iris::content::MAX_IMAGE_BYTES + 1, 0);
    let result = ToolResult::image(&big);
    assert_eq!(result.error_kind(), Some(ToolErrorKind::UnsupportedContent));
    assert!(
        result.text_content().contains("scale it down"),
        "{}",
        result.text_content()
    );
    insta::assert_json_snapshot!("image_error_anthropic", anthropic_result("call_9", &result));

    let missing = ToolResult::image_file("/nonexistent/chart.png");
    assert!(missing.text_content().contains("cannot read image file"));
}
