//! Artifacts in an object store, as replicas on many machines share them:
//! an oversized result saved by one replica's executor opens, and pages
//! back through `read_file`, on another's; replicas saving the same bytes
//! at once agree on one object; an object changed behind the store's back
//! is refused, a missing one is not found; the store answers inside an
//! async runtime and outside any. The same on a real S3-compatible server
//! (moto, pinned, installed by `tests/s3-server/install.sh` on first use),
//! where create-if-absent is S3's conditional write.

use std::sync::Arc;

use iris::artifacts::ArtifactStore;
use iris::artifacts::object_store::memory::InMemory;
use iris::artifacts::object_store::path::Path as ObjectPath;
use iris::artifacts::object_store::{ObjectStore, ObjectStoreExt as _};
use iris::fs::{FileService, register_file_tools};
use iris::{RunId, RuntimeError, ToolContext, ToolExecutor, ToolRegistry, ToolUseBlock};
use serde_json::json;

#[path = "s3/server.rs"]
mod s3;

const PREFIX: &str = "runs/artifacts";

/// Print a long report.
#[iris::tool(read_only)]
fn long_report(
    /// Lines to print.
    lines: usize,
) -> String {
    use std::fmt::Write as _;
    (0..lines).fold(String::new(), |mut out, i| {
        let _ = writeln!(out, "{i:06} line of the report");
        out
    })
}

fn read(store: &ArtifactStore, handle: &str) -> String {
    let mut body = String::new();
    std::io::Read::read_to_string(&mut store.open(handle).unwrap(), &mut body).unwrap();
    body
}

/// The artifacts under the prefix (beside them, the store's address key,
/// shared by every replica).
async fn objects(store: &InMemory) -> usize {
    use futures_util::StreamExt as _;
    store
        .list(Some(&ObjectPath::from(PREFIX)))
        .filter(|meta| {
            let key = meta
                .as_ref()
                .is_ok_and(|m| m.location.filename() == Some(".address-key"));
            std::future::ready(!key)
        })
        .count()
        .await
}

/// One replica: its own executor and file service over the shared store.
fn replica(shared: &Arc<InMemory>, root: &std::path::Path) -> (ToolExecutor, ToolContext) {
    let store = ArtifactStore::object_store(Arc::clone(shared) as Arc<dyn ObjectStore>, PREFIX);
    let mut registry = ToolRegistry::new();
    register_file_tools(&mut registry).unwrap();
    registry.register(LongReport).unwrap();
    let executor = ToolExecutor::builder(registry)
        .artifacts(store.clone())
        .max_result_chars(2_000)
        .build()
        .unwrap();
    let files = Arc::new(
        FileService::open(root)
            .unwrap()
            .with_artifacts(store)
            .with_ledger(Arc::clone(executor.ledger())),
    );
    let cx = ToolContext::builder(root, RunId::new("run-1"))
        .shared_state(files)
        .build();
    (executor, cx)
}

#[tokio::test]
async fn an_oversized_result_saved_by_one_replica_opens_on_another() {
    let shared = Arc::new(InMemory::new());
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, a_cx) = replica(&shared, a_dir.path());
    let outcome = a
        .execute_one(
            ToolUseBlock::new("c1", "long_report", json!({"lines": 5_000})),
            &a_cx,
        )
        .await;
    let result = outcome.result().unwrap();
    let artifact = &result.artifacts()[0];
    let full = long_report(5_000);
    assert_eq!(artifact.size, full.len() as u64);
    assert!(result.text_content().len() < full.len());
    assert_eq!(objects(&shared).await, 1);
    // Nothing was written to the replica's workspace.
    assert!(!a_dir.path().join(".iris").exists());

    // Another replica, another workspace, the same object store.
    let (b, b_cx) = replica(&shared, b_dir.path());
    let other = ArtifactStore::object_store(Arc::clone(&shared) as Arc<dyn ObjectStore>, PREFIX);
    assert_eq!(read(&other, &artifact.handle), full);
    // The other replica's model pages it back once its own run named it.
    let named = b
        .execute_one(
            ToolUseBlock::new("c1", "long_report", json!({"lines": 5_000})),
            &b_cx,
        )
        .await;
    assert_eq!(
        named.result().unwrap().artifacts()[0].handle,
        artifact.handle
    );
    let page = b
        .execute_one(
            ToolUseBlock::new("c2", "read_file", json!({"path": artifact.handle})),
            &b_cx,
        )
        .await;
    let page = page.result().unwrap();
    assert!(!page.is_error(), "{}", page.text_content());
    assert!(page.text_content().contains("000000 line of the report"));
    assert_eq!(objects(&shared).await, 1, "the same content is stored once");
}

