//! What the file tools say about hostile paths: no absolute workspace path
//! in a message, one file one observation however it is named.
#![cfg(unix)]

use crate::files;

use std::os::unix::fs::symlink;

use files::Workspace;
use iris::ToolErrorKind;
use serde_json::json;

#[tokio::test]
async fn refusals_never_print_where_the_workspace_is() {
    let ws = Workspace::new();
    let result = ws.call("read_file", json!({"path": "/etc/hostname"})).await;
    assert_eq!(result.error_kind(), Some(ToolErrorKind::PathRefused));
    let root = ws.root.display().to_string();
    assert!(
        !result.text_content().contains(&root),
        "{}",
        result.text_content()
    );
}

/// `d/in/../x.txt` with `d/in` a link to `e/in` reads `e/x.txt`, so the
/// read counts for `e/x.txt`: editing it by its plain name needs no new
/// read, and editing `d/x.txt` (another file) is not wrongly told it
/// changed.
#[tokio::test]
async fn one_file_has_one_observation_however_it_is_named() {
    let ws = Workspace::new();
    ws.write("e/in/keep", "");
    ws.write("e/x.txt", "from e\n");
    ws.write("d/x.txt", "from d\n");
    symlink("../e/in", ws.path("d/in")).unwrap();

    let read = ws.call("read_file", json!({"path": "d/in/../x.txt"})).await;
    assert!(
        read.text_content().contains("from e"),
        "{}",
        read.text_content()
    );
    let edit = ws
        .call(
            "edit_file",
            json!({"path": "e/x.txt", "old_string": "from e", "new_string": "edited"}),
        )
        .await;
    assert!(!edit.is_error(), "{}", edit.text_content());
    assert_eq!(ws.read("e/x.txt"), "edited\n");

    let other = ws
        .call(
            "edit_file",
            json!({"path": "d/x.txt", "old_string": "from d", "new_string": "edited"}),
        )
        .await;
    assert_eq!(other.error_kind(), Some(ToolErrorKind::StaleRead));
    assert!(
        other.text_content().contains("has not been read"),
        "{}",
        other.text_content()
    );
}
