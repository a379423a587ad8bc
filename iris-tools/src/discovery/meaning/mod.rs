//! The meaning layer of tool search: a sentence encoder's vector of each
//! tool (made once per catalog) and of each request; `fusion`, beside it,
//! adds their cosine to the word ranker's score.

mod encoder;
mod vectors;

pub use encoder::{EncodeError, TextEncoder};
pub use vectors::ToolVectors;
pub(crate) use vectors::VectorCache;