#[test]
fn replicas_saving_the_same_bytes_at_once_agree_on_one_object() {
    let shared = Arc::new(InMemory::new());
    let body = b"the same result, saved by eight replicas at once".repeat(1_000);
    let handles: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..8)
            .map(|_| {
                let store = ArtifactStore::object_store(
                    Arc::clone(&shared) as Arc<dyn ObjectStore>,
                    PREFIX,
                );
                let body = &body;
                scope.spawn(move || store.save(body, Some("text/plain"), None).unwrap().handle)
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert!(handles.windows(2).all(|w| w[0] == w[1]), "{handles:?}");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert_eq!(runtime.block_on(objects(&shared)), 1);
    let store = ArtifactStore::object_store(Arc::clone(&shared) as Arc<dyn ObjectStore>, PREFIX);
    assert_eq!(read(&store, &handles[0]).as_bytes(), body.as_slice());
}

#[tokio::test]
async fn a_changed_object_is_refused_and_a_missing_one_is_not_found() {
    let shared = Arc::new(InMemory::new());
    let store = ArtifactStore::object_store(Arc::clone(&shared) as Arc<dyn ObjectStore>, PREFIX);
    let saved = store.save(b"what the tool returned", None, None).unwrap();
    let id = saved.handle.strip_prefix("artifact://").unwrap();
    shared
        .put(
            &ObjectPath::from(format!("{PREFIX}/{id}")),
            b"something else".to_vec().into(),
        )
        .await
        .unwrap();
    match store.open(&saved.handle) {
        Err(RuntimeError::ArtifactRefused { reason, .. }) => {
            assert!(reason.contains("no longer matches its address"), "{reason}");
        }
        other => panic!("a changed object is refused: {other:?}"),
    }
    // Saving the same content again does not overwrite what is there.
    store.save(b"what the tool returned", None, None).unwrap();
    assert!(store.open(&saved.handle).is_err());

    let missing = "artifact://0123456789abcdef0123456789abcdef";
    match store.open(missing) {
        Err(RuntimeError::Artifact { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound, "{source}");
        }
        other => panic!("a missing object is not found: {other:?}"),
    }
    assert!(matches!(
        store.open("artifact://../../etc/passwd"),
        Err(RuntimeError::InvalidArtifactHandle { .. })
    ));
    let no_file = store.path_of(&saved.handle).unwrap_err().to_string();
    assert!(no_file.contains("no local file"), "{no_file}");
    assert!(store.check_existing().is_ok());
    assert!(store.existing_identity().is_none());
}

#[test]
fn publishing_and_opening_work_outside_any_runtime_too() {
    let shared = Arc::new(InMemory::new());
    let store = ArtifactStore::object_store(Arc::clone(&shared) as Arc<dyn ObjectStore>, PREFIX);
    let published = store
        .publish_reader(
            &b"a published file"[..],
            Some("text/plain"),
            Some("notes.txt"),
        )
        .unwrap();
    assert_eq!(published.name.as_deref(), Some("notes.txt"));
    assert_eq!(published.size, 16);
    assert_eq!(read(&store, &published.handle), "a published file");
    assert_eq!(
        store.save(b"a published file", None, None).unwrap().handle,
        published.handle
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_an_s3_compatible_server_replicas_agree_and_a_changed_object_is_refused() {
    let server = s3::S3Server::start().await;
    let bucket = server.bucket("iris-artifacts").await;
    let body = b"a result two replicas saved at once".repeat(2_000);
    let handles: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let store = ArtifactStore::object_store(Arc::clone(&bucket), PREFIX);
                let body = &body;
                scope.spawn(move || store.save(body, None, None).unwrap().handle)
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert!(handles.windows(2).all(|w| w[0] == w[1]), "{handles:?}");
    let listed = {
        use futures_util::StreamExt as _;
        bucket.list(Some(&ObjectPath::from(PREFIX))).count().await
    };
    assert_eq!(
        listed, 2,
        "one artifact, and the one key every replica agreed on"
    );

    // Another replica opens it, checked against its address.
    let other = ArtifactStore::object_store(Arc::clone(&bucket), PREFIX);
    assert_eq!(read(&other, &handles[0]).as_bytes(), body.as_slice());

    // Changed behind the store's back: refused, and never overwritten.
    let id = handles[0].strip_prefix("artifact://").unwrap();
    bucket
        .put(
            &ObjectPath::from(format!("{PREFIX}/{id}")),
            b"tampered".to_vec().into(),
        )
        .await
        .unwrap();
    assert!(matches!(
        other.open(&handles[0]),
        Err(RuntimeError::ArtifactRefused { .. })
    ));
    other.save(&body, None, None).unwrap();
    assert!(matches!(
        other.open(&handles[0]),
        Err(RuntimeError::ArtifactRefused { .. })
    ));
    match other.open("artifact://0123456789abcdef0123456789abcdef") {
        Err(RuntimeError::Artifact { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound, "{source}");
        }
        other => panic!("a missing object is not found: {other:?}"),
    }
}
