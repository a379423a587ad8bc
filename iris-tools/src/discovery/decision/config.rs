//! `decision.yaml`: which features use the Decision backend, and how to
//! reach it.
//!
//! ```yaml
//! tools:
//!   discovery: true          # tool_search asks the Decision backend
//! provider: typesafe         # the key comes from IRIS_PROVIDER_API_KEYS__TYPESAFE
//! model: gpt-4.1-mini
//! endpoint: https://api.openai.com/v1/chat/completions
//! timeout: 20                # seconds, 30 when left out
//! retries: 2                 # retries of rate limits, server errors and
//!                            # dropped connections; 2 when left out
//! ```
//!
//! The agent configuration names the file (`decision.path`), relative to
//! the agent configuration's own folder.

use iris_runtime::config::Problem;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::error::DecisionError;

/// The environment variable prefix of provider API keys.
pub const API_KEY_PREFIX: &str = "IRIS_PROVIDER_API_KEYS__";

const DEFAULT_TIMEOUT_SECONDS: f64 = 30.0;

/// The parsed `decision.yaml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionConfig {
    /// Which features ask the Decision backend.
    pub tools: DecisionFeatures,
    /// The provider's name; it picks the API key variable.
    pub provider: String,
    /// The model asked.
    pub model: String,
    /// The OpenAI-compatible chat completions URL.
    pub endpoint: String,
    /// Seconds before a request is given up.
    #[serde(default = "default_timeout")]
    pub timeout: f64,
    /// Retries of rate limits, server errors and dropped connections.
    #[serde(default = "default_retries")]
    pub retries: u32,
}

/// Features that use the Decision backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionFeatures {
    /// `tool_search` selections.
    #[serde(default)]
    pub discovery: bool,
}

fn default_timeout() -> f64 {
    DEFAULT_TIMEOUT_SECONDS
}

fn default_retries() -> u32 {
    2
}

impl DecisionConfig {
    /// Reads and checks `path`.
    ///
    /// # Errors
    /// [`DecisionError::Config`] when the file cannot be read (not a
    /// regular file, over 1 MiB), or with line and column when it is not a
    /// valid `decision.yaml`.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, DecisionError> {
        let path = path.as_ref();
        let text = iris_runtime::config::yaml::read_bounded(path, "Decision file")
            .map_err(|message| Problem::new(path, "", message))?;
        Self::parse(&text, path)
    }

    /// Reads the file an agent configuration at `agent_config` names as
    /// `decision.path` (relative to that configuration's folder).
    ///
    /// # Errors
    /// As [`DecisionConfig::load`].
    pub fn load_for_agent(
        agent_config: &Path,
        decision_path: &Path,
    ) -> Result<Self, DecisionError> {
        let base = agent_config.parent().unwrap_or_else(|| Path::new("."));
        Self::load(base.join(decision_path))
    }

    /// Parses `text` as the `decision.yaml` at `origin` (used in errors).
    ///
    /// # Errors
    /// [`DecisionError::Config`] with line and column and what was expected.
    pub fn parse(text: &str, origin: &Path) -> Result<Self, DecisionError> {
        let config: Self =
            iris_runtime::config::yaml::from_str(text, "Decision file").map_err(|e| {
                let key = e.key.trim_start_matches('.').to_owned();
                let problem = Problem::new(origin, key, e.message);
                DecisionError::Config(match e.line {
                    Some(line) => problem.at(line, e.column.unwrap_or(0)),
                    None => problem,
                })
            })?;
        config.check(origin)?;
        Ok(config)
    }

    fn check(&self, origin: &Path) -> Result<(), DecisionError> {
        let problem = if self.provider.trim().is_empty() {
            Some("`provider` is empty; name the provider, such as `openai`")
        } else if self.model.trim().is_empty() {
            Some("`model` is empty; name the model to ask")
        } else if !(self.endpoint.starts_with("http://") || self.endpoint.starts_with("https://")) {
            Some("`endpoint` must be an http:// or https:// URL of a chat completions endpoint")
        } else if !(self.timeout.is_finite() && self.timeout > 0.0 && self.timeout <= 600.0) {
            Some("`timeout` must be a number of seconds between 0 and 600")
        } else {
            None
        };
        match problem {
            Some(message) => Err(Problem::new(origin, "", message).into()),
            None => Ok(()),
        }
    }

    /// The timeout as a duration.
    #[must_use]
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout)
    }

    /// The environment variable that holds the provider's API key:
    /// `IRIS_PROVIDER_API_KEYS__` and the provider name upper-cased.
    #[must_use]
    pub fn api_key_variable(&self) -> String {
        let provider: String = self
            .provider
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        format!("{API_KEY_PREFIX}{provider}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_good_file_parses_and_names_its_key() {
        let config = DecisionConfig::parse(
            "tools: {discovery: true}\nprovider: typesafe\nmodel: m\nendpoint: http://127.0.0.1:9/v1/chat/completions\ntimeout: 2.5\n",
            Path::new("decision.yaml"),
        )
        .unwrap();
        assert!(config.tools.discovery);
        assert_eq!(
            config.api_key_variable(),
            "IRIS_PROVIDER_API_KEYS__TYPESAFE"
        );
        assert_eq!(config.timeout(), Duration::from_millis(2500));
    }

    #[test]
    fn mistakes_name_file_line_and_expectation() {
        let err = DecisionConfig::parse(
            "tools: {discovery: true}\nprovider: typesafe\nmodle: m\nendpoint: http://x\n",
            Path::new("conf/decision.yaml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("conf/decision.yaml:3"), "{err}");
        assert!(err.contains("modle"), "{err}");
        let err = DecisionConfig::parse(
            "tools: {discovery: true}\nprovider: p\nmodel: m\nendpoint: ftp://x\n",
            Path::new("d.yaml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("http:// or https://"), "{err}");
    }
}
