//! The artifact store: where oversized results are saved whole and where
//! tools publish the files they produce.
//!
//! Artifacts are content-addressed under a key of the store's own (the
//! handle is `artifact://` followed by the first 32 hex digits of an
//! HMAC-SHA256 of the body, so it confirms no guessed body), written atomically
//! (temporary file in the store's folder, created read-only under a name
//! nobody can guess, flushed, renamed) and checked against their address
//! when opened, so a handle opens the bytes it was given for or nothing.
//! The same body saved or published twice is stored once.
//!
//! The store's folder is held open once used; everything in it is reached
//! beneath it without following links. A folder that is a symlink, or that
//! belongs to another user, is refused; so is an artifact that is a link, a
//! FIFO, a device or anything but a regular file.
//!
//! With feature `object-store`, [`ArtifactStore::object_store`] keeps them
//! in any `object_store` backend (S3 and compatible services, GCS, Azure)
//! instead, for replicas on many machines: the same addresses, written
//! create-if-absent, checked against their address when opened.

mod address;
mod preview;
#[cfg(feature = "object-store")]
mod remote;
pub mod scope;
mod store_dir;

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek as _, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use cap_std::fs::{Dir, OpenOptions};
use iris_core::ArtifactRef;

use crate::error::RuntimeError;
use crate::temp_file::{FileStamp, create_temp, rename_into_place};
use address::{AddressKey, BodyHasher, KEY_NAME};

#[cfg(feature = "object-store")]
pub use object_store;
pub(crate) use preview::fits;
pub use preview::{DEFAULT_MAX_RESULT_CHARS, PreviewPolicy, apply_result_policy};
#[cfg(feature = "object-store")]
pub use remote::{MAX_REMOTE_ARTIFACT_BYTES, REMOTE_TIMEOUT};
pub use store_dir::Identity;

/// The scheme of artifact handles.
pub const HANDLE_PREFIX: &str = "artifact://";

/// Hex digits of the SHA-256 kept in a handle: 128 bits.
const ID_LEN: usize = 32;

/// Where artifacts of a workspace live unless the host picks a folder.
pub const DEFAULT_ARTIFACT_DIR: &str = ".iris/artifacts";

/// Artifacts whose check against their address is remembered; past this
/// the memory is cleared and artifacts are checked again when next opened.
const MAX_VERIFIED: usize = 4096;

/// Saves bodies and published files; opens them again by handle.
///
/// Cheap to clone; clones share the open folder.
#[derive(Debug, Clone)]
pub struct ArtifactStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The store's folder, for messages.
    path: PathBuf,
    location: Location,
    /// The folder, once opened (it is created on first use).
    dir: Mutex<Option<Arc<Dir>>>,
    /// Artifacts already checked against their address, with the file's
    /// state then: any change to the file changes its ctime.
    verified: Mutex<HashMap<String, FileStamp>>,
    /// What addresses are keyed with, once read or made.
    key: Mutex<Option<AddressKey>>,
}

#[derive(Debug)]
enum Location {
    /// A folder the host named.
    Path,
    /// `.iris/artifacts` beneath a workspace root.
    Workspace(PathBuf),
    /// A prefix in an object store.
    #[cfg(feature = "object-store")]
    Object(remote::Remote),
}

/// An artifact opened for reading: the file of a local store, or the bytes
/// an object store gave, checked against their address.
#[derive(Debug)]
pub struct Artifact(Opened);

#[derive(Debug)]
enum Opened {
    File(File),
    #[cfg(feature = "object-store")]
    Bytes(io::Cursor<Vec<u8>>),
}

impl Read for Artifact {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.0 {
            Opened::File(file) => file.read(buf),
            #[cfg(feature = "object-store")]
            Opened::Bytes(bytes) => bytes.read(buf),
        }
    }
}

impl io::Seek for Artifact {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        match &mut self.0 {
            Opened::File(file) => file.seek(pos),
            #[cfg(feature = "object-store")]
            Opened::Bytes(bytes) => bytes.seek(pos),
        }
    }
}

