//! Content blocks: what the model reads of a result.

use std::sync::Arc;

use std::path::Path;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::error::ImageError;

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

/// Largest image a tool may return, in bytes: the strictest provider limit
/// (Anthropic's 5 MB per image); `OpenAI` and Gemini take more.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// Image types every provider's image input accepts (Gemini takes no GIF;
/// its projection says so in place of the image).
pub const IMAGE_MEDIA_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

impl ImageBlock {
    /// Checks `bytes` and encodes them: the media type is recognised from
    /// the bytes themselves (PNG, JPEG, GIF or WebP), and the size must be
    /// at most [`MAX_IMAGE_BYTES`].
    ///
    /// # Errors
    /// [`ImageError::Unsupported`] for other content,
    /// [`ImageError::TooLarge`] past the limit.
    pub fn checked(bytes: &[u8]) -> Result<Self, ImageError> {
        let Some(media_type) = sniff_media_type(bytes) else {
            return Err(ImageError::Unsupported {
                found: describe_start(bytes),
            });
        };
        if bytes.len() > MAX_IMAGE_BYTES {
            return Err(ImageError::TooLarge {
                size: bytes.len(),
                limit: MAX_IMAGE_BYTES,
            });
        }
        Ok(Self::from_bytes(media_type, bytes))
    }

    /// Reads an image file and checks it like [`ImageBlock::checked`].
    ///
    /// # Errors
    /// [`ImageError::File`] when the file cannot be read, or the errors
    /// of [`ImageBlock::checked`].
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ImageError> {
        let path = path.as_ref();
        let size = std::fs::metadata(path)
            .map_err(|e| image_file_error(path, e))?
            .len();
        if size > MAX_IMAGE_BYTES as u64 {
            return Err(ImageError::TooLarge {
                size: usize::try_from(size).unwrap_or(usize::MAX),
                limit: MAX_IMAGE_BYTES,
            });
        }
        let bytes = std::fs::read(path).map_err(|e| image_file_error(path, e))?;
        Self::checked(&bytes)
    }

    /// Encodes `bytes` as an image of `media_type`, unchecked.
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

/// The media type of an image, from its first bytes.
#[must_use]
pub fn sniff_media_type(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, ..] => Some("image/png"),
        [0xFF, 0xD8, 0xFF, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Some("image/gif"),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => Some("image/webp"),
        _ => None,
    }
}

fn describe_start(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "no bytes at all".to_owned();
    }
    let head: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("content starting with bytes {}", head.join(" "))
}

fn image_file_error(path: &Path, source: std::io::Error) -> ImageError {
    ImageError::File {
        path: path.to_path_buf(),
        source: std::sync::Arc::new(source),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_recognised_by_their_bytes() {
        let png = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0];
        assert_eq!(ImageBlock::checked(&png).unwrap().media_type, "image/png");
        assert_eq!(sniff_media_type(b"GIF89a...."), Some("image/gif"));
        assert_eq!(
            sniff_media_type(b"RIFF\0\0\0\0WEBPVP8 "),
            Some("image/webp")
        );
        let err = ImageBlock::checked(b"%PDF-1.7").unwrap_err();
        assert!(err.to_string().contains("25 50 44 46"), "{err}");
        let mut big = png.to_vec();
        big.resize(MAX_IMAGE_BYTES + 1, 0);
        assert!(matches!(
            ImageBlock::checked(&big),
            Err(ImageError::TooLarge { .. })
        ));
    }
}
