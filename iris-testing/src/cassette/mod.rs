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

//!
//! | file | what it holds |
//! |---|---|
//! | `format.rs` | [`Cassette`] and its parts, loading and the format version |
//! | `server.rs` | [`CassetteServer`]: playback, recording, saving |
//! | `events.rs` | streamed answers kept as their events |
//! | `diff.rs` | [`first_difference`], what a mismatched request is told |
//! | `keys.rs` | keys refused on save |

mod diff;
mod events;
mod format;
mod keys;
mod server;

pub use diff::first_difference;
pub use format::*;
pub use server::CassetteServer;

#[cfg(test)]
mod tests {
    use super::events::{parse_events, render_events};
    use super::keys::{find_key, key_in};
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
