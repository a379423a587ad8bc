//! The artifact store under attack from inside the workspace: links and
//! special files planted where artifacts live, a store folder that leads
//! outside, and artifacts the model tries to change or forge.
#![cfg(unix)]

use crate::files;

use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use files::{SECRET, Workspace, snapshot};
use iris::RuntimeError;
use iris::artifacts::ArtifactStore;
use iris::fs::FileService;
use iris::{ToolErrorKind, ToolResult};
use serde_json::json;

const ID: &str = "0123456789abcdef0123456789abcdef";

fn handle() -> String {
    format!("artifact://{ID}")
}

async fn read_handle(ws: &Workspace, handle: &str) -> ToolResult {
    ws.call("read_file", json!({"path": handle})).await
}

fn assert_refused(result: &ToolResult) {
    assert!(result.is_error(), "{}", result.text_content());
    assert!(
        !result.text_content().contains(SECRET),
        "{}",
        result.text_content()
    );
}

#[tokio::test]
async fn a_handle_never_follows_a_link_out_of_the_store() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path(".iris/artifacts")).unwrap();
    symlink(
        ws.outside.join("secret.txt"),
        ws.path(&format!(".iris/artifacts/{ID}")),
    )
    .unwrap();
    let result = read_handle(&ws, &handle()).await;
    assert_refused(&result);
    assert_eq!(result.error_kind(), Some(ToolErrorKind::PathRefused));
}

#[tokio::test]
async fn a_store_folder_that_is_a_link_is_refused_and_nothing_is_written_outside() {
    let ws = Workspace::new();
    symlink(&ws.outside, ws.path(".iris")).unwrap();
    let before = snapshot(&ws.outside);

    let opened = FileService::open(&ws.root);
    assert!(
        matches!(
            opened,
            Err(iris::fs::FileServiceError::Artifacts(
                RuntimeError::ArtifactStoreRefused { .. }
            ))
        ),
        "{opened:?}"
    );
    let store = ArtifactStore::in_workspace(&ws.root);
    let saved = store.save(b"a large result", None, None);
    let message = saved.unwrap_err().to_string();
    assert!(message.contains("symlink"), "{message}");

    // An oversized result with the executor's default store: kept whole in
    // the result, nothing saved outside.
    let result = iris::artifacts::apply_result_policy(
        ToolResult::text("x".repeat(100)),
        iris::artifacts::PreviewPolicy { max_chars: 10 },
        &store,
    );
    assert_eq!(result.text_content().len(), 100);
    assert_eq!(snapshot(&ws.outside), before);

    // Through a handle, too.
    std::fs::create_dir_all(ws.outside.join("artifacts")).unwrap();
    std::fs::copy(
        ws.outside.join("secret.txt"),
        ws.outside.join(format!("artifacts/{ID}")),
    )
    .unwrap();
    let refused = ws.files.artifacts().open(&handle());
    assert!(refused.is_err());
}

#[tokio::test]
async fn fifos_and_devices_are_refused_at_once() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path(".iris/artifacts")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(ws.path(&format!(".iris/artifacts/{ID}")))
        .status()
        .unwrap();
    assert!(made.success());
    let started = Instant::now();
    let result = read_handle(&ws, &handle()).await;
    assert_refused(&result);
    assert!(started.elapsed() < Duration::from_secs(2));

    let other = "fedcba9876543210fedcba9876543210";
    symlink("/dev/zero", ws.path(&format!(".iris/artifacts/{other}"))).unwrap();
    let started = Instant::now();
    let result = read_handle(&ws, &format!("artifact://{other}")).await;
    assert_refused(&result);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn the_model_cannot_change_or_forge_artifacts() {
    let ws = Workspace::new();
    let saved = ws
        .files
        .artifacts()
        .save(b"the real result\n", None, None)
        .unwrap();
    let id = saved.handle.trim_start_matches("artifact://").to_owned();
    let stored = format!(".iris/artifacts/{id}");

    // Read it by path (allowed), then try to change it every way.
    ws.call("read_file", json!({"path": stored})).await;
    symlink(ws.path(".iris"), ws.path("alias")).unwrap();
    for (tool, input) in [
        ("write_file", json!({"path": stored, "content": "forged"})),
        (
            "edit_file",
            json!({"path": stored, "old_string": "real", "new_string": "forged"}),
        ),
        (
            "write_file",
            json!({"path": format!(".iris/artifacts/{ID}"), "content": "forged"}),
        ),
        (
            "write_file",
            json!({"path": format!("alias/artifacts/{ID}"), "content": "forged"}),
        ),
        ("write_file", json!({"path": ".iris/notes", "content": "x"})),
    ] {
        let result = ws.call(tool, input.clone()).await;
        assert_eq!(
            result.error_kind(),
            Some(ToolErrorKind::PathRefused),
            "{tool} {input}: {}",
            result.text_content()
        );
    }
    let back = read_handle(&ws, &saved.handle).await;
    assert_eq!(back.data().unwrap()["text"], "the real result\n");
    assert!(!ws.path(&format!(".iris/artifacts/{ID}")).exists());

    // Changed behind the tools' back (by another program): refused, not
    // passed off as the saved result.
    let path = ws.path(&stored);
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    #[allow(
        clippy::permissions_set_readonly_false,
        reason = "the test plays a program that tampers with the store"
    )]
    permissions.set_readonly(false);
    std::fs::set_permissions(&path, permissions).unwrap();
    std::fs::write(&path, "tampered\n").unwrap();
    let tampered = read_handle(&ws, &saved.handle).await;
    assert_eq!(tampered.error_kind(), Some(ToolErrorKind::PathRefused));
    assert!(tampered.text_content().contains("no longer matches"));

    // A file planted under an address it does not hash to.
    std::fs::write(ws.path(&format!(".iris/artifacts/{ID}")), "planted").unwrap();
    let planted = read_handle(&ws, &handle()).await;
    assert_eq!(planted.error_kind(), Some(ToolErrorKind::PathRefused));

    // Saving the same body again repairs the tampered copy.
    let again = ws
        .files
        .artifacts()
        .save(b"the real result\n", None, None)
        .unwrap();
    assert_eq!(again.handle, saved.handle);
    let back = read_handle(&ws, &saved.handle).await;
    assert_eq!(back.data().unwrap()["text"], "the real result\n");
}
