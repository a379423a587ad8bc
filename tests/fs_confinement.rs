//! The path-escape corpus: every attempt to read or write outside the
//! workspace is refused with a clear error, and nothing outside changes.
#![cfg(unix)]

use crate::files;

use std::os::unix::fs::symlink;
use std::process::Command;

use files::{SECRET, Workspace, snapshot};
use iris::ToolErrorKind;
use serde_json::json;

fn hostile_workspace() -> Workspace {
    let ws = Workspace::new();
    ws.write("a.txt", "hello\n")
        .write("dir/inner.txt", "inner\n");
    let root = &ws.root;
    let secret = ws.outside.join("secret.txt");
    symlink(&secret, root.join("link_out")).unwrap();
    symlink("../outside/secret.txt", root.join("link_out_rel")).unwrap();
    symlink("chain2", root.join("chain1")).unwrap();
    symlink(&secret, root.join("chain2")).unwrap();
    symlink(&ws.outside, root.join("dirlink")).unwrap();
    symlink("../../outside", root.join("dir/up_link")).unwrap();
    symlink("/dev/zero", root.join("zero")).unwrap();
    symlink("loop2", root.join("loop1")).unwrap();
    symlink("loop1", root.join("loop2")).unwrap();
    symlink("a.txt", root.join("inside_link")).unwrap();
    let status = Command::new("mkfifo")
        .arg(root.join("fifo"))
        .status()
        .unwrap();
    assert!(status.success());
    ws
}

#[tokio::test]
async fn escape_corpus_is_refused_and_nothing_outside_changes() {
    let ws = hostile_workspace();
    let outside = ws.outside.display().to_string();
    let before = snapshot(&ws.outside);
    let long_name = "n".repeat(300);
    let long_path = "d/".repeat(2100);
    let attempts = vec![
        ("read_file", json!({"path": "../outside/secret.txt"})),
        ("read_file", json!({"path": "./../outside/secret.txt"})),
        ("read_file", json!({"path": "dir/../../outside/secret.txt"})),
        ("read_file", json!({"path": "dir/../.."})),
        (
            "read_file",
            json!({"path": format!("{outside}/secret.txt")}),
        ),
        ("read_file", json!({"path": "/etc/passwd"})),
        ("read_file", json!({"path": "/proc/self/root/etc/passwd"})),
        ("read_file", json!({"path": "link_out"})),
        ("read_file", json!({"path": "link_out_rel"})),
        ("read_file", json!({"path": "chain1"})),
        ("read_file", json!({"path": "dirlink/secret.txt"})),
        ("read_file", json!({"path": "dir/up_link/secret.txt"})),
        ("read_file", json!({"path": "dirlink/../a.txt"})),
        (
            "read_file",
            json!({"path": "a.txt\u{0}../../outside/secret.txt"}),
        ),
        ("read_file", json!({"path": long_name})),
        ("read_file", json!({"path": long_path})),
        ("read_file", json!({"path": "fifo"})),
        ("read_file", json!({"path": "zero"})),
        ("read_file", json!({"path": "dir"})),
        ("read_file", json!({"path": "."})),
        ("read_file", json!({"path": ""})),
        ("read_file", json!({"path": "loop1"})),
        (
            "write_file",
            json!({"path": "../outside/new.txt", "content": "x"}),
        ),
        (
            "write_file",
            json!({"path": "dirlink/new.txt", "content": "x"}),
        ),
        (
            "write_file",
            json!({"path": "dirlink/sub/new.txt", "content": "x"}),
        ),
        ("write_file", json!({"path": "link_out", "content": "x"})),
        (
            "write_file",
            json!({"path": format!("{outside}/secret.txt"), "content": "x"}),
        ),
        ("write_file", json!({"path": "fifo", "content": "x"})),
        ("write_file", json!({"path": "dir", "content": "x"})),
        (
            "edit_file",
            json!({"path": "link_out", "old_string": "TOP", "new_string": "BOTTOM"}),
        ),
        (
            "edit_file",
            json!({"path": "chain1", "old_string": "TOP", "new_string": "BOTTOM"}),
        ),
        (
            "edit_file",
            json!({"path": "../outside/secret.txt", "old_string": "TOP", "new_string": "X"}),
        ),
    ];
    assert!(attempts.len() >= 25);
    for (tool, input) in attempts {
        let result = ws.call(tool, input.clone()).await;
        let text = result.text_content();
        let kind = result.error_kind();
        assert!(
            kind == Some(ToolErrorKind::PathRefused),
            "{tool} {input} was not refused: {kind:?} {text}"
        );
        assert!(!text.contains(SECRET), "{tool} {input} leaked: {text}");
        assert!(text.len() < 600, "{tool} {input}: message too long: {text}");
        assert!(text.contains("refused"), "{tool} {input}: {text}");
    }
    assert_eq!(snapshot(&ws.outside), before, "something outside changed");
    assert!(!ws.outside.join("new.txt").exists());
}

#[tokio::test]
async fn links_that_stay_inside_work() {
    let ws = hostile_workspace();
    let read = ws.call("read_file", json!({"path": "inside_link"})).await;
    assert!(!read.is_error(), "{}", read.text_content());
    assert!(read.text_content().contains("hello"));
    let read = ws.call("read_file", json!({"path": "dir/../a.txt"})).await;
    assert!(!read.is_error(), "{}", read.text_content());
    let absolute = ws.path("dir/inner.txt").display().to_string();
    let read = ws.call("read_file", json!({"path": absolute})).await;
    assert!(
        read.text_content().contains("inner"),
        "{}",
        read.text_content()
    );
}

/// A folder swapped for a symlink to the outside while reads go on: the
/// OS resolves beneath the root at open time, so no read ever gets out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapping_a_folder_for_a_symlink_never_leads_outside() {
    let ws = Workspace::new();
    ws.write("swap/secret.txt", "inside\n");
    let swap = ws.path("swap");
    let parked = ws.path("parked");
    let outside = ws.outside.clone();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flips = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let flipper = {
        let (stop, flips) = (stop.clone(), flips.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::fs::rename(&swap, &parked).unwrap();
                symlink(&outside, &swap).unwrap();
                std::fs::remove_file(&swap).unwrap();
                std::fs::rename(&parked, &swap).unwrap();
                flips.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        })
    };
    // Reads start once the swapping has.
    while flips.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        std::thread::yield_now();
    }
    for _ in 0..400 {
        let result = ws
            .call("read_file", json!({"path": "swap/secret.txt"}))
            .await;
        let text = result.text_content();
        assert!(!text.contains(SECRET), "escaped through the swapped folder");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    flipper.join().unwrap();
    assert!(flips.load(std::sync::atomic::Ordering::Relaxed) > 1);
    // With the folder back in place, the same path reads normally.
    let settled = ws
        .call("read_file", json!({"path": "swap/secret.txt"}))
        .await;
    assert!(
        settled.text_content().contains("inside"),
        "{}",
        settled.text_content()
    );
}
