//! The artifact store: where oversized results are saved whole and where
//! tools publish the files they produce.
//!
//! Artifacts are content-addressed (the handle is `artifact://` followed by
//! the first 32 hex digits of the body's SHA-256), written atomically
//! (temporary file in the store's folder, flush, rename) and made read-only
//! once written, so a handle always opens the bytes it was given for. The
//! same body saved or published twice is stored once.

mod preview;

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use iris_core::ArtifactRef;
use sha2::{Digest, Sha256};

use crate::error::RuntimeError;

pub(crate) use preview::fits;
pub use preview::{DEFAULT_MAX_RESULT_CHARS, PreviewPolicy, apply_result_policy};

/// The scheme of artifact handles.
pub const HANDLE_PREFIX: &str = "artifact://";

/// Hex digits of the SHA-256 kept in a handle: 128 bits.
const ID_LEN: usize = 32;

/// Where artifacts of a workspace live unless the host picks a folder.
pub const DEFAULT_ARTIFACT_DIR: &str = ".iris/artifacts";

/// Saves bodies and published files; opens them again by handle.
#[derive(Debug, Clone)]
pub struct ArtifactStore {
    dir: PathBuf,
}

impl ArtifactStore {
    /// A store in `dir`, created on the first save.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The store a workspace uses by default: `<root>/.iris/artifacts`.
    pub fn in_workspace(root: impl AsRef<Path>) -> Self {
        Self::new(root.as_ref().join(DEFAULT_ARTIFACT_DIR))
    }

    /// The folder holding the artifacts.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Saves `body` whole and returns its reference.
    ///
    /// # Errors
    /// [`RuntimeError::Artifact`] when the store cannot be written.
    pub fn save(
        &self,
        body: &[u8],
        media_type: Option<&str>,
        name: Option<&str>,
    ) -> Result<ArtifactRef, RuntimeError> {
        let id = id_of(Sha256::digest(body).as_slice());
        let size = body.len() as u64;
        self.commit(&id, |file| file.write_all(body))?;
        Ok(reference(&id, size, media_type, name))
    }

    /// Publishes the file at `source`: the store keeps its own immutable
    /// copy, so later changes to `source` do not change what the handle
    /// opens. The file is streamed, never held in memory whole.
    ///
    /// # Errors
    /// [`RuntimeError::Artifact`] when `source` cannot be read or the store
    /// cannot be written.
    pub fn publish_file(
        &self,
        source: &Path,
        media_type: Option<&str>,
    ) -> Result<ArtifactRef, RuntimeError> {
        let file = File::open(source).map_err(|e| artifact_error("open", source, e))?;
        let name = source.file_name().and_then(|n| n.to_str());
        self.publish_reader(file, media_type, name)
    }

