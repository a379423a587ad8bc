//! The encoder: a BERT model run on the CPU by candle, its token vectors
//! pooled into one unit vector per text.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::BertModel;
use iris_tools::discovery::{EncodeError, TextEncoder};
use tokenizers::{Tokenizer, TruncationParams};

use crate::EncoderError;
use crate::folder::{ModelFiles, Pooling};

/// Texts run through the model at once. Texts are sorted by length first,
/// so each batch pads little.
const BATCH: usize = 16;

/// Characters of one text handed to the tokenizer at most: far past what
/// the model reads (its token limit), so an enormous text costs nothing
/// beyond its first part.
const CHARS_PER_TOKEN_LIMIT: usize = 16;

/// A sentence encoder run in process: all-MiniLM-L6-v2 or another BERT
/// model in the sentence-transformers layout, on the CPU.
///
/// Loaded once (about 90 MB of weights for all-MiniLM-L6-v2) and shared:
/// `encode` takes `&self` and may be called from many threads.
pub struct SentenceEncoder {
    model: BertModel,
    tokenizer: Tokenizer,
    pooling: Pooling,
    max_tokens: usize,
    dimensions: usize,
    id: String,
}

impl std::fmt::Debug for SentenceEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentenceEncoder")
            .field("id", &self.id)
            .field("dimensions", &self.dimensions)
            .field("max_tokens", &self.max_tokens)
            .finish_non_exhaustive()
    }
}

impl SentenceEncoder {
    /// Loads the model in `folder`: a sentence-transformers folder holding
    /// `config.json`, `tokenizer.json` and `model.safetensors` (and, read
    /// when present, `sentence_bert_config.json` for the token limit and
    /// `1_Pooling/config.json` for the pooling).
    ///
    /// # Errors
    /// [`EncoderError`] when a file is missing or unreadable, or the model
    /// is not a BERT model pooled by mean or first token.
    pub fn from_folder(folder: impl AsRef<Path>) -> Result<Self, EncoderError> {
        let folder = folder.as_ref();
        let name = folder
            .canonicalize()
            .unwrap_or_else(|_| folder.to_path_buf())
            .file_name()
            .map_or_else(|| "model".to_owned(), |n| n.to_string_lossy().into_owned());
        Self::load(folder, &name)
    }

    /// Loads the model in `folder`, naming it `name` in its [`TextEncoder::id`].
    pub(crate) fn load(folder: &Path, name: &str) -> Result<Self, EncoderError> {
        let files = ModelFiles::read(folder)?;
        let mut tokenizer =
            Tokenizer::from_file(&files.tokenizer).map_err(|e| EncoderError::Unreadable {
                path: files.tokenizer.clone(),
                reason: format!("not a tokenizer this encoder reads: {e}"),
            })?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: files.max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| EncoderError::Unreadable {
                path: files.tokenizer.clone(),
                reason: e.to_string(),
            })?;
        let weights = std::fs::read(&files.weights).map_err(|e| EncoderError::Unreadable {
            path: files.weights.clone(),
            reason: e.to_string(),
        })?;
        let fingerprint = fingerprint(&[
            &weights,
            &std::fs::read(&files.tokenizer).unwrap_or_default(),
            format!(
                "{:?}/{}/{:?}",
                files.config, files.max_tokens, files.pooling
            )
            .as_bytes(),
        ]);
        let device = Device::Cpu;
        let unreadable = |e: candle_core::Error| EncoderError::Unreadable {
            path: files.weights.clone(),
            reason: format!("not the weights config.json describes: {e}"),
        };
        let vars = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(unreadable)?;
        let model = BertModel::load(vars, &files.config).map_err(unreadable)?;
        let id = format!("{name}@{fingerprint:016x}");
        tracing::debug!(folder = %files.folder.display(), %id, "sentence encoder loaded");
        Ok(Self {
            model,
            tokenizer,
            pooling: files.pooling,
            max_tokens: files.max_tokens,
            dimensions: files.config.hidden_size,
            id,
        })
    }

    /// The length of the vectors it makes.
    #[must_use]
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// The most tokens of a text the model reads; the rest is cut.
    #[must_use]
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// One unit vector per text, in order.
    ///
    /// # Errors
    /// [`EncoderError::Model`] when tokenizing or the model fails.
    pub fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        let limit = self.max_tokens.saturating_mul(CHARS_PER_TOKEN_LIMIT);
        let mut tokenized = Vec::with_capacity(texts.len());
        for text in texts {
            let text = iris_core::text::prefix(text, limit);
            let encoding = self
                .tokenizer
                .encode(text, true)
                .map_err(|e| EncoderError::Model(format!("tokenizing failed: {e}")))?;
            tokenized.push(encoding.get_ids().to_vec());
        }
        // Shortest first, so each batch pads to a length close to its own.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| tokenized[i].len());
        let mut vectors = vec![Vec::new(); texts.len()];
        for batch in order.chunks(BATCH) {
            let rows: Vec<&[u32]> = batch.iter().map(|&i| tokenized[i].as_slice()).collect();
            for (&i, vector) in batch.iter().zip(self.run(&rows)?) {
                vectors[i] = vector;
            }
        }
        Ok(vectors)
    }

    /// The pooled, unit-length vectors of one batch of token ids.
    fn run(&self, rows: &[&[u32]]) -> Result<Vec<Vec<f32>>, EncoderError> {
        let width = rows.iter().map(|r| r.len()).max().unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(rows.len() * width);
        let mut mask = Vec::with_capacity(rows.len() * width);
        for row in rows {
            ids.extend_from_slice(row);
            ids.resize(ids.len() + width - row.len(), 0);
            mask.extend(std::iter::repeat_n(1_u32, row.len()));
            mask.resize(mask.len() + width - row.len(), 0);
        }
        let device = &self.model.device;
        let ids = Tensor::from_vec(ids, (rows.len(), width), device)?;
        let mask = Tensor::from_vec(mask, (rows.len(), width), device)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        let pooled = match self.pooling {
            Pooling::Mean => {
                let weights = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
                let summed = hidden.broadcast_mul(&weights)?.sum(1)?;
                summed.broadcast_div(&weights.sum(1)?.clamp(1.0, f32::MAX)?)?
            }
            Pooling::Cls => hidden.narrow(1, 0, 1)?.squeeze(1)?,
        };
        let norms = pooled
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12, f32::MAX)?;
        Ok(pooled.broadcast_div(&norms)?.to_vec2::<f32>()?)
    }
}

/// A hash of the weights, the tokenizer and the settings: what makes two
/// encoders give the same vectors, so a vector kept under an encoder's id is
/// never reused for another model that shares a folder name. Fast rather
/// than cryptographic (it guards against mix-ups, not attacks): a few tens
/// of milliseconds for 90 MB.
fn fingerprint(parts: &[&[u8]]) -> u64 {
    use std::hash::Hasher as _;
    let mut hasher = rustc_hash::FxHasher::default();
    for part in parts {
        hasher.write_usize(part.len());
        for chunk in part.chunks(8) {
            let mut word = [0_u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            hasher.write_u64(u64::from_le_bytes(word));
        }
    }
    hasher.finish()
}

impl TextEncoder for SentenceEncoder {
    fn id(&self) -> &str {
        &self.id
    }

    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncodeError> {
        Self::encode(self, texts).map_err(|e| EncodeError::new(e.to_string()))
    }
}
