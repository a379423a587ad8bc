//! HTTP for the model adapters: one client setup, and requests retried
//! with exponential back-off and jitter on rate limits, server errors and
//! dropped connections, honouring `Retry-After`. Keys travel in headers and
//! never appear in errors.

use std::marker::PhantomData;
use std::time::Duration;

use iris_core::BoxFuture;
use reqwest::header::HeaderName;
use serde_json::Value;

use super::config::{ModelConfig, ModelProvider};
use super::profile::ServerProfile;
use super::{Model, ModelError, ModelRequest, ModelResponse, OnDelta, complete_whole};

/// Characters of an error body quoted back.
const QUOTED_BODY_CHARS: usize = 300;
/// Most of an error body read: only its start is quoted.
const MAX_ERROR_BODY_BYTES: usize = 16 * 1024;
/// Largest answer read, whole or streamed: far above any model's answer,
/// far below what would hurt the host.
pub const MAX_ANSWER_BYTES: usize = 32 * 1024 * 1024;

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
    client: reqwest::Client,
    url: String,
    model: String,
    api_key: String,
    retry: RetryPolicy,
    /// Whether answers are asked for as server-sent events.
    stream: bool,
    /// How long one request may take.
    timeout: Duration,
    /// The server's dialect, for an API several servers speak.
    profile: ServerProfile,
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
    fn new(
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
    fn from_config(config: &ModelConfig, api: &Api) -> Result<Self, ModelError> {
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

/// What one provider's API makes different: its endpoint, its headers,
/// its request body, its answer and its stream. Everything else (the
/// client, retries, streaming or not, the [`Model`] impl) is
/// [`HttpModel`]'s, once for every provider: implementing `Wire` is how
/// another HTTP API becomes a model.
pub trait Wire: Send + Sync + 'static {
    /// The API's endpoint and key defaults.
    const API: Api;

    /// The headers every request carries (the key, a version).
    fn headers(endpoint: &HttpEndpoint) -> Vec<(HeaderName, String)>;

    /// The request body of `request` for `endpoint`'s model.
    fn body(endpoint: &HttpEndpoint, request: &ModelRequest<'_>) -> Value;

    /// What a streamed request's body needs: `"stream": true` unless the
    /// API says so otherwise.
    fn stream_body(_endpoint: &HttpEndpoint, body: &mut Value) {
        body["stream"] = Value::Bool(true);
    }

    /// Where a streamed request goes: the same URL unless the API streams
    /// from another.
    #[must_use]
    fn stream_url(url: &str) -> String {
        url.to_owned()
    }

    /// The answer to a whole (not streamed) request.
    ///
    /// # Errors
    /// [`ModelError`] for an answer that does not have the API's shape.
    fn parse(answer: &Value) -> Result<ModelResponse, ModelError>;

    /// Reads a streamed answer, handing text to `on_delta` as it arrives.
    fn read_stream(
        response: reqwest::Response,
        on_delta: OnDelta<'_>,
    ) -> BoxFuture<'_, Result<ModelResponse, ModelError>>;
}

/// A model behind an HTTP API, speaking its [`Wire`] format: an endpoint
/// (client, URL, model, key, retries) and the one [`Model`] impl every
/// adapter shares.
pub struct HttpModel<W> {
    endpoint: HttpEndpoint,
    wire: PhantomData<fn() -> W>,
}

impl<W> std::fmt::Debug for HttpModel<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpModel")
            .field("wire", &std::any::type_name::<W>())
            .field("endpoint", &self.endpoint)
            .finish()
    }
}

impl<W: Wire> HttpModel<W> {
    /// `model` at `base_url` (the API's own unless another server speaks
    /// it), with `api_key` and a request timeout.
    ///
    /// # Errors
    /// [`ModelError`] when no HTTP client can be built.
    pub fn new(
        model: impl Into<String>,
        api_key: impl Into<String>,
        base_url: &str,
        timeout: Duration,
    ) -> Result<Self, ModelError> {
        let endpoint =
            HttpEndpoint::new(model.into(), api_key.into(), base_url, W::API.path, timeout)?;
        Ok(Self::over(endpoint))
    }

    /// The model `config` names, its key read now from `api_key_env` (or
    /// the API's usual variable).
    ///
    /// # Errors
    /// [`ModelError`] for another provider, or a key variable that is not
    /// set (named, never its value).
    pub fn from_config(config: &ModelConfig) -> Result<Self, ModelError> {
        Ok(Self::over(HttpEndpoint::from_config(config, &W::API)?))
    }

