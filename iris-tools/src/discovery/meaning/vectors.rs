//! Each indexed tool's vector, made once per catalog and kept by encoder
//! and text, so a catalog indexed again after a change encodes only its new
//! or changed tools.

use std::sync::{Arc, Mutex, PoisonError};

use iris_core::ToolDefinition;
use rustc_hash::FxHashMap;
use sha2::{Digest as _, Sha256};

use super::{EncodeError, TextEncoder};

/// Characters of a tool's description it is encoded from: what a tool is
/// for comes first, and the long usage notes after it cost encoding time
/// without moving the vector (measured on the tuning half of the
/// evaluation set: 150, 300, 500 characters and whole descriptions rank
/// alike).
pub(crate) const DESCRIPTION_CHARS: usize = 500;

/// The text a tool is encoded from: its name in words, then the start of
/// its description.
pub(crate) fn text_of(definition: &ToolDefinition) -> String {
    let mut name = String::with_capacity(definition.name().as_str().len() + 8);
    let mut previous_lower = false;
    for c in definition.name().as_str().chars() {
        if c == '_' || c == '-' || c == '.' {
            name.push(' ');
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            name.push(' ');
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        name.extend(c.to_lowercase());
    }
    format!(
        "{name}: {}",
        iris_core::text::prefix(definition.description(), DESCRIPTION_CHARS)
    )
}

/// The vectors of an index's tools by tool id, and the encoder that made
/// them (which encodes each request the same way).
pub struct ToolVectors {
    encoder: Arc<dyn TextEncoder>,
    dimensions: usize,
    /// Tool after tool, `dimensions` values each.
    rows: Vec<f32>,
}

impl std::fmt::Debug for ToolVectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolVectors")
            .field("encoder", &self.encoder.id())
            .field("tools", &self.len())
            .field("dimensions", &self.dimensions)
            .finish_non_exhaustive()
    }
}

/// Vectors made before, by encoder id and text.
#[derive(Default)]
pub(crate) struct VectorCache {
    kept: Mutex<FxHashMap<[u8; 32], Arc<[f32]>>>,
}

fn key_of(encoder: &str, text: &str) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(encoder.len().to_le_bytes());
    hash.update(encoder.as_bytes());
    hash.update(text.as_bytes());
    hash.finalize().into()
}

impl ToolVectors {
    /// The vectors of the tools `index` holds, by tool id, each encoded
    /// from its definition in `registry` ([`text_of`]).
    pub(crate) fn of_index(
        index: &crate::discovery::SearchIndex,
        registry: &iris_runtime::ToolRegistry,
        encoder: Arc<dyn TextEncoder>,
        cache: &VectorCache,
    ) -> Result<Self, EncodeError> {
        let texts: Vec<String> = (0..u32::try_from(index.len()).unwrap_or(u32::MAX))
            .map(|id| {
                registry
                    .resolve(index.tool(id))
                    .map(|tool| text_of(tool.definition_dyn()))
                    .unwrap_or_default()
            })
            .collect();
        Self::build(encoder, &texts, cache)
    }

    /// The vectors of `texts` (tool by tool id), taking those `cache`
    /// holds and encoding the rest; the cache then holds this catalog's
    /// vectors only.
    pub(crate) fn build(
        encoder: Arc<dyn TextEncoder>,
        texts: &[String],
        cache: &VectorCache,
    ) -> Result<Self, EncodeError> {
        let keys: Vec<[u8; 32]> = texts.iter().map(|t| key_of(encoder.id(), t)).collect();
        // The vectors kept for this catalog's texts; the cache is replaced
        // only once every missing one is encoded, so a failure loses none.
        let mut now: FxHashMap<[u8; 32], Arc<[f32]>> = {
            let kept = cache.kept.lock().unwrap_or_else(PoisonError::into_inner);
            keys.iter()
                .filter_map(|key| Some((*key, Arc::clone(kept.get(key)?))))
                .collect()
        };
        let mut missing: Vec<usize> = (0..texts.len())
            .filter(|&i| !now.contains_key(&keys[i]))
            .collect();
        // A text twice in the catalog is encoded once.
        let mut seen = rustc_hash::FxHashSet::default();
        missing.retain(|&i| seen.insert(keys[i]));
        let started = std::time::Instant::now();
        let fresh = if missing.is_empty() {
            Vec::new()
        } else {
            let batch: Vec<&str> = missing.iter().map(|&i| texts[i].as_str()).collect();
            encoder.encode(&batch)?
        };
        if fresh.len() != missing.len() {
            return Err(EncodeError::new(format!(
                "the encoder gave {} vectors for {} texts",
                fresh.len(),
                missing.len()
            )));
        }
        for (&i, vector) in missing.iter().zip(fresh) {
            now.insert(keys[i], unit(vector).into());
        }
        let dimensions = now.values().next().map_or(0, |v| v.len());
        let mut rows = Vec::with_capacity(texts.len() * dimensions);
        for key in &keys {
            let vector = now.get(key).map_or(&[][..], |v| &v[..]);
            if vector.len() != dimensions {
                return Err(EncodeError::new(format!(
                    "the encoder gave vectors of {} and {dimensions} dimensions; one model gives one length",
                    vector.len()
                )));
            }
            rows.extend_from_slice(vector);
        }
        tracing::debug!(
            encoder = encoder.id(),
            tools = texts.len(),
            encoded = missing.len(),
            elapsed_ms = started.elapsed().as_millis(),
            "tool vectors built"
        );
        *cache.kept.lock().unwrap_or_else(PoisonError::into_inner) = now;
        Ok(Self {
            encoder,
            dimensions,
            rows,
        })
    }

