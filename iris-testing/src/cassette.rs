//! Cassettes: a model provider's traffic kept in a file and played back by
//! a server on loopback that an adapter's base URL points at, so a test
//! runs the real adapter (request building, parsing, streaming) with no
//! key and no network.
//!
//! Played back strictly: each request must be the next one recorded, by
//! method, path and body (compared as JSON, so key order and spacing do
//! not matter); one that differs gets a `409` whose body names the first
//! difference, which the adapter reports as the model's error, and
//! [`CassetteServer::finish`] fails naming it too. Streamed answers are
//! kept as their server-sent events and sent back as such.
//!
//! Recording ([`CassetteServer::record`]) forwards each request to the real
//! provider and keeps the exchange, without the headers that carry keys;
//! [`CassetteServer::save`] refuses to write a cassette holding anything
//! shaped like a key.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of the cassette format this kit writes and reads.
pub const CASSETTE_FORMAT: u32 = 1;

/// The largest request body the server reads.
const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// A provider's traffic: requests and their answers, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cassette {
    /// [`CASSETTE_FORMAT`].
    pub format: u32,
    /// The exchanges, in the order they happen.
    pub interactions: Vec<Interaction>,
}

/// One request and its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interaction {
    /// What the adapter sent.
    pub request: RecordedHttpRequest,
    /// What the provider answered.
    pub response: RecordedHttpResponse,
}

/// A request as kept: its method, path (with query) and JSON body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedHttpRequest {
    /// `POST`, usually.
    pub method: String,
    /// The path, such as `/v1/chat/completions`.
    pub path: String,
    /// The body, as JSON.
    pub body: Value,
}

/// An answer as kept: a JSON body, or a stream of server-sent events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedHttpResponse {
    /// The HTTP status.
    pub status: u16,
    /// A whole JSON answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// A streamed answer, event by event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<StreamEvent>>,
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamEvent {
    /// Its `event:` name, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// Its `data:`, as JSON when it is JSON (`[DONE]` stays text).
    pub data: Value,
}

/// Why a cassette could not be read, written or played.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    /// The file could not be read or written.
    #[error("cassette `{path}`: {source}")]
    Io {
        /// The file.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
    /// The file is not a cassette.
    #[error("cassette `{path}` is not a cassette of format {CASSETTE_FORMAT}: {why}")]
    Invalid {
        /// The file.
        path: String,
        /// What was wrong.
        why: String,
    },
    /// A recording holds something shaped like a key.
    #[error(
        "refusing to save a cassette that holds something shaped like a key ({shown} at {at}); remove it from the request (keys belong in headers, which are never kept)"
    )]
    HoldsKey {
        /// Where it is.
        at: String,
        /// Its start.
        shown: String,
    },
    /// The server could not start.
    #[error("the cassette server could not start: {0}")]
    Start(std::io::Error),
}

impl Cassette {
    /// Reads the cassette at `path`.
    ///
    /// # Errors
    /// [`CassetteError`] when it cannot be read or is not a cassette.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, CassetteError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| CassetteError::Io {
            path: shown.clone(),
            source,
        })?;
        let cassette: Self = serde_json::from_str(&text).map_err(|e| CassetteError::Invalid {
            path: shown.clone(),
            why: e.to_string(),
        })?;
        if cassette.format != CASSETTE_FORMAT {
            return Err(CassetteError::Invalid {
                path: shown,
                why: format!("it is of format {}", cassette.format),
            });
        }
        Ok(cassette)
    }
}

/// A loopback server that plays a cassette back (or records one).
#[derive(Debug)]
pub struct CassetteServer {
    address: SocketAddr,
    state: Arc<Mutex<Playing>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

#[derive(Debug)]
struct Playing {
    mode: Mode,
    /// Interactions still to play, or played so far when recording.
    queue: VecDeque<Interaction>,
    played: usize,
    recorded: Vec<Interaction>,
    mismatches: Vec<String>,
}

#[derive(Debug, Clone)]
enum Mode {
    Replay,
    /// Answers in order, whatever is asked: a fake provider.
    Answer,
    Record {
        upstream: String,
        client: reqwest::Client,
    },
}

impl CassetteServer {
    /// Plays `cassette` back strictly, on a free loopback port.
    ///
    /// # Errors
    /// [`CassetteError::Start`] when no port can be bound.
    pub async fn replay(cassette: Cassette) -> Result<Self, CassetteError> {
        Self::start(Mode::Replay, cassette.interactions.into()).await
    }

