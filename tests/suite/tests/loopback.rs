//! A minimal HTTP/1.1 server on loopback for the tests of HTTP clients:
//! one scripted reply per connection, every request kept.
#![allow(
    clippy::unwrap_used,
    dead_code,
    reason = "a test server fails loudly, and each binary uses part of it"
)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the server answers to one request.
pub(crate) enum Reply {
    /// A status and a JSON body.
    Status(u16, String),
    /// A status, extra header lines and a JSON body.
    WithHeaders(u16, String, String),
    /// 200 `{}` after a delay.
    Sleep(Duration),
    /// 200 with a body of server-sent events.
    Events(String),
    /// A status, a content type and `chunk` repeated without end, with no
    /// length, for as long as the client reads.
    Endless(u16, &'static str, Vec<u8>),
}

/// The replies to give, in order, and the requests received.
#[derive(Default)]
pub(crate) struct Script {
    pub(crate) replies: Mutex<VecDeque<Reply>>,
    pub(crate) requests: Mutex<Vec<(String, Value)>>,
}

/// A minimal HTTP/1.1 server: one scripted reply per connection.
pub(crate) async fn serve(script: Arc<Script>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let script = Arc::clone(&script);
            tokio::spawn(async move {
                let mut raw = Vec::new();
                let mut buf = [0_u8; 4096];
                let (head, body) = loop {
                    let n = socket.read(&mut buf).await.unwrap();
                    raw.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&raw).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let head = text[..end].to_owned();
                        let length: usize = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap())
                            })
                            .unwrap_or(0);
                        while raw.len() < end + 4 + length {
                            let n = socket.read(&mut buf).await.unwrap();
                            raw.extend_from_slice(&buf[..n]);
                        }
                        break (head, String::from_utf8_lossy(&raw[end + 4..]).to_string());
                    }
                };
                script
                    .requests
                    .lock()
                    .unwrap()
                    .push((head, serde_json::from_str(&body).unwrap()));
                let reply = script.replies.lock().unwrap().pop_front();
                if let Some(Reply::Endless(status, content_type, chunk)) = reply {
                    let head = format!(
                        "HTTP/1.1 {status} Scripted\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n"
                    );
                    if socket.write_all(head.as_bytes()).await.is_ok() {
                        while socket.write_all(&chunk).await.is_ok() {}
                    }
                    return;
                }
                let json = "application/json";
                let (status, content_type, headers, body) = match reply {
                    Some(Reply::Status(status, body)) => (status, json, String::new(), body),
                    Some(Reply::WithHeaders(status, headers, body)) => {
                        (status, json, headers, body)
                    }
                    Some(Reply::Sleep(delay)) => {
                        tokio::time::sleep(delay).await;
                        (200, json, String::new(), "{}".to_owned())
                    }
                    Some(Reply::Events(body)) => (200, "text/event-stream", String::new(), body),
                    None => (500, json, String::new(), "no reply scripted".to_owned()),
                    Some(Reply::Endless(..)) => unreachable!("answered above"),
                };
                let response = format!(
                    "HTTP/1.1 {status} Scripted\r\nContent-Type: {content_type}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    format!("http://{address}/v1/chat/completions")
}
