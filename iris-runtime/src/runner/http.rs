//! HTTP for the model adapters: one client setup, and requests retried
//! with exponential back-off and jitter on rate limits, server errors and
//! dropped connections, honouring `Retry-After`. Keys travel in headers and
//! never appear in errors.

use std::time::Duration;

use reqwest::header::HeaderName;
use serde_json::Value;

use super::config::{ModelConfig, ModelProvider};
use super::model::ModelError;

/// Characters of an error body quoted back.
const QUOTED_BODY_CHARS: usize = 300;

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
pub(super) struct Endpoint {
    pub(super) client: reqwest::Client,
    pub(super) url: String,
    pub(super) model: String,
    api_key: String,
    pub(super) retry: RetryPolicy,
    /// Whether answers are asked for as server-sent events.
    pub(super) stream: bool,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &"[redacted]")
            .field("retry", &self.retry)
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

/// How an adapter reads a model configuration.
pub(super) struct Api {
    /// The provider the configuration must name.
    pub(super) provider: ModelProvider,
    /// The API's name, for the error when it names another.
    pub(super) name: &'static str,
    /// The base URL when the configuration gives none.
    pub(super) base_url: &'static str,
    /// The key's variable when the configuration names none; `None` sends no key
    /// (local servers often take none).
    pub(super) key_variable: Option<&'static str>,
    /// The path after the base URL.
    pub(super) path: &'static str,
}

impl Endpoint {
    /// `model` at `base_url` followed by `path`, with a request timeout.
    pub(super) fn new(
        model: String,
        api_key: String,
        base_url: &str,
        path: &str,
        timeout: Duration,
    ) -> Result<Self, ModelError> {
        Ok(Self {
            client: client(timeout)?,
            url: format!("{}/{path}", base_url.trim_end_matches('/')),
            model,
            api_key,
            retry: RetryPolicy::default(),
            stream: false,
        })
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
        let variable = config.api_key_env.as_deref().or(api.key_variable);
        let api_key = match variable {
            Some(variable) => std::env::var(variable).map_err(|_| {
                ModelError::new(format!(
                    "environment variable `{variable}` is not set; it holds the API key"
                ))
            })?,
            None => String::new(),
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
        Ok(endpoint)
    }

    /// The key as a bearer token, when there is one.
    #[cfg(feature = "openai")]
    pub(super) fn bearer(&self) -> Vec<(HeaderName, String)> {
        if self.api_key.is_empty() {
            Vec::new()
        } else {
            vec![(
                reqwest::header::AUTHORIZATION,
                format!("Bearer {}", self.api_key),
            )]
        }
    }

    /// The key, for an API that takes it in a header of its own.
    #[cfg(feature = "anthropic")]
    pub(super) fn api_key(&self) -> &str {
        &self.api_key
    }
}

/// The constructors every adapter has (`new`, `from_config`,
/// `with_retries`, `streaming`), for a type holding an `endpoint` and an
/// `API` constant in its module. `$example_url` is the base URL the docs
/// show; `$key` says where `from_config` finds the key.
macro_rules! endpoint_constructors {
    ($adapter:ty, $example_url:literal, $key:literal) => {
        impl $adapter {
            #[doc = concat!("`model` at `base_url` (such as `", $example_url, "`), with a request timeout.")]
            ///
            /// # Errors
            /// [`ModelError`] when no HTTP client can be built.
            pub fn new(
                model: impl Into<String>,
                api_key: impl Into<String>,
                base_url: &str,
                timeout: std::time::Duration,
            ) -> Result<Self, ModelError> {
                let endpoint =
                    Endpoint::new(model.into(), api_key.into(), base_url, API.path, timeout)?;
                Ok(Self { endpoint })
            }

            #[doc = concat!("The model a model configuration names, its key read now ", $key, ".")]
            ///
            /// # Errors
            /// [`ModelError`] for another provider, or a key variable that is
            /// not set (named, never its value).
            pub fn from_config(config: &ModelConfig) -> Result<Self, ModelError> {
                Ok(Self {
                    endpoint: Endpoint::from_config(config, &API)?,
                })
            }

            /// Retries by `policy` instead of the default (3 retries from
            /// 500 ms).
            #[must_use]
            pub fn with_retries(mut self, policy: RetryPolicy) -> Self {
                self.endpoint.retry = policy;
                self
            }

            /// Streams answers (server-sent events; `stream: true` in the
            /// agent file): text reaches the runner's observers as it
            /// arrives, tool-call arguments are joined from their fragments.
            /// A stream that breaks off is an error, not retried (part of it
            /// may have been shown).
            #[must_use]
            pub fn streaming(mut self, stream: bool) -> Self {
                self.endpoint.stream = stream;
                self
            }
        }
    };
}
pub(super) use endpoint_constructors;

/// An HTTP client with `timeout` per request.
fn client(timeout: Duration) -> Result<reqwest::Client, ModelError> {
    crate::tls::install_default_provider();
    reqwest::Client::builder()
        .timeout(timeout)
        .build()
        .map_err(|e| ModelError::new(format!("no HTTP client could be built: {e}")))
}

/// POSTs `body` to `endpoint` with `headers`, retried by its policy; the
/// answer as JSON.
pub(super) async fn send(
    endpoint: &Endpoint,
    headers: &[(HeaderName, String)],
    body: &Value,
) -> Result<Value, ModelError> {
    let (client, url) = (&endpoint.client, endpoint.url.as_str());
    retrying(endpoint.retry, || once(client, url, headers, body)).await
}

/// Asks `endpoint` for a streamed answer to `body` (`"stream": true`
/// added) and reads it with `read`. Opening the stream is retried; a stream
/// that breaks off is not (part of it may have been shown).
pub(super) async fn streamed<Read, Fut>(
    endpoint: &Endpoint,
    headers: &[(HeaderName, String)],
    mut body: Value,
    read: Read,
) -> Result<super::model::ModelResponse, ModelError>
where
    Read: FnOnce(reqwest::Response) -> Fut,
    Fut: std::future::Future<Output = Result<super::model::ModelResponse, ModelError>>,
{
    body["stream"] = Value::Bool(true);
    let response = open_stream(
        &endpoint.client,
        &endpoint.url,
        headers,
        &body,
        endpoint.retry,
    )
    .await?;
    read(response).await
}

/// POSTs `body` and hands back the response whose status is a success,
/// retried by `retry` until then, for a body read as a stream.
async fn open_stream(
    client: &reqwest::Client,
    url: &str,
    headers: &[(HeaderName, String)],
    body: &Value,
    retry: RetryPolicy,
) -> Result<reqwest::Response, ModelError> {
    retrying(retry, || async {
        let response = respond(client, url, headers, body).await?;
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(failed(response).await)
        }
    })
    .await
}

