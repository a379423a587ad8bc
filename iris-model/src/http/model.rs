//! [`Wire`], what makes each provider's API different, and [`HttpModel`],
//! the one [`Model`](crate::Model) every HTTP adapter is.

use std::marker::PhantomData;
use std::time::Duration;

use super::endpoint::{Api, HttpEndpoint, RetryPolicy};
use super::exchange::{send, streamed};

use iris_core::BoxFuture;
use reqwest::header::HeaderName;
use serde_json::Value;

use crate::config::ModelConfig;
use crate::profile::ServerProfile;
use crate::{Model, ModelError, ModelRequest, ModelResponse, OnDelta, complete_whole};

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

    /// The tool whose call is the run's final answer, when this API's
    /// model is sent `request`'s output format as a tool it must call (it
    /// has no structured output of its own): the call comes back as the
    /// answer's text. `None` (the default) when the format is sent as the
    /// API's structured output.
    #[must_use]
    fn answering_tool(_endpoint: &HttpEndpoint, _request: &ModelRequest<'_>) -> Option<String> {
        None
    }

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
        let answering = W::answering_tool(&self.endpoint, &request);
        Box::pin(async move {
            let answer = send(&self.endpoint, &W::headers(&self.endpoint), &body).await?;
            W::parse(&answer)
                .map(|response| response.answered_by(answering.as_deref()))
                .map_err(|e| e.redacting(&self.endpoint.api_key))
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
        let answering = W::answering_tool(&self.endpoint, &request);
        Box::pin(async move {
            let headers = W::headers(&self.endpoint);
            let url = W::stream_url(&self.endpoint.url);
            streamed(&self.endpoint, &url, &headers, body, |response| {
                W::read_stream(response, on_delta)
            })
            .await
            .map(|response| response.answered_by(answering.as_deref()))
        })
    }
}
