//! No update is lost: concurrent edits of one file from two runs, temporary
//! files that cannot be planted or read and that keep a private file
//! private, writes through links, and names that hide what they are.
#![cfg(unix)]

use crate::files;

use std::os::unix::fs::{PermissionsExt as _, symlink};

use files::Workspace;
use iris::ToolErrorKind;
use serde_json::json;

/// Two runs read `two.txt`, then edit different lines at the same moment,
/// 200 times. Before the fix one change was often gone while both calls
/// reported success. Now each round ends with every reported success in
/// the file, and at most one of the two told to read again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_edits_of_one_file_lose_nothing() {
    let ws = Workspace::new();
    let mut lost = 0;
    let mut applied = 0;
    for round in 0..200 {
        ws.write("two.txt", "alpha\nbeta\n");
        let (run_a, run_b) = (format!("a-{round}"), format!("b-{round}"));
        ws.call_in(&run_a, "read_file", json!({"path": "two.txt"}))
            .await;
        ws.call_in(&run_b, "read_file", json!({"path": "two.txt"}))
            .await;
        let (a, b) = tokio::join!(
            ws.call_in(
                &run_a,
                "edit_file",
                json!({"path": "two.txt", "old_string": "alpha", "new_string": "ALPHA"}),
            ),
            ws.call_in(
                &run_b,
                "edit_file",
                json!({"path": "two.txt", "old_string": "beta", "new_string": "BETA"}),
            ),
        );
        let text = ws.read("two.txt");
        for (result, change) in [(&a, "ALPHA"), (&b, "BETA")] {
            if result.is_error() {
                assert_eq!(
                    result.error_kind(),
                    Some(ToolErrorKind::StaleRead),
                    "{}",
                    result.text_content()
                );
            } else {
                applied += 1;
                if !text.contains(change) {
                    lost += 1;
                }
            }
        }
        assert!(!(a.is_error() && b.is_error()), "one edit always lands");
    }
    assert_eq!(lost, 0, "changes reported as made but missing");
    assert!(applied >= 200);
}

#[tokio::test]
async fn a_planted_temporary_name_blocks_nothing_and_temporaries_are_not_read() {
    let ws = Workspace::new();
    ws.write("a.txt", "old\n");
    // The names the old scheme would have used next.
    for n in 0..64 {
        ws.write(
            &format!(".a.txt.{}-{n}.iris-tmp", std::process::id()),
            "planted",
        );
    }
    ws.call("read_file", json!({"path": "a.txt"})).await;
    let written = ws
        .call("write_file", json!({"path": "a.txt", "content": "new\n"}))
        .await;
    assert!(!written.is_error(), "{}", written.text_content());
    assert_eq!(ws.read("a.txt"), "new\n");

    let name = format!(".a.txt.{}-0.iris-tmp", std::process::id());
    let read = ws.call("read_file", json!({"path": name})).await;
    assert_eq!(read.error_kind(), Some(ToolErrorKind::PathRefused));
    let write = ws
        .call("write_file", json!({"path": "b.iris-tmp", "content": "x"}))
        .await;
    assert_eq!(write.error_kind(), Some(ToolErrorKind::PathRefused));
}

#[tokio::test]
async fn a_private_file_stays_private_and_no_temporary_is_left() {
    let ws = Workspace::new();
    ws.write("private.txt", "secret: 1\n");
    std::fs::set_permissions(
        ws.path("private.txt"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    ws.call("read_file", json!({"path": "private.txt"})).await;
    let edited = ws
        .call(
            "edit_file",
            json!({"path": "private.txt", "old_string": "1", "new_string": "2"}),
        )
        .await;
    assert!(!edited.is_error(), "{}", edited.text_content());
    let mode = std::fs::metadata(ws.path("private.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let names: Vec<String> = std::fs::read_dir(&ws.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["private.txt"]);
}

#[tokio::test]
async fn a_write_through_a_link_is_refused_and_changes_nothing() {
    let ws = Workspace::new();
    ws.write("target.txt", "kept\n");
    symlink("target.txt", ws.path("alias")).unwrap();
    ws.call("read_file", json!({"path": "alias"})).await;
    let result = ws
        .call(
            "write_file",
            json!({"path": "alias", "content": "changed\n"}),
        )
        .await;
    assert_eq!(result.error_kind(), Some(ToolErrorKind::PathRefused));
    assert!(result.text_content().contains("symlink"));
    assert_eq!(ws.read("target.txt"), "kept\n");
    assert!(
        std::fs::symlink_metadata(ws.path("alias"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[tokio::test]
async fn names_that_hide_what_they_are_are_refused() {
    let ws = Workspace::new();
    for name in ["invoice\u{202E}fdp.exe", "line\nbreak.txt", "bell\u{7}.txt"] {
        let result = ws
            .call("write_file", json!({"path": name, "content": "x"}))
            .await;
        assert_eq!(
            result.error_kind(),
            Some(ToolErrorKind::PathRefused),
            "{name:?}"
        );
    }
    assert_eq!(std::fs::read_dir(&ws.root).unwrap().count(), 0);
}
