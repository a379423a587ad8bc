#![cfg_attr(docsrs, feature(doc_cfg))]
//! A sentence encoder for Iris's tool search: a BERT model in the
//! sentence-transformers layout (all-MiniLM-L6-v2 and its kind) run in
//! process on the CPU by [candle](https://github.com/huggingface/candle),
//! its token vectors pooled into one unit vector per text.
//!
//! Discovery embeds each tool's name and description once per catalog and
//! each request at search time, and fuses the cosine of the two with the
//! word ranker's score (`iris::discovery`, feature `encoder`).
//!
//! Loading:
//! - [`SentenceEncoder::from_folder`]: a model folder on disk
//!   (`config.json`, `tokenizer.json`, `model.safetensors`).
//! - `SentenceEncoder::from_hub` (feature `hub`): fetched once from the
//!   Hugging Face hub into its cache, then loaded from there.
//!
//! Cost, for all-MiniLM-L6-v2 on two cores: about 90 MB of weights in
//! memory, a few milliseconds per short request, more per long tool
//! description (cut at the model's 256 tokens). Build it with
//! optimizations: unoptimized, the model runs tens of times slower (see
//! the crate README for the profile setting a debug build needs).
//!
//! ```no_run
//! use iris_encoder::SentenceEncoder;
//!
//! # fn main() -> Result<(), iris_encoder::EncoderError> {
//! let encoder = SentenceEncoder::from_folder("models/all-MiniLM-L6-v2")?;
//! let vectors = encoder.encode(&["convert 20 euros to dollars", "currency exchange rates"])?;
//! let cosine: f32 = vectors[0].iter().zip(&vectors[1]).map(|(a, b)| a * b).sum();
//! assert!(cosine > 0.3);
//! # Ok(())
//! # }
//! ```

mod error;
mod folder;
#[cfg(feature = "hub")]
mod hub;
mod sentence;

pub use error::EncoderError;
pub use sentence::SentenceEncoder;
