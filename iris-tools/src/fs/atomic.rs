//! Atomic replacement of a file beneath the root, with no update lost.
//!
//! The new content goes to a temporary file in the same folder, created
//! with the final permissions under a name nobody can guess, is flushed to
//! disk, and is renamed over the target. Until the rename the old content
//! is untouched; a failure removes the temporary file.
//!
//! Writes to one file are serialized within the process (a lock per
//! folder and name, held from the load to the rename), so an edit always
//! starts from what the edit before it wrote. The target also holds an
//! advisory `flock` for the same span, which excludes other programs that
//! take it. Right before the rename the target is looked at again, and a
//! change since the load (by another program) refuses the write.
//!
//! What remains: a program that takes no lock and writes between that last
//! look and the rename, or that keeps a descriptor of the old file open and
//! writes through it after the rename, writes to a file that is no longer
//! the target. Atomic replacement cannot see those writes.

use std::ffi::OsString;
use std::hash::{BuildHasher as _, Hash as _, Hasher as _};
use std::io::Write;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use cap_std::fs::{Dir, MetadataExt as _, Permissions};
use iris_core::{ToolErrorKind, ToolResult};

use super::workspace::{WorkspacePath, io_refusal, refused};
use iris_runtime::artifacts::Identity;

/// Locks shared by every write of one service: a fixed number, so memory
/// stays bounded however many files are written; two files that share a
/// lock only wait for each other.
const WRITE_LOCKS: usize = 64;

/// How long a write waits for another program's `flock` on the target.
const FLOCK_PATIENCE: Duration = Duration::from_secs(5);

/// The in-process write locks of a [`FileService`](super::FileService).
#[derive(Debug)]
pub(crate) struct WriteLocks {
    locks: Vec<Mutex<()>>,
    hasher: std::collections::hash_map::RandomState,
}

impl Default for WriteLocks {
    fn default() -> Self {
        Self {
            locks: (0..WRITE_LOCKS).map(|_| Mutex::new(())).collect(),
            hasher: std::collections::hash_map::RandomState::new(),
        }
    }
}

impl WriteLocks {
    /// Waits for and takes the lock of `target`.
    pub(crate) fn lock(&self, target: &Target) -> MutexGuard<'_, ()> {
        let mut hasher = self.hasher.build_hasher();
        target.folder_identity.hash(&mut hasher);
        target.name.hash(&mut hasher);
        let slot = usize::try_from(hasher.finish() % WRITE_LOCKS as u64).unwrap_or(0);
        self.locks[slot]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The file a write replaces: its folder, held open, and its name there.
pub(crate) struct Target {
    folder: Dir,
    name: OsString,
    folder_identity: Identity,
}

/// What the target looked like when it was loaded; a write proceeds only
/// while it still looks so.
pub(crate) type Stamp = iris_runtime::__wings::FileStamp;

impl Target {
    /// Opens the folder of `path` (made beforehand where the write may
    /// make it).
    pub(crate) fn open(root: &Dir, path: &WorkspacePath) -> Result<Self, ToolResult> {
        let Some(name) = path.relative.file_name() else {
            return Err(refused(&path.shown, "it does not end in a file name"));
        };
        let folder = match path.relative.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => {
                root.open_dir(parent).map_err(|e| io_refusal(path, &e))?
            }
            _ => root.try_clone().map_err(|e| io_refusal(path, &e))?,
        };
        let meta = folder.dir_metadata().map_err(|e| io_refusal(path, &e))?;
        // A rename would replace the link itself and leave the file it
        // points to as it was, while the model is told the file changed.
        if folder
            .symlink_metadata(name)
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(refused(
                &path.shown,
                "it is a symlink; write to the file it points to instead",
            ));
        }
        Ok(Self {
            folder_identity: (meta.dev(), meta.ino()),
            folder,
            name: name.to_owned(),
        })
    }

    /// The identity of the folder the file is in.
    pub(crate) fn folder_identity(&self) -> Identity {
        self.folder_identity
    }

    /// The file's name in its folder.
    pub(crate) fn name(&self) -> &std::ffi::OsStr {
        &self.name
    }

    /// The folder the file is in.
    pub(crate) fn folder(&self) -> &Dir {
        &self.folder
    }

    /// Writes `bytes` to a temporary file with `permissions` (or the
    /// default for a new file), then — if `unchanged` still holds right
    /// before — renames it over the target.
    pub(crate) fn replace(
        &self,
        path: &WorkspacePath,
        bytes: &[u8],
        permissions: Option<Permissions>,
        unchanged: impl FnOnce() -> Result<(), ToolResult>,
    ) -> Result<(), ToolResult> {
        let stem = self.name.to_string_lossy();
        // The copy is never more open than the file it replaces, not even
        // while it is being written.
        #[cfg(unix)]
        let mode = permissions.as_ref().map(|permissions| {
            use cap_std::fs::PermissionsExt as _;
            permissions.mode() & 0o7777
        });
        #[cfg(not(unix))]
        let mode = None;
        let (temp, mut file) = iris_runtime::__wings::create_temp(&self.folder, &stem, mode)
            .map_err(|e| io_refusal(path, &e))?;
        let written = file
            .write_all(bytes)
            .and_then(|()| file.sync_all())
            .and_then(|()| match permissions {
                // Applied again: the creation mode is narrowed by the umask.
                Some(permissions) => permissions
                    .into_std(&file)
                    .and_then(|permissions| file.set_permissions(permissions)),
                None => Ok(()),
            });
        drop(file);
        if let Err(e) = written {
            let _ = self.folder.remove_file(&temp);
            return Err(io_refusal(path, &e));
        }
        if let Err(stale) = unchanged() {
            let _ = self.folder.remove_file(&temp);
            return Err(stale);
        }
        iris_runtime::__wings::rename_into_place(&self.folder, &temp, &self.name)
            .map_err(|e| io_refusal(path, &e))
    }
}