    /// A fake provider: answers each request with the next of `answers`,
    /// whatever it asks (for a host's conformance checks, say, where the
    /// requests are the model's business). Past the last answer it answers
    /// `500`.
    ///
    /// # Errors
    /// [`CassetteError::Start`] when no port can be bound.
    pub async fn answering(answers: Vec<RecordedHttpResponse>) -> Result<Self, CassetteError> {
        let queue = answers
            .into_iter()
            .map(|response| Interaction {
                request: RecordedHttpRequest {
                    method: String::new(),
                    path: String::new(),
                    body: Value::Null,
                },
                response,
            })
            .collect();
        Self::start(Mode::Answer, queue).await
    }

    /// Forwards every request to `upstream` (the provider's base URL, such
    /// as `https://api.openai.com/v1`; the request's path after the
    /// server's root is appended) and keeps each exchange. Headers are
    /// forwarded (the key with them) but never kept.
    ///
    /// # Errors
    /// [`CassetteError::Start`] when no port can be bound or no client can
    /// be built.
    pub async fn record(upstream: impl Into<String>) -> Result<Self, CassetteError> {
        iris_core::tls::install_default_provider();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| CassetteError::Start(std::io::Error::other(e.to_string())))?;
        let upstream = upstream.into().trim_end_matches('/').to_owned();
        Self::start(Mode::Record { upstream, client }, VecDeque::new()).await
    }

