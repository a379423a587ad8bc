//! Models fetched once from the Hugging Face hub into its local cache
//! (`HF_HOME`, else `~/.cache/huggingface`), then loaded from there.

use hf_hub::api::sync::ApiBuilder;
use hf_hub::{Repo, RepoType};

use crate::{EncoderError, SentenceEncoder};

/// The files a model folder must hold, fetched first.
const REQUIRED: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];
/// The settings read when the repository has them.
const OPTIONAL: [&str; 2] = ["sentence_bert_config.json", "1_Pooling/config.json"];

impl SentenceEncoder {
    /// Loads `repo` (`sentence-transformers/all-MiniLM-L6-v2`) at
    /// `revision` (a commit, for a model that never changes under you; or a
    /// branch such as `main`) from the hub's cache, fetching what the cache
    /// lacks once. A token in `HF_TOKEN` or the hub's token file is sent for
    /// private models.
    ///
    /// # Errors
    /// [`EncoderError::Hub`] when a required file cannot be fetched, and
    /// the errors of [`from_folder`](Self::from_folder).
    pub fn from_hub(repo: &str, revision: &str) -> Result<Self, EncoderError> {
        let hub_error = |file: &'static str, reason: String| EncoderError::Hub {
            repo: repo.to_owned(),
            file,
            reason,
        };
        let api = ApiBuilder::from_env()
            .with_progress(false)
            .build()
            .map_err(|e| hub_error("(none yet)", e.to_string()))?;
        let remote = api.repo(Repo::with_revision(
            repo.to_owned(),
            RepoType::Model,
            revision.to_owned(),
        ));
        let mut folder = None;
        for file in REQUIRED {
            let path = remote
                .get(file)
                .map_err(|e| hub_error(file, e.to_string()))?;
            folder = path.parent().map(std::path::Path::to_path_buf);
        }
        for file in OPTIONAL {
            // Absent from many repositories: the defaults then hold.
            if let Err(error) = remote.get(file) {
                tracing::debug!(repo, file, %error, "optional model file not fetched");
            }
        }
        let folder =
            folder.ok_or_else(|| hub_error("config.json", "no cache folder".to_owned()))?;
        Self::load(&folder, repo)
    }
}
