//! The loopback server that plays a cassette back strictly, or records
//! one through to the provider.
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use super::diff::first_difference;
use super::events::{parse_events, render_events};
use super::format::{
    CASSETTE_FORMAT, Cassette, CassetteError, Interaction, RecordedHttpRequest,
    RecordedHttpResponse,
};
use super::keys::find_key;

use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::Value;

/// The largest request body the server reads.
const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

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
