//! What discovery asks of a sentence encoder.

/// Turns texts into vectors whose dot product says how alike their
/// meanings are: the part of tool search that reaches a tool described in
/// other words than the request's.
///
/// `iris::discovery::encoder::SentenceEncoder` (feature `encoder`) runs a
/// BERT sentence encoder in process; any other model can stand behind this
/// trait. Encoding is CPU work of milliseconds per text: discovery calls it
/// off the async workers.
pub trait TextEncoder: Send + Sync + 'static {
    /// Names the model and its settings. Vectors are kept by this id and
    /// text, so two encoders with one id must give the same vectors.
    fn id(&self) -> &str;

    /// The vector of each of `texts`, in order: all of one length, each of
    /// length one (a unit vector), so a dot product is their cosine.
    ///
    /// # Errors
    /// When the model cannot run on one of the texts; discovery then ranks
    /// by words alone for that search and logs why.
    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncodeError>;
}

/// An encoder that could not encode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the sentence encoder failed: {message}")]
pub struct EncodeError {
    /// What went wrong.
    pub message: String,
}

impl EncodeError {
    /// An error saying `message`.
    #[must_use]
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}
