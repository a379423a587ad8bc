//! Oversized results are saved whole and previewed; the handle pages the
//! full body back byte for byte; published copies outlive their source.

use crate::files;

use files::Workspace;
use iris::artifacts::ArtifactStore;
use iris::{ToolResult, ToolUseBlock};
use serde_json::{Value, json};

/// Print a large report.
#[iris::tool(read_only)]
fn report(
    /// Lines to print.
    lines: usize,
) -> String {
    use std::fmt::Write as _;
    (0..lines).fold(String::new(), |mut out, i| {
        let _ = writeln!(out, "{i:07} report line with some ünïcödé text");
        out
    })
}

/// Print one huge line.
#[iris::tool(read_only)]
fn one_line(
    /// Characters in the line.
    chars: usize,
) -> String {
    "0123456789abcdef".chars().cycle().take(chars).collect()
}

fn workspace() -> (Workspace, iris::ToolExecutor) {
    let ws = Workspace::new();
    let mut registry = iris::ToolRegistry::new();
    iris::fs::register_file_tools(&mut registry).unwrap();
    registry.register(Report).unwrap();
    registry.register(OneLine).unwrap();
    let executor = iris::ToolExecutor::builder(registry).build().unwrap();
    (ws, executor)
}

async fn run(
    ws: &Workspace,
    executor: &iris::ToolExecutor,
    name: &str,
    input: Value,
) -> ToolResult {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let id = format!(
        "call-{}",
        CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let outcome = executor
        .execute_one(ToolUseBlock::new(id, name, input), &ws.context("run-1"))
        .await;
    outcome.result().cloned().unwrap()
}

/// Follows the `read_file` pages of `handle` from the preview's call and
/// returns the whole body rebuilt from them.
async fn page_back(ws: &Workspace, executor: &iris::ToolExecutor, handle: &str) -> (String, usize) {
    let (mut body, mut pages) = (String::new(), 0);
    let mut call = json!({"path": handle});
    loop {
        let page = run(ws, executor, "read_file", call.clone()).await;
        assert!(!page.is_error(), "{}", page.text_content());
        assert!(
            page.artifacts().is_empty(),
            "a page must never be saved again"
        );
        let data = page.data().unwrap();
        body.push_str(data["text"].as_str().unwrap());
        pages += 1;
        match &data["next"] {
            Value::Null => return (body, pages),
            next => {
                call = json!({"path": handle, "offset": next["offset"]});
                if let Some(column) = next.get("column") {
                    call["column"] = column.clone();
                }
            }
        }
    }
}

fn preview_call(text: &str) -> Value {
    let start = text.find("read_file {").unwrap() + "read_file ".len();
    let end = start + text[start..].find('}').unwrap() + 1;
    serde_json::from_str(&text[start..end]).unwrap()
}

#[tokio::test]
async fn a_5_mb_result_is_previewed_and_pages_back_identical() {
    let (ws, executor) = workspace();
    let full = report(120_000);
    assert!(full.len() > 5_000_000);
    let result = run(&ws, &executor, "report", json!({"lines": 120_000})).await;
    let preview = result.text_content();
    assert!(preview.chars().count() <= 40_000, "{}", preview.len());
    assert!(preview.starts_with("0000000 report line"));
    assert!(
        preview
            .trim_end()
            .ends_with("0119999 report line with some ünïcödé text")
    );
    assert!(preview.contains("characters cut here"));
    let artifact = &result.artifacts()[0];
    assert_eq!(artifact.size, full.len() as u64);
    assert_eq!(
        result.stats()["truncated"]["artifact"],
        artifact.handle.as_str()
    );

    // The call in the preview starts at the first line that was cut.
    let call = preview_call(&preview);
    assert_eq!(call["path"], artifact.handle.as_str());
    let first_cut = run(&ws, &executor, "read_file", call).await;
    let shown_lines = preview
        .lines()
        .take_while(|l| !l.starts_with("[..."))
        .count();
    let first_cut = first_cut.text_content();
    assert!(
        first_cut.contains(&format!("{shown_lines:07} report line")),
        "{shown_lines} {}",
        &first_cut[..200]
    );

    // Host code opens the handle; read_file pages the same bytes back.
    let store = ArtifactStore::in_workspace(&ws.root);
    let mut opened = String::new();
    std::io::Read::read_to_string(&mut store.open(&artifact.handle).unwrap(), &mut opened).unwrap();
    assert_eq!(opened, full);
    let (paged, page_count) = page_back(&ws, &executor, &artifact.handle).await;
    assert!(page_count > 100, "{page_count}");
    assert_eq!(paged, full);
}

#[tokio::test]
async fn a_single_2_mb_line_is_cut_too_and_pages_back() {
    let (ws, executor) = workspace();
    let result = run(&ws, &executor, "one_line", json!({"chars": 2_000_000})).await;
    let preview = result.text_content();
    assert!(preview.len() < 40_000, "{}", preview.len());
    let call = preview_call(&preview);
    assert_eq!(call["offset"], 1);
    assert_eq!(call["column"], 20_001);
    let handle = result.artifacts()[0].handle.clone();
    let (paged, _) = page_back(&ws, &executor, &handle).await;
    assert_eq!(paged, one_line(2_000_000));
}

#[tokio::test]
async fn published_copies_survive_an_overwrite_and_are_stored_once() {
    let ws = Workspace::new();
    ws.write("out/chart.svg", "<svg>first</svg>");
    let first = ws
        .files
        .publish("out/chart.svg", Some("image/svg+xml"))
        .unwrap();
    let again = ws
        .files
        .publish("out/chart.svg", Some("image/svg+xml"))
        .unwrap();
    assert_eq!(first.handle, again.handle);
    assert_eq!(first.name.as_deref(), Some("chart.svg"));
    ws.write("out/chart.svg", "<svg>second</svg>");
    let second = ws.files.publish("out/chart.svg", None).unwrap();
    assert_ne!(first.handle, second.handle);

    let store = ws.files.artifacts();
    let read = |handle: &str| {
        let mut body = String::new();
        std::io::Read::read_to_string(&mut store.open(handle).unwrap(), &mut body).unwrap();
        body
    };
    assert_eq!(read(&first.handle), "<svg>first</svg>");
    assert_eq!(read(&second.handle), "<svg>second</svg>");
    let stored = std::fs::read_dir(store.dir())
        .unwrap()
        .filter(|entry| entry.as_ref().unwrap().file_name() != ".address-key")
        .count();
    assert_eq!(stored, 2, "two bodies (beside the store's key)");
    // Artifacts are read-only on disk.
    let meta = std::fs::metadata(store.path_of(&first.handle).unwrap()).unwrap();
    assert!(meta.permissions().readonly());
    // Publishing is confined like every other path.
    assert!(ws.files.publish("../outside/secret.txt", None).is_err());
}

#[tokio::test]
async fn bad_handles_are_clear_errors() {
    let (ws, executor) = workspace();
    let missing = run(
        &ws,
        &executor,
        "read_file",
        json!({"path": "artifact://ffffffffffffffffffffffffffffffff"}),
    )
    .await;
    assert_eq!(
        missing.error_kind(),
        Some(iris::ToolErrorKind::NotFound),
        "{}",
        missing.text_content()
    );
    // A malformed handle is said to be one, and a huge one is not echoed.
    let huge = format!("artifact://{}", "../".repeat(66_667));
    for handle in ["artifact://../../etc/passwd", huge.as_str()] {
        let r = run(&ws, &executor, "read_file", json!({"path": handle})).await;
        assert_eq!(
            r.error_kind(),
            Some(iris::ToolErrorKind::InvalidArguments),
            "{}",
            r.text_content()
        );
        assert!(r.text_content().contains("malformed artifact handle"));
        assert!(r.text_content().len() < 400, "{}", r.text_content().len());
        assert!(r.artifacts().is_empty());
    }
}

#[tokio::test]
async fn configuration_sets_limits_per_tool_and_names_file_tools_by_key() {
    let ws = Workspace::new();
    let mut registry = iris::ToolRegistry::new();
    registry.register(Report).unwrap();
    for (key, name) in iris::fs::CONFIG_KEYS {
        let tool = iris::fs::tool_for_key(key).unwrap();
        assert_eq!(tool.definition_dyn().name().as_str(), *name);
        registry.register_dyn(tool).unwrap();
    }
    let executor = iris::ToolExecutor::builder(registry)
        .tool_max_result_chars("report", 200)
        .build()
        .unwrap();
    let result = run(&ws, &executor, "report", json!({"lines": 20})).await;
    assert_eq!(result.artifacts().len(), 1, "{}", result.text_content());
    assert!(result.text_content().chars().count() < 600);
    let read_back = run(
        &ws,
        &executor,
        "read_file",
        json!({"path": result.artifacts()[0].handle}),
    )
    .await;
    assert_eq!(read_back.data().unwrap()["text"], report(20));
}

/// A handle confirms no guessed body: its address is keyed with a secret
/// of the store's own (made once, readable by its owner only), so the same
/// body has another handle in another store (a content hash would be the
/// same everywhere). The same store (in a later process too) gives it one
/// handle.
#[test]
fn handles_are_not_guessable_from_the_content() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let body = b"alice's quarterly report";
    let store = ArtifactStore::in_workspace(first.path());
    let handle = store.save(body, None, None).unwrap().handle;
    let again = ArtifactStore::in_workspace(first.path());
    assert_eq!(
        again.save(body, None, None).unwrap().handle,
        handle,
        "one store, one address: the key is kept"
    );
    let mut read = String::new();
    std::io::Read::read_to_string(&mut again.open(&handle).unwrap(), &mut read).unwrap();
    assert_eq!(read.as_bytes(), body);
    let elsewhere = ArtifactStore::in_workspace(second.path());
    assert_ne!(elsewhere.save(body, None, None).unwrap().handle, handle);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let key = first.path().join(".iris/artifacts/.address-key");
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "only its owner reads the key: {mode:o}");
    }
}