/// Runs `attempt` until it succeeds, fails for good, or `retry` runs out.
async fn retrying<T, Fut>(
    retry: RetryPolicy,
    mut attempt: impl FnMut() -> Fut,
) -> Result<T, ModelError>
where
    Fut: std::future::Future<Output = Result<T, Failure>>,
{
    let mut tries = 0;
    loop {
        let failure = match attempt().await {
            Ok(answer) => return Ok(answer),
            Err(failure) => failure,
        };
        if !failure.retryable || tries >= retry.retries {
            let made = tries + 1;
            return Err(ModelError::new(format!(
                "{} ({made} attempt{})",
                failure.message,
                if made == 1 { "" } else { "s" }
            )));
        }
        let wait = failure
            .retry_after
            .unwrap_or_else(|| backoff(retry.base_delay, tries))
            .min(retry.max_delay);
        tracing::debug!(attempt = tries, ?wait, reason = %failure.message, "retrying the model request");
        tokio::time::sleep(wait).await;
        tries += 1;
    }
}

async fn respond(
    client: &reqwest::Client,
    url: &str,
    headers: &[(HeaderName, String)],
    body: &Value,
) -> Result<reqwest::Response, Failure> {
    let mut request = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(name, value);
    }
    request.send().await.map_err(|e| Failure {
        message: describe(&e),
        retryable: e.is_timeout() || e.is_connect() || e.is_request(),
        retry_after: None,
    })
}

/// The failure an unsuccessful response stands for.
async fn failed(response: reqwest::Response) -> Failure {
    let status = response.status();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64);
    let text = response.text().await.unwrap_or_default();
    let quoted: String = text.chars().take(QUOTED_BODY_CHARS).collect();
    Failure {
        message: format!("the model endpoint answered HTTP {status}: {quoted}"),
        retryable: status.as_u16() == 429 || status.is_server_error(),
        retry_after,
    }
}

async fn once(
    client: &reqwest::Client,
    url: &str,
    headers: &[(HeaderName, String)],
    body: &Value,
) -> Result<Value, Failure> {
    let response = respond(client, url, headers, body).await?;
    if !response.status().is_success() {
        return Err(failed(response).await);
    }
    let text = response.text().await.map_err(|e| Failure {
        message: describe(&e),
        retryable: true,
        retry_after: None,
    })?;
    serde_json::from_str(&text).map_err(|e| Failure {
        message: format!("the model endpoint answered something that is not JSON ({e})"),
        retryable: false,
        retry_after: None,
    })
}

struct Failure {
    message: String,
    retryable: bool,
    retry_after: Option<Duration>,
}

fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "the model endpoint did not answer in time".to_owned()
    } else if error.is_connect() {
        "the model endpoint could not be reached".to_owned()
    } else {
        // reqwest's message names the URL, never the headers.
        format!("the request to the model endpoint failed: {error}")
    }
}

/// `base × 2^attempt`, with up to half of it taken off at random so that
/// clients that failed together do not retry together.
fn backoff(base: Duration, attempt: u32) -> Duration {
    let full = base.saturating_mul(1_u32 << attempt.min(16));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let jitter = f64::from(nanos % 1000) / 2000.0;
    full.mul_f64(1.0 - jitter)
}