/// Removes temporary files that processes no longer running left in
/// `folder` (killed in the middle of a write). Files of live processes,
/// this one included, are left alone: they may be writing them now.
#[cfg(unix)]
pub(crate) fn sweep_stale(folder: &Dir) {
    let Ok(entries) = folder.entries() else {
        return;
    };
    let us = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name.to_str().and_then(iris_runtime::__wings::temp_owner) else {
            continue;
        };
        let Ok(pid) = i32::try_from(owner) else {
            continue;
        };
        let gone = owner != us
            && nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
                == Err(nix::errno::Errno::ESRCH);
        if gone && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = folder.remove_file(&name);
        }
    }
}

#[cfg(not(unix))]
pub(crate) fn sweep_stale(_folder: &Dir) {}

/// An advisory exclusive lock on an open file, released when dropped;
/// empty where the file system has no `flock`.
pub(crate) struct FileLock {
    #[cfg(unix)]
    _held: Option<nix::fcntl::Flock<std::fs::File>>,
}

/// Takes an exclusive `flock` on `file`, waiting up to [`FLOCK_PATIENCE`]
/// for a program that holds it.
#[cfg(unix)]
pub(crate) fn lock_file(file: &std::fs::File, shown: &str) -> Result<FileLock, ToolResult> {
    use nix::errno::Errno;
    use nix::fcntl::{Flock, FlockArg};
    let started = Instant::now();
    let mut file = file.try_clone().map_err(|e| {
        ToolResult::error(
            ToolErrorKind::Execution,
            format!("cannot lock `{shown}`: {e}"),
        )
    })?;
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => return Ok(FileLock { _held: Some(lock) }),
            Err((back, Errno::EWOULDBLOCK)) if started.elapsed() < FLOCK_PATIENCE => {
                file = back;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err((_, Errno::EWOULDBLOCK)) => {
                return Err(ToolResult::error(
                    ToolErrorKind::Execution,
                    format!(
                        "`{shown}` is locked by another program that is writing it; nothing was changed; try again later"
                    ),
                ));
            }
            // A file system without flock: the in-process lock and the
            // re-check before the rename still hold.
            Err(_) => return Ok(FileLock { _held: None }),
        }
    }
}

#[cfg(not(unix))]
pub(crate) fn lock_file(_file: &std::fs::File, _shown: &str) -> Result<FileLock, ToolResult> {
    Ok(FileLock {})
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn workspace(name: &str) -> (PathBuf, Dir) {
        let temp = std::env::temp_dir().join(format!("iris-atomic-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&temp);
        std::fs::create_dir_all(&temp).unwrap();
        let root = Dir::open_ambient_dir(&temp, cap_std::ambient_authority()).unwrap();
        (temp, root)
    }

    fn path(name: &str) -> WorkspacePath {
        WorkspacePath {
            relative: PathBuf::from(name),
            key: PathBuf::from(name),
            shown: name.into(),
        }
    }

    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A rename that fails (here onto a folder) leaves the target as it
    /// was and no temporary file behind.
    #[test]
    fn a_failed_write_leaves_the_old_content_and_no_litter() {
        let (temp, root) = workspace("failed");
        std::fs::create_dir_all(temp.join("target/kept")).unwrap();
        let target = Target::open(&root, &path("target")).unwrap();
        let result = target.replace(&path("target"), b"new", None, || Ok(()));
        assert!(result.is_err());
        assert!(temp.join("target/kept").is_dir());
        assert_eq!(names(&temp), ["target"]);
        std::fs::remove_dir_all(&temp).unwrap();
    }

    /// A change found right before the rename keeps the old file and
    /// leaves no temporary file.
    #[test]
    fn a_failed_recheck_writes_nothing() {
        let (temp, root) = workspace("recheck");
        std::fs::write(temp.join("a.txt"), "old").unwrap();
        let target = Target::open(&root, &path("a.txt")).unwrap();
        let stale = ToolResult::error(ToolErrorKind::StaleRead, "moved");
        let result = target.replace(&path("a.txt"), b"new", None, || Err(stale));
        assert!(result.is_err());
        assert_eq!(std::fs::read_to_string(temp.join("a.txt")).unwrap(), "old");
        assert_eq!(names(&temp), ["a.txt"]);
        std::fs::remove_dir_all(&temp).unwrap();
    }

    /// Temporary files of processes that no longer run are removed; those
    /// of this process and unrelated files stay.
    #[cfg(unix)]
    #[test]
    fn stale_temporary_files_of_dead_processes_are_swept() {
        let (temp, root) = workspace("sweep");
        // Pid 2^22 + 1 is above Linux's largest pid, so nothing runs as it.
        let dead = ".a.txt.4194305-0123456789abcdef.iris-tmp";
        let ours = iris_runtime::__wings::temp_name("a.txt");
        for name in [dead, ours.as_str(), "a.txt", ".hidden"] {
            std::fs::write(temp.join(name), "x").unwrap();
        }
        sweep_stale(&root);
        let mut expected = vec![".hidden".to_owned(), ours, "a.txt".to_owned()];
        expected.sort();
        assert_eq!(names(&temp), expected);
        std::fs::remove_dir_all(&temp).unwrap();
    }
}
