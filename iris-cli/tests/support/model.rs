//! A model endpoint on loopback that answers OpenAI Chat Completions
//! requests from a script, one answer per request, and keeps what it was
//! sent: `iris run` talks to it as to the real API.

use std::io::{BufReader, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// The endpoint: its base URL and the request bodies it received.
pub(crate) struct ModelServer {
    pub(crate) base_url: String,
    pub(crate) requests: Arc<Mutex<Vec<Value>>>,
}

/// An answer that calls `tool` with `arguments`.
pub(crate) fn calls(tool: &str, arguments: &Value) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "scripted",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": tool, "arguments": arguments.to_string()}}]
        }}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
    })
}

/// An answer of plain text that ends the run.
pub(crate) fn says(text: &str) -> Value {
    json!({
        "id": "chatcmpl-2", "object": "chat.completion", "created": 0, "model": "scripted",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 7, "total_tokens": 37}
    })
}

/// A text answer streamed as server-sent events, one chunk per piece.
pub(crate) fn streams(pieces: &[&str]) -> Value {
    let mut events: Vec<Value> = pieces
        .iter()
        .map(|piece| {
            json!({
                "id": "chatcmpl-3", "object": "chat.completion.chunk", "created": 0, "model": "scripted",
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]
            })
        })
        .collect();
    events.push(json!({
        "id": "chatcmpl-3", "object": "chat.completion.chunk", "created": 0, "model": "scripted",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    }));
    events.push(json!({
        "id": "chatcmpl-3", "object": "chat.completion.chunk", "created": 0, "model": "scripted",
        "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}
    }));
    json!({"stream": events})
}

impl ModelServer {
    /// Serves `answers` in order, one per request, on a port of its own.
    pub(crate) fn start(answers: Vec<Value>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&requests);
        std::thread::spawn(move || {
            let mut answers = answers.into_iter();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let Some((_, body)) = super::http::read_request(&mut reader) else {
                    continue;
                };
                kept.lock()
                    .unwrap()
                    .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                let (status, kind, answer) = match answers.next() {
                    Some(Value::Object(mut streamed)) if streamed.contains_key("stream") => {
                        let events = streamed.remove("stream").unwrap_or_default();
                        let mut body = String::new();
                        for event in events.as_array().into_iter().flatten() {
                            body.push_str("data: ");
                            body.push_str(&event.to_string());
                            body.push_str("\n\n");
                        }
                        body.push_str("data: [DONE]\n\n");
                        ("200 OK", "text/event-stream", body)
                    }
                    Some(answer) => ("200 OK", "application/json", answer.to_string()),
                    None => (
                        "500 Internal Server Error",
                        "application/json",
                        json!({"error": {"message": "the script ran out"}}).to_string(),
                    ),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            }
        });
        Self { base_url, requests }
    }
}
