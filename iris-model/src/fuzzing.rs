//! Harnesses for fuzzing this crate's decoders (see `iris_core::fuzzing`).
//! Not a public API.
#![allow(
    clippy::panic,
    reason = "a harness reports a broken property by panicking, as the fuzzer expects"
)]

use crate::sse::SseDecoder;

/// Decodes the server-sent events in `data[4..]` whole and split where the
/// first four bytes say, and checks that every split decodes to the same
/// events as the whole.
///
/// # Panics
/// When two splits of the same bytes decode differently: a finding.
pub fn sse_stream(data: &[u8]) {
    let (cuts, stream) = data.split_at(data.len().min(4));
    let whole = decode(stream, &[stream.len().max(1)]);
    let sizes: Vec<usize> = cuts.iter().map(|b| usize::from(*b % 17) + 1).collect();
    let split = decode(stream, if sizes.is_empty() { &[1] } else { &sizes });
    assert_eq!(whole, split, "a split of the stream decoded differently");
    let bytewise = decode(stream, &[1]);
    assert_eq!(
        whole, bytewise,
        "a stream fed byte by byte decoded differently"
    );
}

/// The events of `stream` fed in chunks of `sizes` (cycled).
fn decode(stream: &[u8], sizes: &[usize]) -> Vec<(Option<String>, String)> {
    let mut decoder = SseDecoder::default();
    let mut events = Vec::new();
    let mut rest = stream;
    for size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at((*size).min(rest.len()));
        decoder.push(chunk);
        rest = tail;
        while let Some(event) = decoder.next_event() {
            events.push((event.name, event.data));
        }
    }
    decoder.finish();
    while let Some(event) = decoder.next_event() {
        events.push((event.name, event.data));
    }
    events
}
