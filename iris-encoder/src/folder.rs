//! A sentence-transformers model folder: what it must hold and what its
//! settings say (sequence length, pooling).

use std::path::{Path, PathBuf};

use candle_transformers::models::bert::Config;
use serde::Deserialize;

use crate::EncoderError;

/// Tokens a text is cut to when the folder does not say.
const DEFAULT_MAX_TOKENS: usize = 256;

/// How token vectors become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pooling {
    /// The mean of the text's token vectors (all-MiniLM-L6-v2 and most
    /// sentence-transformers models).
    Mean,
    /// The first token's vector.
    Cls,
}

/// What loading needs from a folder.
pub(crate) struct ModelFiles {
    pub(crate) folder: PathBuf,
    pub(crate) config: Config,
    pub(crate) tokenizer: PathBuf,
    pub(crate) weights: PathBuf,
    pub(crate) max_tokens: usize,
    pub(crate) pooling: Pooling,
}

#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

/// `1_Pooling/config.json` as sentence-transformers writes it: one flag per
/// pooling mode.
#[derive(Deserialize)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "the file's own shape: one flag per mode"
)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

impl ModelFiles {
    /// Reads what `folder` says of its model; refuses a folder missing a
    /// file or a model it cannot run.
    pub(crate) fn read(folder: &Path) -> Result<Self, EncoderError> {
        let required = |file: &'static str| {
            let path = folder.join(file);
            if path.is_file() {
                Ok(path)
            } else {
                Err(EncoderError::MissingFile {
                    folder: folder.to_path_buf(),
                    file,
                })
            }
        };
        let config_path = required("config.json")?;
        let tokenizer = required("tokenizer.json")?;
        let weights = required("model.safetensors")?;
        let config: Config = json_of(&config_path)?;
        if let Some(kind) = config.model_type.as_deref()
            && kind != "bert"
        {
            return Err(EncoderError::Unsupported {
                folder: folder.to_path_buf(),
                reason: format!(
                    "its config.json has model_type `{kind}`; this encoder runs BERT models (all-MiniLM-L6-v2, bge-small-en, e5-small and their kind)"
                ),
            });
        }
        let sentence = folder.join("sentence_bert_config.json");
        let max_tokens = if sentence.is_file() {
            json_of::<SentenceBertConfig>(&sentence)?.max_seq_length
        } else {
            None
        }
        .unwrap_or(DEFAULT_MAX_TOKENS)
        .clamp(1, config.max_position_embeddings.max(1));
        let pooling = pooling_of(folder)?;
        Ok(Self {
            folder: folder.to_path_buf(),
            config,
            tokenizer,
            weights,
            max_tokens,
            pooling,
        })
    }
}

/// The pooling `1_Pooling/config.json` asks for; the mean when the folder
/// has none.
fn pooling_of(folder: &Path) -> Result<Pooling, EncoderError> {
    let path = folder.join("1_Pooling").join("config.json");
    if !path.is_file() {
        return Ok(Pooling::Mean);
    }
    let config: PoolingConfig = json_of(&path)?;
    match (
        config.pooling_mode_mean_tokens,
        config.pooling_mode_cls_token,
        config.pooling_mode_max_tokens || config.pooling_mode_mean_sqrt_len_tokens,
    ) {
        (true, false, false) => Ok(Pooling::Mean),
        (false, true, false) => Ok(Pooling::Cls),
        _ => Err(EncoderError::Unsupported {
            folder: folder.to_path_buf(),
            reason: format!(
                "`{}` asks for a pooling this encoder does not do; it pools by the mean of the tokens or by the first token, one of them",
                path.display()
            ),
        }),
    }
}

fn json_of<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, EncoderError> {
    let text = std::fs::read_to_string(path).map_err(|e| EncoderError::Unreadable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    serde_json::from_str(&text).map_err(|e| EncoderError::Unreadable {
        path: path.to_path_buf(),
        reason: format!("not the JSON expected: {e}"),
    })
}
