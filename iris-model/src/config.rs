//! Which model an agent asks and how: provider, model name, endpoint, key
//! variable and sampling. An agent file's `model` section reads into it;
//! code builds it with [`ModelConfig::new`].

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Model, ModelError};

/// The provider APIs a model can be reached through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModelProvider {
    /// OpenAI Chat Completions (and compatible servers).
    OpenaiChat,
    /// OpenAI Responses.
    OpenaiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// The Gemini API (`generateContent`).
    Gemini,
}

impl ModelProvider {
    /// The provider's name in an agent file (`openai_chat`, …).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ModelProvider::OpenaiChat => "openai_chat",
            ModelProvider::OpenaiResponses => "openai_responses",
            ModelProvider::Anthropic => "anthropic",
            ModelProvider::Gemini => "gemini",
        }
    }

    /// The Iris feature whose adapter speaks this API.
    #[must_use]
    pub fn feature(self) -> &'static str {
        match self {
            ModelProvider::OpenaiChat | ModelProvider::OpenaiResponses => "openai",
            ModelProvider::Anthropic => "anthropic",
            ModelProvider::Gemini => "gemini",
        }
    }
}

/// Which model an agent asks, where, with which key and sampling.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ModelConfig {
    /// The wire API.
    pub provider: ModelProvider,
    /// The model's name at the provider.
    pub model: String,
    /// Another endpoint speaking the same API (a proxy, vLLM, Ollama).
    pub base_url: Option<String>,
    /// The environment variable holding the API key (the provider's usual
    /// one when `None`); its value is read when the adapter is made and
    /// never shown.
    pub api_key_env: Option<String>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Most tokens per answer.
    pub max_tokens: Option<u32>,
    /// Stream answers (server-sent events), so observers see the model's
    /// text as it arrives.
    pub stream: bool,
    /// The server behind an OpenAI Chat Completions endpoint, whose
    /// dialect the requests follow (OpenAI's own when left as is).
    pub profile: super::ServerProfile,
}

impl ModelConfig {
    /// `model` through `provider`'s API at its usual endpoint and key variable.
    pub fn new(provider: ModelProvider, model: impl Into<String>) -> Self {
        Self {
            provider,
            model: model.into(),
            base_url: None,
            api_key_env: None,
            temperature: None,
            max_tokens: None,
            stream: false,
            profile: super::ServerProfile::Openai,
        }
    }

    /// Another endpoint speaking the same API.
    #[must_use]
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The variable holding the API key.
    #[must_use]
    pub fn with_api_key_env(mut self, variable: impl Into<String>) -> Self {
        self.api_key_env = Some(variable.into());
        self
    }

    /// Sampling temperature.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Most tokens per answer.
    #[must_use]
    pub fn with_max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = Some(tokens);
        self
    }

    /// Streams answers.
    #[must_use]
    pub fn streaming(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// The server behind an OpenAI Chat Completions endpoint (llama.cpp,
    /// vLLM, Ollama, LM Studio), whose dialect the requests follow.
    #[must_use]
    pub fn with_profile(mut self, profile: super::ServerProfile) -> Self {
        self.profile = profile;
        self
    }

    /// The adapter that speaks this configuration's API, its key read now.
    ///
    /// # Errors
    /// [`ModelError`] when the adapter is not built into this Iris (the
    /// error names the feature to enable), or its key variable is not set.
    pub fn build_model(&self) -> Result<Box<dyn Model>, ModelError> {
        match self.provider {
            #[cfg(feature = "openai")]
            ModelProvider::OpenaiChat => Ok(Box::new(super::OpenAiChat::from_config(self)?)),
            #[cfg(feature = "openai")]
            ModelProvider::OpenaiResponses => {
                Ok(Box::new(super::OpenAiResponses::from_config(self)?))
            }
            #[cfg(feature = "anthropic")]
            ModelProvider::Anthropic => Ok(Box::new(super::AnthropicMessages::from_config(self)?)),
            #[cfg(feature = "gemini")]
            ModelProvider::Gemini => Ok(Box::new(super::GeminiModel::from_config(self)?)),
            #[allow(
                unreachable_patterns,
                reason = "which arms exist depends on the features"
            )]
            provider => Err(ModelError::new(format!(
                "the model provider needs Iris's `{}` feature; enable it, or give the runner a model of your own with `AgentRunner::new(agent, model)`",
                provider.feature()
            ))),
        }
    }
}
