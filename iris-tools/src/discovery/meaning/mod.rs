//! The meaning layer of tool search: a sentence encoder's vector of each
//! tool (made once per catalog) and of each request, their cosine fused
//! with the word ranker's score.

mod encoder;
mod fusion;
mod vectors;

pub use encoder::{EncodeError, TextEncoder};
pub use fusion::ENCODER_WORD_WEIGHT;
pub(crate) use fusion::fused_search;
pub use vectors::ToolVectors;
pub(crate) use vectors::VectorCache;