impl ArtifactStore {
    /// A store in `dir`, created on first use. The folder must not be a
    /// symlink and must belong to this process's user.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self::with_location(dir.into(), Location::Path)
    }

    /// The store a workspace uses by default: `<root>/.iris/artifacts`,
    /// reached beneath the root with neither `.iris` nor `artifacts` a
    /// symlink.
    pub fn in_workspace(root: impl AsRef<Path>) -> Self {
        let root = root.as_ref();
        Self::with_location(
            root.join(DEFAULT_ARTIFACT_DIR),
            Location::Workspace(root.to_path_buf()),
        )
    }

    /// A store in `store` under `prefix` (for example
    /// `runs/artifacts`): every replica given the same store and prefix
    /// opens the artifacts of the others. Artifacts are written
    /// create-if-absent and checked against their address when opened;
    /// each passes through memory whole, at most
    /// [`MAX_REMOTE_ARTIFACT_BYTES`].
    #[cfg(feature = "object-store")]
    #[must_use]
    pub fn object_store(store: Arc<dyn object_store::ObjectStore>, prefix: &str) -> Self {
        let remote = remote::Remote::new(store, prefix);
        Self::with_location(remote.label(), Location::Object(remote))
    }

    fn with_location(path: PathBuf, location: Location) -> Self {
        Self {
            inner: Arc::new(Inner {
                path,
                location,
                dir: Mutex::new(None),
                verified: Mutex::new(HashMap::new()),
                key: Mutex::new(None),
            }),
        }
    }

    /// The folder holding the artifacts.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.inner.path
    }

    /// Saves `body` whole and returns its reference.
    ///
    /// # Errors
    /// [`RuntimeError::ArtifactStoreRefused`] when the store's folder is a
    /// symlink or another user's; [`RuntimeError::Artifact`] when the store
    /// cannot be written.
    pub fn save(
        &self,
        body: &[u8],
        media_type: Option<&str>,
        name: Option<&str>,
    ) -> Result<ArtifactRef, RuntimeError> {
        let id = self.key()?.address(body);
        #[cfg(feature = "object-store")]
        if let Location::Object(remote) = &self.inner.location {
            remote.put_if_absent(&id, body.to_vec())?;
            return Ok(reference(&id, body.len() as u64, media_type, name));
        }
        let dir = self.folder()?;
        if !self.holds(&dir, &id) {
            let (temp, mut file) = self.create_temp(&dir)?;
            let written = file.write_all(body).and_then(|()| file.sync_all());
            drop(file);
            if let Err(e) = written {
                let _ = dir.remove_file(&temp);
                return Err(self.error("write", &temp, e));
            }
            self.place(&dir, &temp, &id)?;
        }
        Ok(reference(&id, body.len() as u64, media_type, name))
    }

    /// Publishes the file at `source`: the store keeps its own immutable
    /// copy, so later changes to `source` do not change what the handle
    /// opens. The file is streamed, never held in memory whole.
    ///
    /// # Errors
    /// [`RuntimeError::Artifact`] when `source` cannot be read or the store
    /// cannot be written; [`RuntimeError::ArtifactStoreRefused`] as for
    /// [`save`](Self::save).
    pub fn publish_file(
        &self,
        source: &Path,
        media_type: Option<&str>,
    ) -> Result<ArtifactRef, RuntimeError> {
        let file = File::open(source).map_err(|source_error| RuntimeError::Artifact {
            action: "open",
            path: source.to_path_buf(),
            source: source_error,
        })?;
        let name = source.file_name().and_then(|n| n.to_str());
        self.publish_reader(file, media_type, name)
    }

    /// Publishes what `reader` yields, streamed through a temporary file
    /// while it is hashed.
    ///
    /// # Errors
    /// [`RuntimeError::Artifact`] when reading or writing fails;
    /// [`RuntimeError::ArtifactStoreRefused`] as for [`save`](Self::save).
    pub fn publish_reader(
        &self,
        mut reader: impl Read,
        media_type: Option<&str>,
        name: Option<&str>,
    ) -> Result<ArtifactRef, RuntimeError> {
        #[cfg(feature = "object-store")]
        if let Location::Object(remote) = &self.inner.location {
            let mut body = Vec::new();
            let limit = remote::MAX_REMOTE_ARTIFACT_BYTES;
            reader
                .take(limit + 1)
                .read_to_end(&mut body)
                .map_err(|e| self.error("read", "published file", e))?;
            if body.len() as u64 > limit {
                return Err(remote::too_large("published file", body.len() as u64));
            }
            let id = self.key()?.address(&body);
            let size = body.len() as u64;
            remote.put_if_absent(&id, body)?;
            return Ok(reference(&id, size, media_type, name));
        }
        let dir = self.folder()?;
        let key = self.key()?;
        let (temp, mut file) = self.create_temp(&dir)?;
        let copied = (|| {
            let mut hasher = key.hasher();
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
                file.write_all(&buf[..n])?;
                size += n as u64;
            }
            file.sync_all()?;
            Ok((hasher.address(), size))
        })();
        drop(file);
        let (id, size) = match copied {
            Ok(done) => done,
            Err(e) => {
                let _ = dir.remove_file(&temp);
                return Err(self.error("write", &temp, e));
            }
        };
        if self.holds(&dir, &id) {
            let _ = dir.remove_file(&temp);
        } else {
            self.place(&dir, &temp, &id)?;
        }
        Ok(reference(&id, size, media_type, name))
    }

    /// Opens the artifact behind `handle` for reading, after checking that
    /// it is a regular file (not a link, FIFO or device) whose content still
    /// matches its address.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidArtifactHandle`] for a handle of another form;
    /// [`RuntimeError::ArtifactRefused`] for an artifact that is not a
    /// regular file or whose content changed; [`RuntimeError::Artifact`]
    /// when it cannot be opened (for example it does not exist).
    pub fn open(&self, handle: &str) -> Result<Artifact, RuntimeError> {
        let id = parse_handle(handle).ok_or_else(|| RuntimeError::InvalidArtifactHandle {
            handle: crate::echo::shorten(handle).into_owned(),
        })?;
        #[cfg(feature = "object-store")]
        if let Location::Object(remote) = &self.inner.location {
            let bytes = remote.get(id)?;
            let mut hasher = self.key()?.hasher();
            hasher.update(&bytes);
            if !hasher.matches(id) {
                return Err(refused(
                    id,
                    "its content no longer matches its address: it was changed after it was saved",
                ));
            }
            return Ok(Artifact(Opened::Bytes(io::Cursor::new(bytes))));
        }
        let dir = self.folder()?;
        let mut file = open_artifact(&dir, id).map_err(|e| self.open_error(id, e))?;
        let meta =
            cap_std::fs::Metadata::from_file(&file).map_err(|e| self.error("inspect", id, e))?;
        if !meta.is_file() {
            return Err(refused(
                id,
                "it is not a regular file but a FIFO, socket or device",
            ));
        }
        if !self.verified(id, &meta, &mut file)? {
            return Err(refused(
                id,
                "its content no longer matches its address: it was changed after it was saved",
            ));
        }
        file.rewind().map_err(|e| self.error("open", id, e))?;
        #[cfg(unix)]
        crate::nonblocking::clear_nonblocking(&file);
        Ok(Artifact(Opened::File(file)))
    }

    /// The file that holds the artifact behind `handle`. Opening it by this
    /// path skips the checks [`open`](Self::open) makes.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidArtifactHandle`] for a handle of another form;
    /// [`RuntimeError::Artifact`] for a store in an object store, whose
    /// artifacts have no local file.
    pub fn path_of(&self, handle: &str) -> Result<PathBuf, RuntimeError> {
        let id = parse_handle(handle).ok_or_else(|| RuntimeError::InvalidArtifactHandle {
            handle: crate::echo::shorten(handle).into_owned(),
        })?;
        #[cfg(feature = "object-store")]
        if let Location::Object(_) = &self.inner.location {
            return Err(self.error(
                "locate",
                id,
                io::Error::new(
                    io::ErrorKind::Unsupported,
                    "artifacts in an object store have no local file; read them with `open`",
                ),
            ));
        }
        Ok(self.inner.path.join(id))
    }

    /// Opens the store's folder if it exists already, so a symlinked or
    /// foreign store is refused up front rather than at the first save.
    ///
    /// # Errors
    /// [`RuntimeError::ArtifactStoreRefused`] as for [`save`](Self::save).
    pub fn check_existing(&self) -> Result<(), RuntimeError> {
        if self.is_remote() {
            return Ok(());
        }
        if self.exists() {
            self.folder()?;
        }
        Ok(())
    }

    /// The identity (device, inode) of the store's folder, when it exists
    /// (opening it): the file tools refuse to write into the store.
    #[must_use]
    pub fn existing_identity(&self) -> Option<Identity> {
        if self.is_remote() || !self.exists() {
            return None;
        }
        let dir = self.folder().ok()?;
        store_dir::identity(&dir).ok()
    }

    /// Whether the artifacts live in an object store (no local folder).
    fn is_remote(&self) -> bool {
        !matches!(self.inner.location, Location::Path | Location::Workspace(_))
    }

    /// Whether the folder is open or there is something at its path.
    fn exists(&self) -> bool {
        let opened = self
            .inner
            .dir
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some();
        opened
            || std::fs::symlink_metadata(&self.inner.path).is_ok()
            || matches!(&self.inner.location, Location::Workspace(root)
                if std::fs::symlink_metadata(root.join(".iris")).is_ok())
    }

    /// What the store's addresses are keyed with: read once, or made on
    /// first use (random; kept as a file of the store's folder readable
    /// by its owner only, or an object beside an object store's artifacts,
    /// written create-if-absent so that replicas agree).
    fn key(&self) -> Result<AddressKey, RuntimeError> {
        let mut slot = self
            .inner
            .key
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(key) = slot.as_ref() {
            return Ok(key.clone());
        }
        #[cfg(feature = "object-store")]
        if let Location::Object(remote) = &self.inner.location {
            let made = AddressKey::random().map_err(|e| self.error("make", KEY_NAME, e))?;
            remote.put_if_absent(KEY_NAME, made.bytes().to_vec())?;
            let kept = remote.get(KEY_NAME)?;
            let key = AddressKey::from_bytes(&kept)
                .ok_or_else(|| refused(KEY_NAME, "the store's address key is damaged"))?;
            *slot = Some(key.clone());
            return Ok(key);
        }
        let dir = self.folder()?;
        let key = local_key(&dir).map_err(|e| self.error("keep", KEY_NAME, e))?;
        *slot = Some(key.clone());
        Ok(key)
    }

    /// The folder, opened (and created) on first use and held open after.
    fn folder(&self) -> Result<Arc<Dir>, RuntimeError> {
        let mut slot = self
            .inner
            .dir
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(dir) = slot.as_ref() {
            return Ok(Arc::clone(dir));
        }
        let opened = match &self.inner.location {
            Location::Path => store_dir::open_path(&self.inner.path),
            Location::Workspace(root) => Dir::open_ambient_dir(root, cap_std::ambient_authority())
                .map_err(store_dir::StoreDirError::from)
                .and_then(|root| store_dir::open_child(&root, ".iris"))
                .and_then(|iris| store_dir::open_child(&iris, "artifacts")),
            #[cfg(feature = "object-store")]
            Location::Object(_) => {
                return Err(RuntimeError::ArtifactStoreRefused {
                    path: self.inner.path.clone(),
                    reason: "it lives in an object store and has no local folder".to_owned(),
                });
            }
        };
        let dir = Arc::new(opened.map_err(|e| RuntimeError::ArtifactStoreRefused {
            path: self.inner.path.clone(),
            reason: e.to_string(),
        })?);
        *slot = Some(Arc::clone(&dir));
        Ok(dir)
    }

    /// Whether `id` is stored whole and unchanged.
    fn holds(&self, dir: &Dir, id: &str) -> bool {
        let Ok(mut file) = open_artifact(dir, id) else {
            return false;
        };
        let Ok(meta) = cap_std::fs::Metadata::from_file(&file) else {
            return false;
        };
        meta.is_file() && matches!(self.verified(id, &meta, &mut file), Ok(true))
    }

    /// Whether the content of `file` matches `id`, hashing it only when it
    /// changed since it was last found to.
    fn verified(
        &self,
        id: &str,
        meta: &cap_std::fs::Metadata,
        file: &mut File,
    ) -> Result<bool, RuntimeError> {
        let stamp = FileStamp::of(meta);
        let known = |verified: &HashMap<String, FileStamp>| verified.get(id) == Some(&stamp);
        if known(
            &self
                .inner
                .verified
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        ) {
            return Ok(true);
        }
        let mut hasher = self.key()?.hasher();
        hash_reader(file, &mut hasher).map_err(|e| self.error("read", id, e))?;
        let matches = hasher.matches(id);
        if matches {
            let mut verified = self
                .inner
                .verified
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if verified.len() >= MAX_VERIFIED {
                verified.clear();
            }
            verified.insert(id.to_owned(), stamp);
        }
        Ok(matches)
    }

    /// A new read-only temporary file in the store's folder.
    fn create_temp(&self, dir: &Dir) -> Result<(String, File), RuntimeError> {
        create_temp(dir, "artifact", Some(0o444)).map_err(|e| self.error("create", "artifact", e))
    }

    /// Moves a finished temporary file to its content address. A link or
    /// special file planted at the address is replaced, never followed.
    fn place(&self, dir: &Dir, temp: &str, id: &str) -> Result<(), RuntimeError> {
        rename_into_place(dir, temp, id).map_err(|e| self.error("store", id, e))
    }

    fn error(&self, action: &'static str, name: &str, source: io::Error) -> RuntimeError {
        RuntimeError::Artifact {
            action,
            path: self.inner.path.join(name),
            source,
        }
    }

    fn open_error(&self, id: &str, error: io::Error) -> RuntimeError {
        #[cfg(unix)]
        if error.raw_os_error() == Some(nix::libc::ELOOP) {
            return refused(id, "it is a symlink, and the store never follows links");
        }
        self.error("open", id, error)
    }
}

