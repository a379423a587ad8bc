//! Memory and time of the file paths that handle big data, each next to a
//! baseline measured in the same run:
//!
//! - `read_file` of a 2,000-line page from the middle of a 100 MB file,
//!   against `BufRead::lines` skipping to the same page (which hashes
//!   nothing); peak heap must stay far below the file's size.
//! - saving a 50 MB oversized result as an artifact with its preview,
//!   against `std::fs::write` of the same bytes; peak heap, counting the
//!   result itself, must stay at most 2 times its size.
//!
//! Run with `cargo bench -p iris-benches --bench files`. Peak memory comes from a counting
//! allocator and is printed with the ratios at the end.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    missing_docs,
    reason = "a benchmark harness, not library code"
)]

use std::io::{BufRead, BufReader, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use iris::artifacts::ArtifactStore;
use iris::artifacts::{PreviewPolicy, apply_result_policy};
use iris::fs::{FileService, edit_file, read_file};
use iris::{RunId, State, ToolContext, ToolResult};

#[path = "support/heap.rs"]
#[allow(dead_code, reason = "each benchmark uses part of it")]
mod heap;

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

const FILE_MB: usize = 100;
const RESULT_MB: usize = 50;
const MIDDLE_LINE: usize = 1_000_000;
const EDIT_KB: usize = 1024;

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn big_file(dir: &std::path::Path) -> usize {
    let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join("big.log")).unwrap());
    let mut written = 0;
    let mut line = 0;
    while written < FILE_MB * 1024 * 1024 {
        let text = format!("{line:09} INFO request served in 12 ms by worker 7 of pool a\n");
        out.write_all(text.as_bytes()).unwrap();
        written += text.len();
        line += 1;
    }
    out.flush().unwrap();
    line
}

fn std_page(path: &std::path::Path) -> String {
    let reader = BufReader::new(std::fs::File::open(path).unwrap());
    let mut page = String::new();
    for line in reader.lines().skip(MIDDLE_LINE - 1).take(2000) {
        page.push_str(&line.unwrap());
        page.push('\n');
    }
    page
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let lines = big_file(dir.path());
    assert!(lines > MIDDLE_LINE + 2000);
    let files = State(Arc::new(FileService::open(dir.path()).unwrap()));
    let cx = ToolContext::builder(dir.path(), RunId::new("bench")).build();
    let page = || {
        read_file(
            "big.log".into(),
            Some(MIDDLE_LINE),
            Some(2000),
            None,
            &cx,
            files.clone(),
        )
    };
    let (result, read_peak) = heap::peak_during(page);
    assert!(!result.is_error(), "{}", result.text_content());
    drop(result);
    let (_, std_peak) = heap::peak_during(|| std_page(&dir.path().join("big.log")));

    let mut group = c.benchmark_group("read_file_100mb_middle_page");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("iris_read_file", |b| b.iter(page));
    group.bench_function("std_lines_skip", |b| {
        b.iter(|| std_page(&dir.path().join("big.log")));
    });
    group.finish();

    let body: String = "x".repeat(99) + "\n";
    let body = body.repeat(RESULT_MB * 1024 * 1024 / 100);
    let store = ArtifactStore::new(dir.path().join("artifacts"));
    let policy = PreviewPolicy { max_chars: 40_000 };
    let result = ToolResult::text(body.clone());
    let result_size = body.len();
    let before = heap::live();
    let (previewed, save_peak) = heap::peak_during(|| apply_result_policy(result, policy, &store));
    assert_eq!(previewed.artifacts()[0].size as usize, result_size);
    drop(previewed);
    // The result was already live when saving began: count it in.
    let save_total = save_peak + result_size.min(before);

    let mut group = c.benchmark_group("save_50mb_result");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("iris_apply_result_policy", |b| {
        b.iter_batched(
            || {
                // A fresh store each time, so the save is never skipped as a duplicate.
                let fresh = tempfile::tempdir_in(dir.path()).unwrap();
                (
                    ToolResult::text(body.clone()),
                    ArtifactStore::new(fresh.path()),
                    fresh,
                )
            },
            |(result, store, _fresh)| apply_result_policy(result, policy, &store),
            criterion::BatchSize::PerIteration,
        );
    });
    group.bench_function("std_fs_write", |b| {
        b.iter_batched(
            || tempfile::tempdir_in(dir.path()).unwrap(),
            |fresh| std::fs::write(fresh.path().join("body"), body.as_bytes()).unwrap(),
            criterion::BatchSize::PerIteration,
        );
    });
    group.finish();

    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        for _ in 0..3 {
            f();
        }
        start.elapsed() / 3
    };
    let iris_read = time(&mut || drop(page()));
    let std_read = time(&mut || drop(std_page(&dir.path().join("big.log"))));
    println!("\n== file benchmark summary ==");
    println!(
        "read_file, page of 2,000 lines from line {MIDDLE_LINE} of a {FILE_MB} MB file: {:.1} ms vs std lines().skip() {:.1} ms ({:.2}x)",
        iris_read.as_secs_f64() * 1e3,
        std_read.as_secs_f64() * 1e3,
        iris_read.as_secs_f64() / std_read.as_secs_f64()
    );
    println!(
        "  peak heap: read_file {:.2} MiB, std {:.2} MiB ({:.4} of the file)",
        mib(read_peak),
        mib(std_peak),
        read_peak as f64 / (FILE_MB * 1024 * 1024) as f64
    );
    println!(
        "save {RESULT_MB} MB result: peak heap {:.1} MiB incl. the result = {:.3}x its size (goal <= 2x); extra beyond the result {:.2} MiB",
        mib(save_total),
        save_total as f64 / result_size as f64,
        mib(save_peak)
    );
}

