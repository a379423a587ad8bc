//! Server-sent events as a cassette keeps them, and back to text.

use super::format::StreamEvent;

use serde_json::Value;

/// `events` as a server-sent event stream.
pub(super) fn render_events(events: &[StreamEvent]) -> String {
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
pub(super) fn parse_events(text: &str) -> Vec<StreamEvent> {
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