/// Opens `id` beneath the store without following a link at its name and
/// without waiting on a FIFO.
fn open_artifact(dir: &Dir, id: &str) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt as _;
        options.custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY);
    }
    dir.open_with(id, &options).map(cap_std::fs::File::into_std)
}

/// The key of the local store `dir`, made when it has none: written whole
/// to a temporary file first, then linked to its name, so a second process
/// never reads half a key and two makers agree on the first.
fn local_key(dir: &Dir) -> io::Result<AddressKey> {
    match read_local_key(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        read => return read,
    }
    let key = AddressKey::random()?;
    let (temp, mut file) = create_temp(dir, "key", Some(0o400))?;
    let written = file.write_all(key.bytes()).and_then(|()| file.sync_all());
    drop(file);
    let linked = written.and_then(|()| dir.hard_link(&temp, dir, KEY_NAME));
    let _ = dir.remove_file(&temp);
    match linked {
        Ok(()) => Ok(key),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => read_local_key(dir),
        Err(e) => Err(e),
    }
}

fn read_local_key(dir: &Dir) -> io::Result<AddressKey> {
    let mut file = open_artifact(dir, KEY_NAME)?;
    let mut bytes = Vec::with_capacity(address::KEY_LEN);
    Read::by_ref(&mut file)
        .take(address::KEY_LEN as u64 + 1)
        .read_to_end(&mut bytes)?;
    AddressKey::from_bytes(&bytes).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the store's address key is damaged (not 64 bytes); remove it only with every artifact it addressed",
        )
    })
}

/// Hashes everything `reader` yields, read in blocks.
fn hash_reader(reader: &mut impl Read, hasher: &mut BodyHasher) -> io::Result<()> {
    let mut buf = vec![0_u8; 64 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn refused(id: &str, reason: &'static str) -> RuntimeError {
    RuntimeError::ArtifactRefused {
        handle: format!("{HANDLE_PREFIX}{id}"),
        reason,
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