/// An edit of a 1 MB file against the same atomic replacement by hand
/// (read, replace, write a temporary file, fsync, rename): what the
/// per-file lock, the flock, the observation and the re-check before the
/// rename add.
fn edit(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let files = State(Arc::new(FileService::open(dir.path()).unwrap()));
    let edit_body = "a line of some ordinary configuration text, 64 bytes long......\n"
        .repeat(EDIT_KB * 1024 / 64);
    std::fs::write(
        dir.path().join("edit.txt"),
        format!("mode = on\n{edit_body}"),
    )
    .unwrap();
    let edit_cx = ToolContext::builder(dir.path(), RunId::new("edit")).build();
    let read = read_file(
        "edit.txt".into(),
        None,
        Some(1),
        None,
        &edit_cx,
        files.clone(),
    );
    assert!(!read.is_error(), "{}", read.text_content());
    let mut on = true;
    let mut iris_edit = || {
        let (old, new) = if on {
            ("mode = on", "mode = off")
        } else {
            ("mode = off", "mode = on")
        };
        on = !on;
        let result = edit_file(
            "edit.txt".into(),
            old.into(),
            new.into(),
            None,
            &edit_cx,
            files.clone(),
        );
        assert!(!result.is_error(), "{}", result.text_content());
    };
    let by_hand_path = dir.path().join("by_hand.txt");
    std::fs::write(&by_hand_path, format!("mode = on\n{edit_body}")).unwrap();
    let mut hand_on = true;
    let mut by_hand = || {
        let (old, new) = if hand_on {
            ("mode = on", "mode = off")
        } else {
            ("mode = off", "mode = on")
        };
        hand_on = !hand_on;
        let text = std::fs::read_to_string(&by_hand_path).unwrap();
        let temp = dir.path().join(".by_hand.tmp");
        let mut file = std::fs::File::create(&temp).unwrap();
        file.write_all(text.replacen(old, new, 1).as_bytes())
            .unwrap();
        file.sync_all().unwrap();
        std::fs::rename(&temp, &by_hand_path).unwrap();
    };
    let mut group = c.benchmark_group("edit_1mb_file");
    group.sample_size(30);
    group.bench_function("iris_edit_file", |b| b.iter(&mut iris_edit));
    group.bench_function("by_hand_atomic_replace", |b| b.iter(&mut by_hand));
    group.finish();

    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        for _ in 0..20 {
            f();
        }
        start.elapsed() / 20
    };
    let edit_iris = time(&mut iris_edit);
    let edit_hand = time(&mut by_hand);
    println!(
        "edit_file of a {EDIT_KB} KiB file: {:.2} ms vs the same atomic replacement by hand {:.2} ms ({:.2}x)",
        edit_iris.as_secs_f64() * 1e3,
        edit_hand.as_secs_f64() * 1e3,
        edit_iris.as_secs_f64() / edit_hand.as_secs_f64()
    );
}

criterion_group!(benches, bench, edit);
criterion_main!(benches);
