//! The tool-search evaluation command runs on the sample shipped in
//! `tests/data/metatool`. `cargo test` builds the package's examples next
//! to its test binaries; this test runs it.
#![allow(clippy::unwrap_used, reason = "a test fails loudly")]

use std::path::PathBuf;
use std::process::Command;

#[path = "../../../tests/support/installed.rs"]
mod installed;

/// Its figures go to the benchmark notes, so only the report's shape is
/// checked here.
#[test]
fn discovery_eval_reports_both_rankers() {
    let deps = std::env::current_exe().unwrap();
    let examples: PathBuf = deps.parent().unwrap().parent().unwrap().join("examples");
    let output = Command::new(examples.join("discovery_eval"))
        .args(["--limit", "60"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let out = String::from_utf8(output.stdout).unwrap();
    for line in [
        "| tuning | plain BM25 |",
        "| tuning | iris local |",
        "| validation | plain BM25 |",
        "| validation | iris local |",
        "none-rate",
        "two-tool both in top 5",
        "available after one search",
        "no-fit requests loading nothing",
    ] {
        assert!(out.contains(line), "missing `{line}` in\n{out}");
    }
}

/// `--dump` writes one line per request with its whole ranking, best
/// first, which the meaning-layer measurement reads.
#[test]
fn discovery_eval_dumps_every_ranking() {
    let deps = std::env::current_exe().unwrap();
    let examples: PathBuf = deps.parent().unwrap().parent().unwrap().join("examples");
    let path = std::env::temp_dir().join(format!("iris-rankings-{}.jsonl", std::process::id()));
    let output = Command::new(examples.join("discovery_eval"))
        .args(["--limit", "40", "--dump"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let lines: Vec<iris::serde_json::Value> = text
        .lines()
        .map(|l| iris::serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 40);
    for line in &lines {
        assert!(!line["golds"].as_array().unwrap().is_empty(), "{line}");
        let scores: Vec<f64> = line["ranked"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c[1].as_f64().unwrap())
            .collect();
        assert!(
            scores.windows(2).all(|w| w[0] >= w[1]),
            "not best first: {line}"
        );
        if let Some(selected) = line["selected"].as_str() {
            assert_eq!(line["ranked"][0][0], selected, "{line}");
        }
    }
    assert!(
        lines
            .iter()
            .any(|l| l["ranked"].as_array().unwrap().len() > 5)
    );
}

/// With `--encoder` the same requests are evaluated a second time, ranked
/// with the sentence encoder (all-MiniLM-L6-v2, pinned, from `PyPI`), and
/// both configurations are reported, each with its own disclosure policy.
#[test]
fn discovery_eval_reports_the_encoder_beside_the_words() {
    let model = installed::SENTENCE_ENCODER.folder().join("model");
    let deps = std::env::current_exe().unwrap();
    let examples: PathBuf = deps.parent().unwrap().parent().unwrap().join("examples");
    let output = Command::new(examples.join("discovery_eval"))
        .args(["--limit", "40", "--encoder"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let out = String::from_utf8(output.stdout).unwrap();
    for line in [
        "| validation | iris local |",
        "with the encoder",
        "| tuning | iris + encoder |",
        "| validation | iris + encoder |",
        "and its similarity is 0.375 or more",
    ] {
        assert!(out.contains(line), "missing `{line}` in\n{out}");
    }
    let encoded = out.split("with the encoder").nth(1).unwrap();
    let top1 = |text: &str, ranker: &str| -> f64 {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("| tuning | {ranker} |")))
            .unwrap();
        row.split('|').nth(3).unwrap().trim().parse().unwrap()
    };
    assert!(
        top1(encoded, "iris + encoder") >= top1(&out, "iris local"),
        "the encoder ranks no worse on the sample:\n{out}"
    );
}