    /// Retries by `policy` instead of the default (3 retries from 500 ms).
    #[must_use]
    pub fn with_retries(mut self, policy: RetryPolicy) -> Self {
        self.endpoint.retry = policy;
        self
    }

    /// Follows `profile`'s dialect (`profile:` in an agent file).
    #[must_use]
    pub fn with_profile(mut self, profile: ServerProfile) -> Self {
        self.endpoint.profile = profile;
        self
    }

    /// Streams answers (server-sent events; `stream: true` in an agent
    /// file): text reaches the runner's observers as it arrives, tool-call
    /// arguments are joined from their fragments. A stream that breaks off
    /// is an error, not retried (part of it may have been shown).
    #[must_use]
    pub fn streaming(mut self, stream: bool) -> Self {
        self.endpoint.stream = stream;
        self
    }

    /// The request body of `request`, as it would be sent.
    #[must_use]
    pub fn body(&self, request: &ModelRequest<'_>) -> Value {
        W::body(&self.endpoint, request)
    }

    fn over(endpoint: HttpEndpoint) -> Self {
        Self {
            endpoint,
            wire: PhantomData,
        }
    }
}

impl<W: Wire> Model for HttpModel<W> {
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let body = self.body(&request);
        Box::pin(async move {
            let answer = send(&self.endpoint, &W::headers(&self.endpoint), &body).await?;
            W::parse(&answer).map_err(|e| e.redacting(&self.endpoint.api_key))
        })
    }

    fn complete_streaming<'a>(
        &'a self,
        request: ModelRequest<'a>,
        on_delta: OnDelta<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        if !self.endpoint.stream {
            return complete_whole(self, request, on_delta);
        }
        let mut body = self.body(&request);
        W::stream_body(&self.endpoint, &mut body);
        Box::pin(async move {
            let headers = W::headers(&self.endpoint);
            let url = W::stream_url(&self.endpoint.url);
            streamed(&self.endpoint, &url, &headers, body, |response| {
                W::read_stream(response, on_delta)
            })
            .await
        })
    }
}

