//! The server's side of a stream of JSON-RPC lines (standard input and
//! output, a pipe), answering as JSON-RPC says where the MCP library does
//! not: a request it cannot read is answered with an error that echoes the
//! request's id (invalid parameters), so the client can
//! match it to its request; a notification is never answered; a line that
//! is not JSON is skipped.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::Mutex;

/// Longest line read; a longer one is skipped whole.
const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// JSON-RPC lines over a reader and a writer.
pub(crate) struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line being read: kept across cancelled reads, so a read dropped
    /// mid-line resumes where it was.
    line: Vec<u8>,
    /// Whether the rest of an oversized line is being skipped.
    skipping: bool,
    write: Arc<Mutex<Option<W>>>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(crate) fn new(read: R, write: W) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            skipping: false,
            write: Arc::new(Mutex::new(Some(write))),
        }
    }

    /// The next whole line, or `None` at the end of the stream.
    async fn next_line(&mut self) -> Option<Vec<u8>> {
        loop {
            let before = self.line.len();
            let read = self.read.read_until(b'\n', &mut self.line).await.ok()?;
            let ended = self.line.last() == Some(&b'\n');
            if read == 0 && !ended {
                // The end of the stream: an unterminated last line is not
                // a message.
                return None;
            }
            if self.line.len() > MAX_LINE_BYTES || (self.skipping && !ended) {
                tracing::warn!(
                    bytes = self.line.len() - before,
                    "skipping an oversized MCP message"
                );
                self.skipping = !ended;
                self.line.clear();
                continue;
            }
            if !ended {
                continue;
            }
            if std::mem::take(&mut self.skipping) {
                self.line.clear();
                continue;
            }
            return Some(std::mem::take(&mut self.line));
        }
    }

    async fn write_line(write: &Mutex<Option<W>>, text: String) -> std::io::Result<()> {
        let mut guard = write.lock().await;
        let Some(writer) = guard.as_mut() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "the transport is closed",
            ));
        };
        writer.write_all(text.as_bytes()).await?;
        writer.write_all(b"\n").await?;
        writer.flush().await
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        async move {
            let text = serde_json::to_string(&item).map_err(std::io::Error::other)?;
            Self::write_line(&write, text).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let line = self.next_line().await?;
            let line = line
                .strip_prefix(b"\xEF\xBB\xBF".as_slice())
                .unwrap_or(&line);
            // The common case, a message the library reads, is parsed once;
            // only a failure is read again as plain JSON, for its id.
            let error = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
                Ok(message) if !is_unknown_call(&message) => return Some(message),
                Ok(message) => {
                    // A `tools/call` the library read as a request of an
                    // unknown kind: its params are not a call's.
                    if let Ok(value) = serde_json::from_slice::<Value>(line)
                        && let (Some(id), Some(why)) =
                            (value.get("id"), super::call_params::problem(&value))
                    {
                        let answer = super::call_params::invalid(id, why);
                        let _ = Self::write_line(&self.write, answer.to_string()).await;
                        continue;
                    }
                    return Some(message);
                }
                Err(error) => error,
            };
            // Not JSON: there is no id to answer, and answering junk can
            // start an error storm with a peer that echoes it.
            let Ok(value) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if let Some(answer) = unreadable(&value, &error) {
                let _ = Self::write_line(&self.write, answer.to_string()).await;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.take();
        Ok(())
    }
}

/// Whether `message` is a `tools/call` the library could read only as a
/// request of an unknown kind.
fn is_unknown_call(message: &RxJsonRpcMessage<RoleServer>) -> bool {
    matches!(message, rmcp::model::JsonRpcMessage::Request(request)
        if matches!(&request.request, rmcp::model::ClientRequest::CustomRequest(custom) if custom.method == "tools/call"))
}

/// The answer to a message the library cannot read: `None` for one with
/// no id (a notification, or a response: neither is answered).
fn unreadable(value: &Value, error: &serde_json::Error) -> Option<Value> {
    let object = value.as_object()?;
    let id = object.get("id")?;
    if !(id.is_string() || id.is_i64() || id.is_u64()) {
        return Some(json!({"jsonrpc": "2.0", "id": null, "error": {
            "code": -32600, "message": "Invalid request: the id must be a string or an integer"}}));
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return Some(json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32600, "message": "Invalid request: no method"}}));
    };
    // The library reads any method (one it does not know reaches the
    // server, which answers "method not found"), so what it could not read
    // is the parameters.
    let shown = iris_core::text::clip(method, 100);
    Some(json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32602, "message": format!("Invalid params for `{shown}`: {error}")}}))
}
#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::unreadable;

    fn answer(message: &Value) -> Option<Value> {
        let error =
            serde_json::from_value::<super::RxJsonRpcMessage<super::RoleServer>>(message.clone())
                .err()?;
        unreadable(message, &error)
    }

    /// Findings of the fuzzer: a request the library could not read was
    /// answered "Invalid request" with no id, and a malformed notification
    /// was answered at all.
    #[test]
    fn an_unreadable_request_is_answered_with_its_id_and_a_notification_never() {
        let unknown = json!({"jsonrpc": "2.0", "id": 9, "method": "no/such", "params": [1, 2]});
        let unknown = answer(&unknown).unwrap();
        assert_eq!(unknown["id"], 9);
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
        let bad = json!({"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": "text"});
        let bad = answer(&bad).unwrap();
        assert_eq!(bad["id"], "c");
        assert_eq!(bad["error"]["code"], -32602, "{bad}");
        let notification = json!({"jsonrpc": "2.0", "method": "notifications/x", "params": 5});
        assert!(answer(&notification).is_none());
    }
}
