//! Read-before-edit: edits and overwrites need a current read of the
//! lines they replace; matches must be unique unless `replace_all`.

use crate::files;

use files::Workspace;
use iris::ToolErrorKind;
use serde_json::json;

fn numbered(n: usize) -> String {
    use std::fmt::Write as _;
    (1..=n).fold(String::new(), |mut out, i| {
        let _ = writeln!(out, "line {i}");
        out
    })
}

#[tokio::test]
async fn edit_without_a_read_is_refused() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    let r = ws
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "alpha", "new_string": "beta"}),
        )
        .await;
    assert_eq!(r.error_kind(), Some(ToolErrorKind::StaleRead));
    assert!(
        r.text_content().contains("has not been read"),
        "{}",
        r.text_content()
    );
    assert_eq!(ws.read("a.txt"), "alpha\n");
}

#[tokio::test]
async fn edit_after_a_change_on_disk_is_refused_until_read_again() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    ws.call("read_file", json!({"path": "a.txt"})).await;
    ws.write("a.txt", "alpha\ngamma\n");
    let edit = json!({"path": "a.txt", "old_string": "alpha", "new_string": "beta"});
    let r = ws.call("edit_file", edit.clone()).await;
    assert_eq!(r.error_kind(), Some(ToolErrorKind::StaleRead));
    assert!(
        r.text_content().contains("changed on disk"),
        "{}",
        r.text_content()
    );
    assert_eq!(ws.read("a.txt"), "alpha\ngamma\n");
    ws.call("read_file", json!({"path": "a.txt"})).await;
    let r = ws.call("edit_file", edit).await;
    assert!(!r.is_error(), "{}", r.text_content());
    assert_eq!(ws.read("a.txt"), "beta\ngamma\n");
}

#[tokio::test]
async fn a_touch_without_change_is_no_conflict() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    ws.call("read_file", json!({"path": "a.txt"})).await;
    let file = std::fs::File::options()
        .write(true)
        .open(ws.path("a.txt"))
        .unwrap();
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(3600))
        .unwrap();
    let r = ws
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "alpha", "new_string": "beta"}),
        )
        .await;
    assert!(!r.is_error(), "{}", r.text_content());
    assert_eq!(ws.read("a.txt"), "beta\n");
}

#[tokio::test]
async fn lines_that_were_not_read_cannot_be_replaced() {
    let ws = Workspace::new();
    ws.write("big.txt", &numbered(100));
    ws.call("read_file", json!({"path": "big.txt", "limit": 10}))
        .await;
    let edit = json!({"path": "big.txt", "old_string": "line 50\n", "new_string": "fifty\n"});
    let r = ws.call("edit_file", edit.clone()).await;
    assert_eq!(r.error_kind(), Some(ToolErrorKind::StaleRead));
    let text = r.text_content();
    assert!(
        text.contains("line 50 of `big.txt` has not been read"),
        "{text}"
    );
    assert!(text.contains(r#""offset":50"#), "{text}");
    ws.call(
        "read_file",
        json!({"path": "big.txt", "offset": 45, "limit": 10}),
    )
    .await;
    let r = ws.call("edit_file", edit).await;
    assert!(!r.is_error(), "{}", r.text_content());
    assert!(ws.read("big.txt").contains("line 49\nfifty\nline 51\n"));
}

#[tokio::test]
async fn match_counts_decide_and_say_how_to_disambiguate() {
    let ws = Workspace::new();
    ws.write("a.txt", "x = 1\ny = 2\nx = 1\n");
    ws.call("read_file", json!({"path": "a.txt"})).await;

    let none = ws
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "z = 3", "new_string": "z = 4"}),
        )
        .await;
    assert_eq!(none.error_kind(), Some(ToolErrorKind::EditMismatch));
    assert!(none.text_content().contains("matches nothing"));

    let two = ws
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "x = 1", "new_string": "x = 9"}),
        )
        .await;
    assert_eq!(two.error_kind(), Some(ToolErrorKind::EditMismatch));
    let text = two.text_content();
    assert!(
        text.contains("matches 2 times") && text.contains("lines 1, 3"),
        "{text}"
    );
    assert!(text.contains("replace_all"), "{text}");
    assert_eq!(ws.read("a.txt"), "x = 1\ny = 2\nx = 1\n");

    let same = ws
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "y = 2", "new_string": "y = 2"}),
        )
        .await;
    assert_eq!(same.error_kind(), Some(ToolErrorKind::InvalidArguments));

    let all = ws
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "x = 1", "new_string": "x = 9", "replace_all": true}),
        )
        .await;
    assert!(!all.is_error(), "{}", all.text_content());
    assert_eq!(all.data().unwrap()["replacements"], 2);
    assert_eq!(ws.read("a.txt"), "x = 9\ny = 2\nx = 9\n");
}