    async fn start(mode: Mode, queue: VecDeque<Interaction>) -> Result<Self, CassetteError> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(CassetteError::Start)?;
        let address = listener.local_addr().map_err(CassetteError::Start)?;
        let state = Arc::new(Mutex::new(Playing {
            mode,
            queue,
            played: 0,
            recorded: Vec::new(),
            mismatches: Vec::new(),
        }));
        let (shutdown, mut stop) = tokio::sync::oneshot::channel::<()>();
        let serving = Arc::clone(&state);
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    accepted = listener.accept() => accepted,
                    _ = &mut stop => return,
                };
                let Ok((stream, _)) = accepted else { continue };
                let state = Arc::clone(&serving);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let state = Arc::clone(&state);
                        async move { Ok::<_, std::convert::Infallible>(answer(&state, request).await) }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        Ok(Self {
            address,
            state,
            shutdown: Some(shutdown),
        })
    }

    /// The server's root, `http://127.0.0.1:<port>`: give an adapter this
    /// followed by the path its provider's base URL has (such as `/v1`).
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// The requests that differed from the cassette, each with its first
    /// difference.
    #[must_use]
    pub fn mismatches(&self) -> Vec<String> {
        self.lock().mismatches.clone()
    }

    /// Checks that the cassette was played as recorded.
    ///
    /// # Panics
    /// Fails the test, as `assert!` does, when a request differed from the
    /// cassette (naming each difference) or an interaction was never
    /// requested.
    #[track_caller]
    #[allow(
        clippy::panic,
        clippy::manual_assert,
        reason = "it fails the test, as assert! does"
    )]
    pub fn finish(&self) {
        let playing = self.lock();
        if !playing.mismatches.is_empty() {
            panic!(
                "the adapter's requests drifted from the cassette:\n{}",
                playing.mismatches.join("\n")
            );
        }
        if !matches!(playing.mode, Mode::Record { .. }) && !playing.queue.is_empty() {
            panic!(
                "{} of the cassette's interactions were never requested (the run stopped after {} of them); the next one expected {} {}",
                playing.queue.len(),
                playing.played,
                playing.queue[0].request.method,
                playing.queue[0].request.path
            );
        }
    }

    /// The exchanges recorded so far, as a cassette.
    #[must_use]
    pub fn recorded(&self) -> Cassette {
        Cassette {
            format: CASSETTE_FORMAT,
            interactions: self.lock().recorded.clone(),
        }
    }

    /// Writes what was recorded to `path`.
    ///
    /// # Errors
    /// [`CassetteError::HoldsKey`] when a request or answer holds something
    /// shaped like a key; [`CassetteError::Io`] when the file cannot be
    /// written.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), CassetteError> {
        let cassette = self.recorded();
        let value = serde_json::to_value(&cassette).unwrap_or(Value::Null);
        if let Some((at, shown)) = find_key(&value, "$") {
            return Err(CassetteError::HoldsKey { at, shown });
        }
        let path = path.as_ref();
        let text = serde_json::to_string_pretty(&cassette).unwrap_or_default();
        std::fs::write(path, text + "\n").map_err(|source| CassetteError::Io {
            path: path.display().to_string(),
            source,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Playing> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for CassetteServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// The answer to one request: the next interaction's, a mismatch, or the
/// upstream's when recording.
async fn answer(state: &Mutex<Playing>, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let method = request.method().to_string();
    let path = request
        .uri()
        .path_and_query()
        .map_or_else(|| "/".to_owned(), ToString::to_string);
    let headers = request.headers().clone();
    let body = match http_body_util::Limited::new(request.into_body(), MAX_REQUEST_BYTES)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(e) => return plain(StatusCode::PAYLOAD_TOO_LARGE, &format!("request body: {e}")),
    };
    let body: Value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    let asked = RecordedHttpRequest { method, path, body };
    let mode = state
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .mode
        .clone();
    match mode {
        Mode::Replay => replay(state, &asked),
        Mode::Answer => {
            let mut playing = state.lock().unwrap_or_else(PoisonError::into_inner);
            match playing.queue.pop_front() {
                Some(next) => {
                    playing.played += 1;
                    respond(&next.response)
                }
                None => plain(StatusCode::INTERNAL_SERVER_ERROR, "no answer left"),
            }
        }
        Mode::Record { upstream, client } => {
            record(state, asked, &headers, &upstream, &client).await
        }
    }
}

fn replay(state: &Mutex<Playing>, asked: &RecordedHttpRequest) -> Response<Full<Bytes>> {
    let mut playing = state.lock().unwrap_or_else(PoisonError::into_inner);
    let number = playing.played + 1;
    let Some(next) = playing.queue.front().cloned() else {
        let why = format!(
            "request {number} ({} {}) has no interaction in the cassette, which holds {}",
            asked.method, asked.path, playing.played
        );
        playing.mismatches.push(why.clone());
        return plain(StatusCode::CONFLICT, &why);
    };
    let expected = &next.request;
    let difference = if expected.method != asked.method {
        Some(format!(
            "method: expected {}, got {}",
            expected.method, asked.method
        ))
    } else if expected.path != asked.path {
        Some(format!(
            "path: expected {}, got {}",
            expected.path, asked.path
        ))
    } else {
        first_difference(&expected.body, &asked.body, "$")
    };
    if let Some(difference) = difference {
        let why = format!("request {number} differs from the cassette at {difference}");
        playing.mismatches.push(why.clone());
        return plain(StatusCode::CONFLICT, &why);
    }
    playing.queue.pop_front();
    playing.played += 1;
    drop(playing);
    respond(&next.response)
}

async fn record(
    state: &Mutex<Playing>,
    asked: RecordedHttpRequest,
    headers: &hyper::HeaderMap,
    upstream: &str,
    client: &reqwest::Client,
) -> Response<Full<Bytes>> {
    let url = format!("{upstream}{}", strip_version(&asked.path, upstream));
    let mut forward = client.request(
        reqwest::Method::from_bytes(asked.method.as_bytes()).unwrap_or(reqwest::Method::POST),
        url,
    );
    for (name, value) in headers {
        if !matches!(name.as_str(), "host" | "content-length") {
            forward = forward.header(name.as_str(), value.as_bytes());
        }
    }
    let answered = match forward.body(asked.body.to_string()).send().await {
        Ok(answered) => answered,
        Err(e) => return plain(StatusCode::BAD_GATEWAY, &format!("the provider: {e}")),
    };
    let status = answered.status().as_u16();
    let streamed = answered
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let text = answered.text().await.unwrap_or_default();
    let response = if streamed {
        RecordedHttpResponse {
            status,
            body: None,
            events: Some(parse_events(&text)),
        }
    } else {
        RecordedHttpResponse {
            status,
            body: Some(serde_json::from_str(&text).unwrap_or(Value::String(text))),
            events: None,
        }
    };
    let reply = respond(&response);
    state
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .recorded
        .push(Interaction {
            request: asked,
            response,
        });
    reply
}

/// The request's path after the upstream's own path (`/v1/chat/...`
/// against `https://api.openai.com/v1` is `/chat/...`).
fn strip_version<'p>(path: &'p str, upstream: &str) -> &'p str {
    let base_path = upstream
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|at| &rest[at..]))
        .unwrap_or("");
    path.strip_prefix(base_path).unwrap_or(path)
}

