//! Server-sent events, as the three streaming APIs send them: events
//! split at blank lines, `event:` names and `data:` lines joined, bounded
//! in size so a server cannot make the reader buffer without end.

use super::ModelError;
use super::http::MAX_ANSWER_BYTES;

/// Largest event the reader buffers; a longer one is not an event stream.
const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// One event: its name when the server gave one, and its data lines
/// joined by newlines.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` name.
    pub(crate) name: Option<String>,
    /// The `data:` lines, joined by newlines.
    pub(crate) data: String,
}

/// Splits bytes, however they arrive, into events: the same events for
/// any split of the same bytes.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    pending: Vec<u8>,
}

impl SseDecoder {
    /// Adds the next bytes of the stream.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// Marks the end of the stream: a last event without its blank line
    /// still counts.
    pub(crate) fn finish(&mut self) {
        self.pending.extend_from_slice(b"\n\n");
    }

    /// The next complete event with data; comments and keep-alives are
    /// skipped.
    pub(crate) fn next_event(&mut self) -> Option<SseEvent> {
        while let Some(end) = find_event_end(&self.pending) {
            let raw: Vec<u8> = self.pending.drain(..end).collect();
            if let Some(event) = parse_event(&raw) {
                return Some(event);
            }
        }
        None
    }

    /// Fails when the event being received (what is left once the complete
    /// ones are taken) is over [`MAX_EVENT_BYTES`].
    ///
    /// # Errors
    /// [`ModelError`] naming the bound.
    pub(crate) fn check_bound(&self) -> Result<(), ModelError> {
        if self.pending.len() > MAX_EVENT_BYTES {
            return Err(ModelError::new(
                "the answer's stream sent an event over 4 MiB",
            ));
        }
        Ok(())
    }
}

/// Reads the events of one streamed answer.
pub(super) struct SseReader {
    response: reqwest::Response,
    decoder: SseDecoder,
    /// Bytes read so far: a stream that never ends is cut at
    /// [`MAX_ANSWER_BYTES`], as a whole answer is.
    read: usize,
    ended: bool,
}

impl SseReader {
    pub(super) fn new(response: reqwest::Response) -> Self {
        Self {
            response,
            decoder: SseDecoder::default(),
            read: 0,
            ended: false,
        }
    }

    /// The next event with data, or `None` when the stream has ended.
    pub(super) async fn next(&mut self) -> Result<Option<SseEvent>, ModelError> {
        loop {
            if let Some(event) = self.decoder.next_event() {
                return Ok(Some(event));
            }
            self.decoder.check_bound()?;
            if self.ended {
                return Ok(None);
            }
            let chunk = self
                .response
                .chunk()
                .await
                .map_err(|e| ModelError::new(format!("the answer's stream broke off: {e}")))?;
            if let Some(chunk) = chunk {
                self.read += chunk.len();
                if self.read > MAX_ANSWER_BYTES {
                    return Err(ModelError::new(format!(
                        "the answer's stream went past {} MiB; that is no model's answer",
                        MAX_ANSWER_BYTES >> 20
                    )));
                }
                self.decoder.push(&chunk);
            } else {
                self.ended = true;
                self.decoder.finish();
            }
        }
    }
}

/// The end of the first complete event (after its blank line).
fn find_event_end(buffer: &[u8]) -> Option<usize> {
    let lf = buffer.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    let crlf = buffer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4);
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The event in `raw`, or `None` for comments and keep-alives.
fn parse_event(raw: &[u8]) -> Option<SseEvent> {
    let mut event = SseEvent::default();
    let mut has_data = false;
    for line in String::from_utf8_lossy(raw).lines() {
        if let Some(name) = field(line, "event") {
            event.name = Some(name.to_owned());
        } else if let Some(data) = field(line, "data") {
            if has_data {
                event.data.push('\n');
            }
            event.data.push_str(data);
            has_data = true;
        }
    }
    has_data.then_some(event)
}

/// The value of `line` when it is the field `name` (one optional space
/// after the colon, as the format says).
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let value = line.strip_prefix(name)?.strip_prefix(':')?;
    Some(value.strip_prefix(' ').unwrap_or(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_join_data_lines_and_skip_comments() {
        assert_eq!(parse_event(b": keep-alive\n\n"), None);
        assert_eq!(
            parse_event(b"event: ping\ndata: {\"a\":\ndata: 1}\n\n"),
            Some(SseEvent {
                name: Some("ping".into()),
                data: "{\"a\":\n1}".into()
            })
        );
    }

    #[test]
    fn the_first_blank_line_ends_an_event_whatever_its_line_ends() {
        assert_eq!(find_event_end(b"data: 1\r\n\r\ndata: 2\n\n"), Some(11));
        assert_eq!(find_event_end(b"data: 1\n\ndata: 2\r\n\r\n"), Some(9));
        assert_eq!(find_event_end(b"data: 1\n"), None);
    }
}
