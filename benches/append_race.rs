//! How many lines another program appends are lost while `edit_file`
//! rewrites the same file, for two kinds of writers that take no lock:
//!
//! - `>>` appends (open with `O_APPEND`, write a line, close), as a shell
//!   loop in a child process;
//! - a descriptor kept open for the whole run, appending through it.
//!
//! Atomic replacement cannot see a write to the old file made between the
//! last look before the rename and the rename itself, nor a write through
//! a descriptor of the old file after the rename; everything else is caught
//! (the edit is refused as stale instead). Run with
//! `cargo bench -p iris-benches --bench append_race`; it prints appended, lost and refused
//! edits for each kind.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    missing_docs,
    reason = "a measurement harness, not library code"
)]

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use iris::fs::{FileService, register_file_tools};
use iris::{Rule, RulePolicy, RunId, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};
use serde_json::json;

const APPENDS: usize = 400;

struct Tally {
    appended: usize,
    lost: usize,
    edits: usize,
    refused: usize,
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for kind in ["shell >> appends", "kept-open descriptor"] {
        let tally = runtime.block_on(race(kind));
        println!(
            "{kind}: {} lines appended, {} lost ({:.1}%); {} edits made, {} refused as stale",
            tally.appended,
            tally.lost,
            100.0 * tally.lost as f64 / tally.appended as f64,
            tally.edits,
            tally.refused
        );
    }
}

async fn race(kind: &str) -> Tally {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    std::fs::write(&log, "counter 0\n").unwrap();
    let files = Arc::new(FileService::open(dir.path()).unwrap());
    let mut registry = ToolRegistry::new();
    register_file_tools(&mut registry).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()
        .unwrap();

    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (log, done) = (log.clone(), Arc::clone(&done));
        let shell = kind.starts_with("shell");
        std::thread::spawn(move || {
            if shell {
                let script = format!(
                    "i=0; while [ $i -lt {APPENDS} ]; do echo \"append $i\" >> '{}'; i=$((i+1)); sleep 0.002; done",
                    log.display()
                );
                std::process::Command::new("sh")
                    .args(["-c", &script])
                    .status()
                    .unwrap();
            } else {
                let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
                for i in 0..APPENDS {
                    writeln!(file, "append {i}").unwrap();
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
            done.store(true, Ordering::SeqCst);
        })
    };

    let (mut edits, mut refused, mut n) = (0, 0, 0_usize);
    while !done.load(Ordering::SeqCst) {
        let cx = ToolContext::builder(dir.path(), RunId::new(format!("run-{n}")))
            .shared_state(Arc::clone(&files))
            .build();
        let text = std::fs::read_to_string(&log).unwrap();
        let counter = text.lines().next().unwrap().to_owned();
        executor
            .execute_one(
                ToolUseBlock::new("read", "read_file", json!({"path": "log.txt"})),
                &cx,
            )
            .await;
        let edit = executor
            .execute_one(
                ToolUseBlock::new(
                    "edit",
                    "edit_file",
                    json!({"path": "log.txt", "old_string": counter, "new_string": format!("counter {n}")}),
                ),
                &cx,
            )
            .await;
        match edit.result() {
            Some(result) if result.is_error() => refused += 1,
            Some(_) => edits += 1,
            None => {}
        }
        n += 1;
    }
    writer.join().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let kept = (0..APPENDS)
        .filter(|i| text.lines().any(|l| l == format!("append {i}")))
        .count();
    Tally {
        appended: APPENDS,
        lost: APPENDS - kept,
        edits,
        refused,
    }
}