/// An HTTP answer for `response`: its JSON, or its events as a stream.
fn respond(response: &RecordedHttpResponse) -> Response<Full<Bytes>> {
    let status = StatusCode::from_u16(response.status).unwrap_or(StatusCode::OK);
    let (content_type, body) = match &response.events {
        Some(events) => ("text/event-stream", render_events(events)),
        None => (
            "application/json",
            response
                .body
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default(),
        ),
    };
    let mut answer = Response::new(Full::new(Bytes::from(body)));
    *answer.status_mut() = status;
    if let Ok(value) = hyper::header::HeaderValue::from_str(content_type) {
        answer
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    answer
}

/// A refusal in plain text, which the adapters quote as it is.
fn plain(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut answer = Response::new(Full::new(Bytes::from(format!("cassette: {text}"))));
    *answer.status_mut() = status;
    answer.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    answer
}

/// `events` as a server-sent event stream.
fn render_events(events: &[StreamEvent]) -> String {
    let mut out = String::new();
    for event in events {
        if let Some(name) = &event.event {
            out.push_str("event: ");
            out.push_str(name);
            out.push('\n');
        }
        let data = match &event.data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        for line in data.lines() {
            out.push_str("data: ");
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// The events of a server-sent event stream.
fn parse_events(text: &str) -> Vec<StreamEvent> {
    let mut events = Vec::new();
    for block in text.split("\n\n") {
        let mut name = None;
        let mut data = Vec::new();
        for line in block.lines() {
            if let Some(value) = line.strip_prefix("event:") {
                name = Some(value.trim().to_owned());
            } else if let Some(value) = line.strip_prefix("data:") {
                data.push(value.strip_prefix(' ').unwrap_or(value));
            }
        }
        if name.is_none() && data.is_empty() {
            continue;
        }
        let data = data.join("\n");
        let data = serde_json::from_str(&data).unwrap_or(Value::String(data));
        events.push(StreamEvent { event: name, data });
    }
    events
}

/// Where `expected` and `actual` first differ, as a JSON path with both
/// values; `None` when they are equal.
#[must_use]
pub fn first_difference(expected: &Value, actual: &Value, path: &str) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, value) in e {
                let at = format!("{path}.{key}");
                match a.get(key) {
                    Some(other) => {
                        if let Some(difference) = first_difference(value, other, &at) {
                            return Some(difference);
                        }
                    }
                    None => return Some(format!("{at}: expected {}, got nothing", short(value))),
                }
            }
            a.iter()
                .find(|(key, _)| !e.contains_key(*key))
                .map(|(key, value)| format!("{path}.{key}: expected nothing, got {}", short(value)))
        }
        (Value::Array(e), Value::Array(a)) => {
            for (i, (value, other)) in e.iter().zip(a).enumerate() {
                if let Some(difference) = first_difference(value, other, &format!("{path}[{i}]")) {
                    return Some(difference);
                }
            }
            (e.len() != a.len())
                .then(|| format!("{path}: expected {} items, got {}", e.len(), a.len()))
        }
        _ if expected == actual => None,
        _ => Some(format!(
            "{path}: expected {}, got {}",
            short(expected),
            short(actual)
        )),
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 120 {
        return text;
    }
    let head: String = text.chars().take(117).collect();
    format!("{head}...")
}

/// The first string in `value` shaped like a provider's key, with where it
/// is and how it starts.
fn find_key(value: &Value, path: &str) -> Option<(String, String)> {
    match value {
        Value::String(text) => key_in(text).map(|key| {
            let shown: String = key.chars().take(6).collect();
            (path.to_owned(), format!("{shown}…"))
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_key(v, &format!("{path}[{i}]"))),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, v)| find_key(v, &format!("{path}.{k}"))),
        _ => None,
    }
}

/// The first token of `text` of a shape provider keys take (`sk-…`,
/// `sk-ant-…`, `AIza…`), long enough to be one.
fn key_in(text: &str) -> Option<&str> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ':' | '='))
        .find(|word| {
            let long = word.len() >= 24
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
            long && (word.starts_with("sk-") || word.starts_with("AIza"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_name_the_path_and_both_values() {
        let expected = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
        let same_other_order =
            json!({"messages": [{"content": "hi", "role": "user"}], "model": "m"});
        assert_eq!(first_difference(&expected, &same_other_order, "$"), None);
        let drifted = json!({"model": "m", "messages": [{"role": "user", "content": "hello"}]});
        assert_eq!(
            first_difference(&expected, &drifted, "$").as_deref(),
            Some(r#"$.messages[0].content: expected "hi", got "hello""#)
        );
        let extra =
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": true});
        assert_eq!(
            first_difference(&expected, &extra, "$").as_deref(),
            Some("$.stream: expected nothing, got true")
        );
    }

    #[test]
    fn keys_are_found_and_ordinary_text_is_not() {
        assert!(key_in("Bearer sk-proj-abcdefghijklmnopqrstuvwxyz012345").is_some());
        assert!(key_in("sk-ant-api03-abcdefghijklmnopqrstuvwxyz").is_some());
        assert!(key_in("a skeleton key for the sk- prefix").is_none());
        let value =
            json!({"messages": [{"content": "my key is sk-abcdefghijklmnopqrstuvwxyz0123"}]});
        assert_eq!(
            find_key(&value, "$").map(|(at, _)| at).as_deref(),
            Some("$.messages[0].content")
        );
    }

    #[test]
    fn events_round_trip() {
        let events = vec![
            StreamEvent {
                event: Some("message_start".into()),
                data: json!({"type": "message_start"}),
            },
            StreamEvent {
                event: None,
                data: json!("[DONE]"),
            },
        ];
        assert_eq!(parse_events(&render_events(&events)), events);
    }
}
