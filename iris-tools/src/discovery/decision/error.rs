//! Why a Decision backend could not be set up.

/// Why `decision.yaml` or the Decision backend it describes cannot be used.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum DecisionError {
    /// A configuration file holds something unexpected: where, and what
    /// was expected.
    #[error(transparent)]
    Config(#[from] iris_runtime::config::Problem),
    /// A provider API key variable is not set.
    #[error(
        "the API key variable `{variable}` is not set; export it with the key of provider `{provider}`"
    )]
    MissingApiKey {
        /// The variable.
        variable: String,
        /// The provider.
        provider: String,
    },
    /// A feature asked of the Decision backend that its configuration does not enable.
    #[error(
        "`{path}` does not enable `tools.{feature}`; set it to true to use the Decision backend for it"
    )]
    DecisionFeatureOff {
        /// The configuration file.
        path: String,
        /// The feature.
        feature: &'static str,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client of the Decision backend: {message}")]
    HttpClient {
        /// Why.
        message: String,
    },
}

iris_runtime::__wings::debug_as_display!(DecisionError);