    /// How many tools have a vector.
    #[must_use]
    pub fn len(&self) -> usize {
        self.rows.len().checked_div(self.dimensions).unwrap_or(0)
    }

    /// Whether no tool has a vector.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The length of each vector.
    #[must_use]
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// Heap bytes the vectors take: `4 × dimensions` per tool.
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.rows.capacity() * std::mem::size_of::<f32>()
    }

    /// The unit vector of one request, as the tools' were made.
    pub(crate) fn encode_request(&self, request: &str) -> Result<Vec<f32>, EncodeError> {
        let mut vectors = self.encode_requests(&[request])?;
        vectors
            .pop()
            .ok_or_else(|| EncodeError::new("the encoder gave no vector for a request"))
    }

    /// The unit vectors of `requests`, in order, encoded in one call (the
    /// model runs them as one batch).
    pub(crate) fn encode_requests(&self, requests: &[&str]) -> Result<Vec<Vec<f32>>, EncodeError> {
        let vectors = self.encoder.encode(requests)?;
        if vectors.len() != requests.len() {
            return Err(EncodeError::new(format!(
                "the encoder gave {} vectors for {} requests",
                vectors.len(),
                requests.len()
            )));
        }
        vectors
            .into_iter()
            .map(|vector| {
                if vector.len() == self.dimensions {
                    Ok(unit(vector))
                } else {
                    Err(EncodeError::new(format!(
                        "the encoder gave a request {} dimensions and the tools {}",
                        vector.len(),
                        self.dimensions
                    )))
                }
            })
            .collect()
    }

    /// The cosine of tool `id`'s vector and `request` (a unit vector of the
    /// same length); `None` for a tool indexed after the vectors were made.
    pub(crate) fn similarity(&self, id: u32, request: &[f32]) -> Option<f32> {
        let start = (id as usize).checked_mul(self.dimensions)?;
        let row = self.rows.get(start..start + self.dimensions)?;
        Some(dot(row, request))
    }
}

/// `vector` scaled to length one (a zero vector stays zero): encoders that
/// do not normalize still compare by cosine.
fn unit(mut vector: Vec<f32>) -> Vec<f32> {
    let norm = dot(&vector, &vector).sqrt();
    if norm > f32::EPSILON && (norm - 1.0).abs() > 1e-4 {
        for x in &mut vector {
            *x /= norm;
        }
    }
    vector
}

/// The dot product, in eight lanes the compiler keeps in vector registers.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0_f32; 8];
    let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for lane in 0..8 {
            lanes[lane] += x[lane] * y[lane];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use iris_core::ToolName;

    #[test]
    fn a_tool_is_encoded_from_its_name_in_words_and_its_description_start() {
        let definition = iris_core::ToolDefinition::builder(
            ToolName::new("getWeather_forecast").unwrap_or_else(|e| panic!("{e}")),
            "Forecast. ".repeat(100),
        )
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
        let text = text_of(&definition);
        assert!(
            text.starts_with("get weather forecast: Forecast. "),
            "{text}"
        );
        assert_eq!(
            text.chars().count(),
            "get weather forecast: ".len() + DESCRIPTION_CHARS
        );
    }

    #[test]
    fn dot_products_match_the_plain_sum() {
        let a: Vec<f32> = (0_u8..19).map(|i| f32::from(i) * 0.5).collect();
        let b: Vec<f32> = (0_u8..19).map(|i| 1.0 - f32::from(i) * 0.1).collect();
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - plain).abs() < 1e-4);
        let u = unit(vec![3.0, 4.0]);
        assert!((u[0] - 0.6).abs() < 1e-6 && (u[1] - 0.8).abs() < 1e-6);
        assert_eq!(unit(vec![0.0, 0.0]), vec![0.0, 0.0]);
    }
}