/// Refuses a URL a request cannot go to, and a key sent in clear text
/// anywhere but this machine (a local server often speaks plain HTTP).
fn check_url(url: &str, with_key: bool) -> Result<(), ModelError> {
    let shown: String = url.chars().take(QUOTED_BODY_CHARS).collect();
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

/// POSTs `body` to `endpoint` with `headers`, retried by its policy; the
/// answer as JSON. Shared with the Decision backend of `tool_search`; not a
/// public API.
///
/// # Errors
/// [`ModelError`] when every attempt failed, with the last failure.
#[doc(hidden)]
pub async fn send(
    endpoint: &HttpEndpoint,
    headers: &[(HeaderName, String)],
    body: &Value,
) -> Result<Value, ModelError> {
    retrying(endpoint.retry, || once(endpoint, headers, body))
        .await
        .map_err(|e| e.redacting(&endpoint.api_key))
}

/// Asks `url` of `endpoint` for a streamed answer to `body` and reads it
/// with `read`. Opening the stream is retried; a stream that breaks off is
/// not (part of it may have been shown).
pub(crate) async fn streamed<Read, Fut>(
    endpoint: &HttpEndpoint,
    url: &str,
    headers: &[(HeaderName, String)],
    body: Value,
    read: Read,
) -> Result<ModelResponse, ModelError>
where
    Read: FnOnce(reqwest::Response) -> Fut,
    Fut: std::future::Future<Output = Result<ModelResponse, ModelError>>,
{
    let answer = match open_stream(endpoint, url, headers, &body).await {
        Ok(response) => read(response).await,
        Err(error) => Err(error),
    };
    answer.map_err(|e| e.redacting(&endpoint.api_key))
}

/// POSTs `body` and hands back the response whose status is a success,
/// retried by `retry` until then, for a body read as a stream.
async fn open_stream(
    endpoint: &HttpEndpoint,
    url: &str,
    headers: &[(HeaderName, String)],
    body: &Value,
) -> Result<reqwest::Response, ModelError> {
    retrying(endpoint.retry, || async {
        let response = respond(endpoint, url, headers, body).await?;
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

/// Whether model requests may leave this machine; see
/// [`block_remote_requests`].
static REMOTE_BLOCKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes every model request to a host other than this machine fail (or
/// lets them go again): a test suite that must never reach a real provider
/// (and spend a key) turns it on, and points its adapters at a loopback
/// server such as a cassette. Process-wide.
pub fn block_remote_requests(block: bool) {
    REMOTE_BLOCKED.store(block, std::sync::atomic::Ordering::Relaxed);
}

/// Whether `url` names this machine.
fn is_loopback(url: &str) -> bool {
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

async fn respond(
    endpoint: &HttpEndpoint,
    url: &str,
    headers: &[(HeaderName, String)],
    body: &Value,
) -> Result<reqwest::Response, Failure> {
    if REMOTE_BLOCKED.load(std::sync::atomic::Ordering::Relaxed) && !is_loopback(url) {
        return Err(Failure {
            message: format!(
                "model requests to other machines are blocked in this process (`block_remote_requests`), and this one was for {url}; point the adapter's base URL at a loopback server, such as a cassette"
            ),
            retryable: false,
            retry_after: None,
        });
    }
    let mut request = endpoint
        .client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(name, value);
    }
    request.send().await.map_err(|e| Failure {
        message: describe(&e, endpoint.timeout),
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
        // Any number of seconds, however large: the policy's longest wait
        // bounds it.
        .and_then(|s| {
            Duration::try_from_secs_f64(s)
                .ok()
                .or((s > 0.0).then_some(Duration::MAX))
        });
    if status.is_redirection() {
        let to = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            // A header from a server may be anything: a bounded quote.
            .map_or_else(String::new, |to| {
                format!(
                    " to {}",
                    to.chars().take(QUOTED_BODY_CHARS).collect::<String>()
                )
            });
        return Failure {
            message: format!(
                "the model endpoint answered HTTP {status}, a redirect{to}; redirects are not followed (they would carry the key), so set the base URL to where it points"
            ),
            retryable: false,
            retry_after: None,
        };
    }
    let mut response = response;
    let text = match read_capped(&mut response, MAX_ERROR_BODY_BYTES).await {
        Ok(Capped::Whole(body) | Capped::Cut(body)) => String::from_utf8_lossy(&body).into_owned(),
        Err(_) => String::new(),
    };
    let quoted: String = text.chars().take(QUOTED_BODY_CHARS).collect();
    Failure {
        message: format!("the model endpoint answered HTTP {status}: {quoted}"),
        retryable: status.as_u16() == 429 || status.is_server_error(),
        retry_after,
    }
}

async fn once(
    endpoint: &HttpEndpoint,
    headers: &[(HeaderName, String)],
    body: &Value,
) -> Result<Value, Failure> {
    let mut response = respond(endpoint, &endpoint.url, headers, body).await?;
    if !response.status().is_success() {
        return Err(failed(response).await);
    }
    let text = match read_capped(&mut response, MAX_ANSWER_BYTES).await {
        Ok(Capped::Whole(text)) => text,
        Ok(Capped::Cut(_)) => {
            return Err(Failure {
                message: format!(
                    "the model endpoint's answer is over {} MiB; that is no model's answer",
                    MAX_ANSWER_BYTES >> 20
                ),
                retryable: false,
                retry_after: None,
            });
        }
        Err(e) => {
            return Err(Failure {
                message: describe(&e, endpoint.timeout),
                retryable: true,
                retry_after: None,
            });
        }
    };
    serde_json::from_slice(&text).map_err(|e| Failure {
        message: format!("the model endpoint answered something that is not JSON ({e})"),
        retryable: false,
        retry_after: None,
    })
}

/// A body read up to a bound.
enum Capped {
    Whole(Vec<u8>),
    /// The first bytes of a longer body, up to the bound.
    Cut(Vec<u8>),
}

/// `response`'s body, reading no more than `max` bytes of it (a declared
/// length over `max` is refused before reading).
async fn read_capped(
    response: &mut reqwest::Response,
    max: usize,
) -> Result<Capped, reqwest::Error> {
    let declared = response
        .content_length()
        .and_then(|length| usize::try_from(length).ok());
    if declared.is_some_and(|length| length > max) {
        return Ok(Capped::Cut(Vec::new()));
    }
    let mut body = Vec::with_capacity(declared.unwrap_or(0));
    while let Some(chunk) = response.chunk().await? {
        let room = max - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok(Capped::Cut(body));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Capped::Whole(body))
}

struct Failure {
    message: String,
    retryable: bool,
    retry_after: Option<Duration>,
}

fn describe(error: &reqwest::Error, timeout: Duration) -> String {
    if error.is_timeout() {
        format!(
            "the model endpoint did not answer within {} seconds",
            timeout.as_secs_f64()
        )
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