    /// Publishes what `reader` yields, streamed through a temporary file
    /// while it is hashed.
    ///
    /// # Errors
    /// [`RuntimeError::Artifact`] when reading or writing fails.
    pub fn publish_reader(
        &self,
        mut reader: impl Read,
        media_type: Option<&str>,
        name: Option<&str>,
    ) -> Result<ArtifactRef, RuntimeError> {
        self.ensure_dir()?;
        let (temp_path, mut temp) = self.temp_file()?;
        let copied = (|| {
            let mut hasher = Sha256::new();
            let mut buf = vec![0_u8; 64 * 1024];
            let mut size = 0_u64;
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                hasher.update(&buf[..n]);
                temp.write_all(&buf[..n])?;
                size += n as u64;
            }
            temp.sync_all()?;
            Ok((id_of(hasher.finalize().as_slice()), size))
        })();
        drop(temp);
        let (id, size) = match copied {
            Ok(done) => done,
            Err(e) => {
                let _ = fs::remove_file(&temp_path);
                return Err(artifact_error("write", &temp_path, e));
            }
        };
        self.place(&temp_path, &id)?;
        Ok(reference(&id, size, media_type, name))
    }

    /// Opens the artifact behind `handle` for reading.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidArtifactHandle`] for a handle of another form,
    /// [`RuntimeError::Artifact`] when it cannot be opened (for example it
    /// does not exist).
    pub fn open(&self, handle: &str) -> Result<File, RuntimeError> {
        let path = self.path_of(handle)?;
        File::open(&path).map_err(|e| artifact_error("open", &path, e))
    }

    /// The file that holds the artifact behind `handle`.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidArtifactHandle`] for a handle of another form.
    pub fn path_of(&self, handle: &str) -> Result<PathBuf, RuntimeError> {
        let id = parse_handle(handle).ok_or_else(|| RuntimeError::InvalidArtifactHandle {
            handle: handle.to_owned(),
        })?;
        Ok(self.dir.join(id))
    }

    fn ensure_dir(&self) -> Result<(), RuntimeError> {
        fs::create_dir_all(&self.dir).map_err(|e| artifact_error("create", &self.dir, e))
    }

    fn temp_file(&self) -> Result<(PathBuf, File), RuntimeError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = self.dir.join(format!(".tmp-{}-{n}", std::process::id()));
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => return Ok((path, file)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(artifact_error("create", &path, e)),
            }
        }
    }

    /// Writes a body through a temporary file unless `id` is stored already.
    fn commit(
        &self,
        id: &str,
        write: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> Result<(), RuntimeError> {
        if self.dir.join(id).is_file() {
            return Ok(());
        }
        self.ensure_dir()?;
        let (temp_path, mut temp) = self.temp_file()?;
        let written = write(&mut temp).and_then(|()| temp.sync_all());
        drop(temp);
        if let Err(e) = written {
            let _ = fs::remove_file(&temp_path);
            return Err(artifact_error("write", &temp_path, e));
        }
        self.place(&temp_path, id)
    }

    /// Moves a finished temporary file to its content address, read-only.
    fn place(&self, temp_path: &Path, id: &str) -> Result<(), RuntimeError> {
        let target = self.dir.join(id);
        if target.is_file() {
            // Same bytes already stored: keep the first copy.
            let _ = fs::remove_file(temp_path);
            return Ok(());
        }
        let mut permissions = fs::metadata(temp_path)
            .map_err(|e| artifact_error("inspect", temp_path, e))?
            .permissions();
        permissions.set_readonly(true);
        fs::set_permissions(temp_path, permissions)
            .and_then(|()| fs::rename(temp_path, &target))
            .map_err(|e| {
                let _ = fs::remove_file(temp_path);
                artifact_error("store", &target, e)
            })
    }
}

/// The id inside a well-formed handle: exactly 32 lowercase hex digits, so
/// a handle can never name a path outside the store.
fn parse_handle(handle: &str) -> Option<&str> {
    let id = handle.strip_prefix(HANDLE_PREFIX)?;
    let well_formed = id.len() == ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    well_formed.then_some(id)
}

/// Whether `text` is shaped like an artifact handle.
#[must_use]
pub fn is_handle(text: &str) -> bool {
    text.starts_with(HANDLE_PREFIX)
}

fn id_of(digest: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut id = String::with_capacity(ID_LEN);
    for byte in digest.iter().take(ID_LEN / 2) {
        let _ = write!(id, "{byte:02x}");
    }
    id
}

fn reference(id: &str, size: u64, media_type: Option<&str>, name: Option<&str>) -> ArtifactRef {
    ArtifactRef {
        handle: format!("{HANDLE_PREFIX}{id}"),
        size,
        media_type: media_type.map(str::to_owned),
        name: name.map(str::to_owned),
    }
}

fn artifact_error(action: &'static str, path: &Path, source: io::Error) -> RuntimeError {
    RuntimeError::Artifact {
        action,
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_checked_before_they_touch_the_disk() {
        assert!(parse_handle("artifact://0123456789abcdef0123456789abcdef").is_some());
        for bad in [
            "artifact://../../etc/passwd",
            "artifact://0123456789ABCDEF0123456789ABCDEF",
            "artifact://0123",
            "file://0123456789abcdef0123456789abcdef",
        ] {
            assert!(parse_handle(bad).is_none(), "{bad}");
        }
    }
}
