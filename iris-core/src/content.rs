//! Content blocks: what the model reads of a result.

use std::sync::Arc;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// One block of model-facing content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, projected into each provider's image input.
    Image(ImageBlock),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }

    /// The text of a text block.
    #[must_use]
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text } => Some(text),
            ContentBlock::Image(_) => None,
        }
    }
}

/// An image carried as base64, with its media type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageBlock {
    /// The media type, such as `image/png`.
    pub media_type: String,
    /// The image bytes, base64-encoded (standard alphabet, padded).
    pub data: Arc<str>,
}

impl ImageBlock {
    /// Encodes `bytes` as an image of `media_type`.
    pub fn from_bytes(media_type: impl Into<String>, bytes: &[u8]) -> Self {
        Self {
            media_type: media_type.into(),
            data: base64::engine::general_purpose::STANDARD
                .encode(bytes)
                .into(),
        }
    }

    /// The `data:` URL form that `OpenAI` image inputs take.
    #[must_use]
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}