#[tokio::test]
async fn read_edit_read_edit_in_one_run() {
    let ws = Workspace::new();
    ws.write("conf.yaml", &numbered(30));
    ws.call(
        "read_file",
        json!({"path": "conf.yaml", "offset": 1, "limit": 12}),
    )
    .await;
    // Grows the file by two lines above what the run read next.
    let r = ws
        .call(
            "edit_file",
            json!({"path": "conf.yaml", "old_string": "line 3\n", "new_string": "three\nthree-b\nthree-c\n"}),
        )
        .await;
    assert!(!r.is_error(), "{}", r.text_content());
    // Lines the run read before still count, moved down by two.
    let r = ws
        .call(
            "edit_file",
            json!({"path": "conf.yaml", "old_string": "line 12\n", "new_string": "twelve\n"}),
        )
        .await;
    assert!(!r.is_error(), "{}", r.text_content());
    let r = ws
        .call(
            "edit_file",
            json!({"path": "conf.yaml", "old_string": "line 13\n", "new_string": "x\n"}),
        )
        .await;
    assert_eq!(
        r.error_kind(),
        Some(ToolErrorKind::StaleRead),
        "{}",
        r.text_content()
    );
    let page = ws
        .call(
            "read_file",
            json!({"path": "conf.yaml", "offset": 14, "limit": 5}),
        )
        .await;
    assert!(
        page.text_content().contains("    15\tline 13"),
        "{}",
        page.text_content()
    );
    let r = ws
        .call(
            "edit_file",
            json!({"path": "conf.yaml", "old_string": "line 13\n", "new_string": "thirteen\n"}),
        )
        .await;
    assert!(!r.is_error(), "{}", r.text_content());
    let text = ws.read("conf.yaml");
    assert!(text.starts_with("line 1\nline 2\nthree\nthree-b\nthree-c\nline 4\n"));
    assert!(text.contains("line 11\ntwelve\nthirteen\nline 14\n"));
}

#[tokio::test]
async fn runs_keep_their_own_observations() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    ws.call_in("run-a", "read_file", json!({"path": "a.txt"}))
        .await;
    let r = ws
        .call_in(
            "run-b",
            "edit_file",
            json!({"path": "a.txt", "old_string": "alpha", "new_string": "b"}),
        )
        .await;
    assert_eq!(r.error_kind(), Some(ToolErrorKind::StaleRead));
    // Ending run-a in the ledger forgets what it read.
    ws.files.ledger().finish_run(&iris::RunId::new("run-a"));
    let r = ws
        .call_in(
            "run-a",
            "edit_file",
            json!({"path": "a.txt", "old_string": "alpha", "new_string": "b"}),
        )
        .await;
    assert_eq!(r.error_kind(), Some(ToolErrorKind::StaleRead));
}

#[tokio::test]
async fn write_file_creates_freely_but_overwrites_only_what_was_read() {
    let ws = Workspace::new();
    let r = ws
        .call(
            "write_file",
            json!({"path": "new/deep/file.txt", "content": "fresh\n"}),
        )
        .await;
    assert!(!r.is_error(), "{}", r.text_content());
    assert_eq!(ws.read("new/deep/file.txt"), "fresh\n");

    ws.write("old.txt", &numbered(40));
    let overwrite = json!({"path": "old.txt", "content": "replaced\n"});
    let r = ws.call("write_file", overwrite.clone()).await;
    assert_eq!(r.error_kind(), Some(ToolErrorKind::StaleRead));
    ws.call("read_file", json!({"path": "old.txt", "limit": 20}))
        .await;
    let r = ws.call("write_file", overwrite.clone()).await;
    assert_eq!(r.error_kind(), Some(ToolErrorKind::StaleRead));
    assert!(r.text_content().contains("line 21"), "{}", r.text_content());
    ws.call("read_file", json!({"path": "old.txt", "offset": 21}))
        .await;
    let r = ws.call("write_file", overwrite).await;
    assert!(!r.is_error(), "{}", r.text_content());
    assert_eq!(ws.read("old.txt"), "replaced\n");
}

#[tokio::test]
async fn an_empty_file_read_once_can_be_overwritten() {
    let ws = Workspace::new();
    ws.write("empty.txt", "");
    let refused = ws
        .call("write_file", json!({"path": "empty.txt", "content": "x\n"}))
        .await;
    assert_eq!(refused.error_kind(), Some(ToolErrorKind::StaleRead));
    let read = ws.call("read_file", json!({"path": "empty.txt"})).await;
    assert!(
        read.text_content().contains("empty file"),
        "{}",
        read.text_content()
    );
    let r = ws
        .call("write_file", json!({"path": "empty.txt", "content": "x\n"}))
        .await;
    assert!(!r.is_error(), "{}", r.text_content());
    assert_eq!(ws.read("empty.txt"), "x\n");
}

#[cfg(unix)]
#[tokio::test]
async fn writes_keep_permissions_and_crlf_line_endings() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Workspace::new();
    ws.write("win.ini", "[core]\r\nlevel = DEBUG\r\nname = x\r\n");
    std::fs::set_permissions(ws.path("win.ini"), std::fs::Permissions::from_mode(0o640)).unwrap();
    ws.call("read_file", json!({"path": "win.ini"})).await;
    let r = ws
        .call(
            "edit_file",
            json!({"path": "win.ini", "old_string": "level = DEBUG\nname", "new_string": "level = INFO\nname"}),
        )
        .await;
    assert!(!r.is_error(), "{}", r.text_content());
    assert_eq!(ws.read("win.ini"), "[core]\r\nlevel = INFO\r\nname = x\r\n");
    let mode = std::fs::metadata(ws.path("win.ini"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
    let r = ws
        .call(
            "write_file",
            json!({"path": "win.ini", "content": "[core]\nlevel = WARN\n"}),
        )
        .await;
    assert!(!r.is_error(), "{}", r.text_content());
    assert_eq!(ws.read("win.ini"), "[core]\r\nlevel = WARN\r\n");
    let mode = std::fs::metadata(ws.path("win.ini"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
}

#[tokio::test]
async fn binary_files_are_recognised() {
    let ws = Workspace::new();
    std::fs::write(ws.path("blob.bin"), [0x89, b'P', b'N', b'G', 0, 0, 1, 2]).unwrap();
    let r = ws.call("read_file", json!({"path": "blob.bin"})).await;
    assert_eq!(r.error_kind(), Some(ToolErrorKind::UnsupportedContent));
    assert!(r.text_content().contains("binary"), "{}", r.text_content());
}
