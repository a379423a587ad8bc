//! One request and its answer: sent, retried with back-off on rate
//! limits, server errors and dropped connections, read within bounds,
//! streamed or whole, its failures described without the key.

use std::time::Duration;

use super::endpoint::{HttpEndpoint, QUOTED_BODY_CHARS, REMOTE_BLOCKED, RetryPolicy, is_loopback};

use reqwest::header::HeaderName;
use serde_json::Value;

use crate::{ModelError, ModelResponse};

/// Most of an error body read: only its start is quoted.
const MAX_ERROR_BODY_BYTES: usize = 16 * 1024;
/// Largest answer read, whole or streamed: far above any model's answer,
/// far below what would hurt the host.
pub const MAX_ANSWER_BYTES: usize = 32 * 1024 * 1024;

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
                format!(" to {}", iris_core::text::clip(to, QUOTED_BODY_CHARS))
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
    let quoted = iris_core::text::clip(&text, QUOTED_BODY_CHARS);
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
