//! Where requests go: an API's endpoint and key, the client, the retry
//! policy, and the URLs a request may not go to.

use std::time::Duration;

use reqwest::header::HeaderName;

use crate::ModelError;
use crate::config::{ModelConfig, ModelProvider};
use crate::profile::ServerProfile;

/// Characters of an error body (or a URL) quoted back.
pub(super) const QUOTED_BODY_CHARS: usize = 300;

/// How failed requests are retried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts after the first.
    pub retries: u32,
    /// The first back-off; each later one doubles, with jitter.
    pub base_delay: Duration,
    /// The longest wait, `Retry-After` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

/// What every adapter holds: the client, the endpoint's URL, the model, the
/// key (never shown) and the retry policy.
pub struct HttpEndpoint {
    pub(super) client: reqwest::Client,
    pub(super) url: String,
    pub(super) model: String,
    pub(super) api_key: String,
    pub(super) retry: RetryPolicy,
    /// Whether answers are asked for as server-sent events.
    pub(super) stream: bool,
    /// How long one request may take.
    pub(super) timeout: Duration,
    /// The server's dialect, for an API several servers speak.
    pub(super) profile: ServerProfile,
}

impl std::fmt::Debug for HttpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEndpoint")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &"[redacted]")
            .field("retry", &self.retry)
            .field("stream", &self.stream)
            .field("profile", &self.profile)
            .finish_non_exhaustive()
    }
}

/// Where an API is and how a model configuration names it.
#[derive(Debug, Clone, Copy)]
pub struct Api {
    /// The provider a configuration must name for this API.
    pub provider: ModelProvider,
    /// The API's name, for the error when a configuration names another.
    pub name: &'static str,
    /// The base URL when the configuration gives none.
    pub base_url: &'static str,
    /// The key's variable when the configuration names none; `None` sends
    /// no key (local servers often take none).
    pub key_variable: Option<&'static str>,
    /// The path after the base URL.
    pub path: &'static str,
}

impl HttpEndpoint {
    /// `model` at `base_url` followed by `path`, with a request timeout.
    pub(super) fn new(
        model: String,
        api_key: String,
        base_url: &str,
        path: &str,
        timeout: Duration,
    ) -> Result<Self, ModelError> {
        // An API whose path names the model (Gemini's
        // `models/{model}:generateContent`) has it filled in here.
        let path = path.replace("{model}", &model);
        let url = format!("{}/{path}", base_url.trim_end_matches('/'));
        Self::at(url, model, api_key, timeout)
    }

    /// `model` at the full `url`, with a request timeout.
    ///
    /// # Errors
    /// [`ModelError`] when the URL is not an HTTP one, when a key would
    /// travel in clear text (plain `http` to a host other than this
    /// machine), or when no HTTP client can be built.
    pub fn at(
        url: String,
        model: String,
        api_key: String,
        timeout: Duration,
    ) -> Result<Self, ModelError> {
        check_url(&url, !api_key.is_empty())?;
        Ok(Self {
            client: client(timeout)?,
            url,
            model,
            api_key,
            retry: RetryPolicy::default(),
            stream: false,
            timeout,
            profile: ServerProfile::Openai,
        })
    }

    /// The same endpoint, retrying by `policy`.
    #[must_use]
    pub fn with_retries(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The endpoint a model configuration names for `api`, its key
    /// read now (a variable that is not set is named, never a value).
    pub(super) fn from_config(config: &ModelConfig, api: &Api) -> Result<Self, ModelError> {
        if config.provider != api.provider {
            return Err(ModelError::new(format!(
                "this adapter speaks {}; the configuration names another provider",
                api.name
            )));
        }
        let api_key = match (config.api_key_env.as_deref(), api.key_variable) {
            (Some(variable), _) => std::env::var(variable).map_err(|_| {
                ModelError::new(format!(
                    "environment variable `{variable}` is not set; it holds the API key"
                ))
            })?,
            // Another server speaking the API (a local llama.cpp, vLLM or
            // Ollama) often takes no key: the provider's usual variable is
            // sent when it is set, and nothing when it is not.
            (None, Some(variable)) if config.base_url.is_some() => {
                std::env::var(variable).unwrap_or_default()
            }
            (None, Some(variable)) => std::env::var(variable).map_err(|_| {
                ModelError::new(format!(
                    "environment variable `{variable}` is not set; it holds the API key (for another server that takes none, give its `base_url`)"
                ))
            })?,
            (None, None) => String::new(),
        };
        let base_url = config.base_url.as_deref().unwrap_or(api.base_url);
        let mut endpoint = Self::new(
            config.model.clone(),
            api_key,
            base_url,
            api.path,
            Duration::from_secs(120),
        )?;
        endpoint.stream = config.stream;
        endpoint.profile = config.profile;
        Ok(endpoint)
    }

    /// The model's name at the provider.
    #[must_use]
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The server whose dialect requests follow.
    #[must_use]
    pub fn profile(&self) -> ServerProfile {
        self.profile
    }

    /// The key as a bearer token, when there is one.
    #[must_use]
    pub fn bearer(&self) -> Vec<(HeaderName, String)> {
        if self.api_key.is_empty() {
            Vec::new()
        } else {
            vec![(
                reqwest::header::AUTHORIZATION,
                format!("Bearer {}", self.api_key),
            )]
        }
    }

    /// The key, for an API that takes it in a header of its own (never
    /// put it anywhere but a header).
    #[must_use]
    pub fn api_key(&self) -> &str {
        &self.api_key
    }
}

/// Refuses a URL a request cannot go to, and a key sent in clear text
/// anywhere but this machine (a local server often speaks plain HTTP).
fn check_url(url: &str, with_key: bool) -> Result<(), ModelError> {
    let shown = iris_core::text::clip(url, QUOTED_BODY_CHARS);
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| ModelError::new(format!("the model URL `{shown}` is not a URL ({e})")))?;
    let local = names_this_machine(parsed.host_str().unwrap_or_default());
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if local || !with_key => Ok(()),
        "http" => Err(ModelError::new(format!(
            "the model URL `{shown}` is plain HTTP to another machine, so the API key would travel in clear text; use `https://`, or a loopback address for a local server"
        ))),
        other => Err(ModelError::new(format!(
            "the model URL `{shown}` uses `{other}`; use `https://` (or `http://` for a local server)"
        ))),
    }
}

/// An HTTP client with `timeout` per request.
fn client(timeout: Duration) -> Result<reqwest::Client, ModelError> {
    iris_core::tls::install_default_provider();
    reqwest::Client::builder()
        .timeout(timeout)
        // A redirect would carry the key's header to wherever it points
        // (reqwest drops only `Authorization` across hosts); the answer
        // says where it pointed instead.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| ModelError::new(format!("no HTTP client could be built: {e}")))
}

/// Whether model requests may leave this machine; see
/// [`block_remote_requests`].
pub(super) static REMOTE_BLOCKED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Makes every model request to a host other than this machine fail (or
/// lets them go again): a test suite that must never reach a real provider
/// (and spend a key) turns it on, and points its adapters at a loopback
/// server such as a cassette. Process-wide.
pub fn block_remote_requests(block: bool) {
    REMOTE_BLOCKED.store(block, std::sync::atomic::Ordering::Relaxed);
}

/// Whether `url` names this machine.
pub(super) fn is_loopback(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|url| names_this_machine(url.host_str().unwrap_or_default()))
}

/// Whether `host` (as a URL gives it) is this machine.
fn names_this_machine(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|address| address.is_loopback())
}
