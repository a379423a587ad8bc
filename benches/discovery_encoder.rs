//! What the sentence encoder costs tool search, beside the word ranker
//! alone in the same run: query latency (p50 and p99 over the requests of
//! the shipped MetaTool sample) at 1,000 and 10,000 tools of the discovery
//! example's catalog, the build of the index (every tool encoded once),
//! and memory per tool.
//!
//! ```sh
//! bash tests/sentence-encoder/install.sh     # the pinned model, once
//! cargo bench -p iris-benches --bench discovery_encoder
//! ```
//!
//! `IRIS_ENCODER_DIR` names another model folder.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    missing_docs,
    reason = "a benchmark harness, not library code"
)]

#[path = "../examples/discovery/catalog.rs"]
#[allow(dead_code, reason = "shared with the examples")]
mod catalog;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use iris::ToolRegistry;
use iris::discovery::encoder::SentenceEncoder;
use iris::discovery::{LocalRanker, SearchScope};

const SIZES: [usize; 2] = [1_000, 10_000];

fn model_folder() -> PathBuf {
    std::env::var_os("IRIS_ENCODER_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/sentence-encoder/model"),
        PathBuf::from,
    )
}

fn requests() -> Vec<String> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/metatool/queries.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let value: iris::serde_json::Value = iris::serde_json::from_str(line).unwrap();
            value["query"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// The 50th and 99th percentile of `times` (microseconds).
fn percentiles(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    let at = |p: usize| times[(times.len() * p / 100).min(times.len() - 1)];
    (at(50), at(99))
}

/// Each request ranked once (top 5), timed alone, after one warm-up pass.
fn latencies(scope: &SearchScope<'_>, requests: &[String]) -> (f64, f64) {
    let ranker = LocalRanker::default();
    for request in requests.iter().take(20) {
        std::hint::black_box(ranker.rank(request, scope, 5));
    }
    let times = requests
        .iter()
        .map(|request| {
            let started = Instant::now();
            std::hint::black_box(ranker.rank(request, scope, 5));
            started.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    percentiles(times)
}

fn main() {
    let folder = model_folder();
    let started = Instant::now();
    let encoder = Arc::new(SentenceEncoder::from_folder(&folder).unwrap_or_else(|e| {
        panic!("{e}; install the pinned model first: bash tests/sentence-encoder/install.sh")
    }));
    println!(
        "encoder {} loaded in {:.2} s ({} dimensions)",
        folder.display(),
        started.elapsed().as_secs_f64(),
        encoder.dimensions()
    );
    let requests = requests();
    println!(
        "{} requests (tests/data/metatool), each ranked alone, top 5",
        requests.len()
    );
    println!(
        "| tools | words: build | words: p50, p99 | encoder: build | encoder: p50, p99 | p99 ratio | index per tool | vectors per tool |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for size in SIZES {
        let mut registry = ToolRegistry::new();
        for tool in catalog::tools(size) {
            registry.register(tool).unwrap();
        }
        let started = Instant::now();
        let words = SearchScope::all(&registry);
        let words_build = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let with_meaning = SearchScope::all(&registry)
            .with_encoder(encoder.clone())
            .unwrap();
        let encoder_build = started.elapsed().as_secs_f64();
        let (words_p50, words_p99) = latencies(&words, &requests);
        let (encoder_p50, encoder_p99) = latencies(&with_meaning, &requests);
        let index = iris::discovery::SearchIndex::of_deferred(&registry);
        let vectors = with_meaning.index().vectors().map_or(0, |v| v.heap_bytes());
        println!(
            "| {size} | {:.1} ms | {:.0} µs, {:.0} µs | {:.1} s ({:.1} ms per tool) | {:.1} ms, {:.1} ms | {:.0}× | {} B | {} B |",
            words_build * 1e3,
            words_p50,
            words_p99,
            encoder_build,
            encoder_build * 1e3 / size as f64,
            encoder_p50 / 1e3,
            encoder_p99 / 1e3,
            encoder_p99 / words_p99,
            index.heap_bytes() / size,
            vectors / size,
        );
    }
}
