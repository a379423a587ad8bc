//! Why an encoder could not be loaded or could not encode.

use std::path::PathBuf;

/// An encoder that could not be loaded, or a text it could not encode.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EncoderError {
    /// A file the model folder must hold is not there.
    #[error(
        "the model folder `{folder}` has no `{file}`; a sentence-transformers model folder holds config.json, tokenizer.json and model.safetensors"
    )]
    MissingFile {
        /// The folder looked in.
        folder: PathBuf,
        /// The file it lacks.
        file: &'static str,
    },
    /// A file of the folder could not be read or parsed.
    #[error("`{path}`: {reason}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The folder holds a model this encoder does not run.
    #[error("`{folder}`: {reason}")]
    Unsupported {
        /// The folder.
        folder: PathBuf,
        /// What is not supported, and what is.
        reason: String,
    },
    /// The model failed while encoding.
    #[error("the model failed to encode: {0}")]
    Model(String),
    /// The model could not be fetched from the hub.
    #[cfg(feature = "hub")]
    #[error("fetching `{file}` of `{repo}` from the Hugging Face hub failed: {reason}")]
    Hub {
        /// The model's repository (`sentence-transformers/all-MiniLM-L6-v2`).
        repo: String,
        /// The file being fetched.
        file: &'static str,
        /// Why.
        reason: String,
    },
}

impl From<candle_core::Error> for EncoderError {
    fn from(error: candle_core::Error) -> Self {
        Self::Model(error.to_string())
    }
}
