//! Artifacts in an object store (S3 and compatible services, GCS, Azure,
//! or any other `object_store` backend), for replicas on many machines that
//! must open each other's artifacts.
//!
//! The guarantees of the local folder, kept over a store Iris does not
//! own: an artifact lives only at `<prefix>/<32 hex digits of its SHA-256>`
//! (a handle can name nothing else), is written create-if-absent and never
//! overwritten (two replicas saving the same content at once both succeed,
//! and one object is kept), and is checked against its address each time
//! it is opened, so a handle opens the bytes it was given for or nothing.
//!
//! The store's calls are async while the artifact store's API is not (a
//! result is saved inside the executor's last, synchronous stage): they run
//! on one small runtime of their own, on its own thread, while the caller's
//! thread waits, as it waits for the disk with the local folder. Waiting is
//! bounded by [`REMOTE_TIMEOUT`].

use std::path::PathBuf;
use std::sync::{Arc, OnceLock, mpsc};
use std::time::Duration;

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt as _, PutMode, PutOptions};

use crate::error::RuntimeError;

/// How long an artifact store call may take before the caller stops
/// waiting for it.
pub const REMOTE_TIMEOUT: Duration = Duration::from_secs(120);

/// The largest artifact read or published through an object store: it
/// passes through memory whole, to be checked against its address.
pub const MAX_REMOTE_ARTIFACT_BYTES: u64 = 256 * 1024 * 1024;

/// An object store and the prefix its artifacts live under.
#[derive(Debug)]
pub(super) struct Remote {
    store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
}

impl Remote {
    pub(super) fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> Self {
        Self {
            store,
            prefix: ObjectPath::from(prefix),
        }
    }

    /// Where the store's artifacts are, for messages and [`dir`].
    ///
    /// [`dir`]: super::ArtifactStore::dir
    pub(super) fn label(&self) -> PathBuf {
        PathBuf::from(format!("{}/{}", self.store, self.prefix))
    }

    fn location(&self, id: &str) -> ObjectPath {
        self.prefix.clone().join(id)
    }

    /// Stores `body` at `id` unless something is there already: the same
    /// content at the same address, or a corrupt object that `get` will
    /// refuse (it is never overwritten).
    pub(super) fn put_if_absent(&self, id: &str, body: Vec<u8>) -> Result<(), RuntimeError> {
        let store = Arc::clone(&self.store);
        let location = self.location(id);
        let outcome = run(async move {
            let create = PutOptions::from(PutMode::Create);
            match store.put_opts(&location, body.clone().into(), create).await {
                Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => Ok(()),
                // A store without conditional writes: look first. Two
                // writers may then both write, of the same bytes.
                Err(object_store::Error::NotImplemented { .. }) => {
                    match store.head(&location).await {
                        Ok(_) => Ok(()),
                        Err(object_store::Error::NotFound { .. }) => {
                            store.put(&location, body.into()).await.map(drop)
                        }
                        Err(other) => Err(other),
                    }
                }
                Err(other) => Err(other),
            }
        })?;
        outcome.map_err(|e| self.error("store", id, &e))
    }

    /// The bytes stored at `id`, at most [`MAX_REMOTE_ARTIFACT_BYTES`].
    pub(super) fn get(&self, id: &str) -> Result<Vec<u8>, RuntimeError> {
        let store = Arc::clone(&self.store);
        let location = self.location(id);
        let outcome = run(async move {
            let found = store.get(&location).await?;
            if found.meta.size > MAX_REMOTE_ARTIFACT_BYTES {
                return Ok(Err(found.meta.size));
            }
            Ok(Ok(found.bytes().await?.to_vec()))
        })?;
        match outcome {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(size)) => Err(too_large(id, size)),
            Err(e @ object_store::Error::NotFound { .. }) => Err(RuntimeError::Artifact {
                action: "open",
                path: self.label().join(id),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, e.to_string()),
            }),
            Err(e) => Err(self.error("open", id, &e)),
        }
    }

    fn error(&self, action: &'static str, id: &str, error: &object_store::Error) -> RuntimeError {
        RuntimeError::Artifact {
            action,
            path: self.label().join(id),
            source: std::io::Error::other(error.to_string()),
        }
    }
}

/// An artifact too large to pass through memory.
pub(super) fn too_large(id: &str, size: u64) -> RuntimeError {
    RuntimeError::Artifact {
        action: "open",
        path: PathBuf::from(id),
        source: std::io::Error::other(format!(
            "it holds {size} bytes, more than the {MAX_REMOTE_ARTIFACT_BYTES} an object-store artifact may hold"
        )),
    }
}

/// The runtime the object stores' calls run on: one thread of its own,
/// started on first use and kept for the life of the process.
fn io_runtime() -> Result<&'static tokio::runtime::Handle, RuntimeError> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Handle, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            let handle = runtime.handle().clone();
            std::thread::Builder::new()
                .name("iris-artifacts".to_owned())
                .spawn(move || runtime.block_on(std::future::pending::<()>()))
                .map_err(|e| e.to_string())?;
            Ok(handle)
        })
        .as_ref()
        .map_err(|why| RuntimeError::Artifact {
            action: "reach",
            path: PathBuf::from("object store"),
            source: std::io::Error::other(format!(
                "the thread that talks to object stores could not start: {why}"
            )),
        })
}

/// Runs `work` on the object stores' runtime and waits for it, at most
/// [`REMOTE_TIMEOUT`]. Safe from any thread, inside an async runtime or not.
fn run<T: Send + 'static>(
    work: impl Future<Output = T> + Send + 'static,
) -> Result<T, RuntimeError> {
    let (done, answer) = mpsc::sync_channel(1);
    io_runtime()?.spawn(async move {
        let _ = done.send(work.await);
    });
    answer
        .recv_timeout(REMOTE_TIMEOUT)
        .map_err(|_| RuntimeError::Artifact {
            action: "reach",
            path: PathBuf::from("object store"),
            source: std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "the object store did not answer within {} s",
                    REMOTE_TIMEOUT.as_secs()
                ),
            ),
        })
}
