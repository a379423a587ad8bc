//! The places inside a workspace the file tools never touch (hidden: the
//! agent's own files, its skills, the runtime's state) or only read
//! (read-only folders), judged by what the operating system opened, not
//! by the name the model gave: a file is checked after it is opened,
//! through the path the kernel holds for it (`/proc/self/fd` on Linux) and
//! its identity (device and inode, so a hard link to a hidden file is that
//! file), so a link or a swap between a check and an open cannot reach a
//! fenced place. Elsewhere the path the workspace resolved stands in.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock};

use iris_core::{ToolErrorKind, ToolResult};

use super::workspace::{self, WorkspacePath};

/// What the tools may do in a fenced place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Neither read nor write.
    Hidden,
    /// Read, never write.
    ReadOnly,
}

/// One fenced file or folder.
#[derive(Debug)]
struct Place {
    /// Absolute, as the OS resolves it (or as given when it does not
    /// exist yet).
    path: PathBuf,
    /// A file's device and inode, when it is a file that exists.
    identity: Option<(u64, u64)>,
    access: Access,
    why: String,
}

/// The fenced places of one workspace; places are only ever added.
#[derive(Debug, Default)]
pub(crate) struct Fence {
    places: RwLock<Vec<Place>>,
}

impl Fence {
    /// Fences `path` (a file or a folder, anywhere: one outside the
    /// workspace changes nothing the tools could reach) for `access`,
    /// saying `why` when a call is refused. Adding a place twice keeps the
    /// stricter access.
    pub(crate) fn add(&self, path: &Path, access: Access, why: String) {
        let resolved = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let identity = std::fs::metadata(&resolved)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .and_then(|meta| identity_of(&meta));
        let mut places = self.places.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(kept) = places.iter_mut().find(|p| p.path == resolved) {
            if access == Access::Hidden {
                kept.access = Access::Hidden;
                kept.why = why;
            }
            return;
        }
        places.push(Place {
            path: resolved,
            identity,
            access,
            why,
        });
    }

    /// Refuses reading `file`, opened for `path`, when it is hidden.
    pub(crate) fn check_read(
        &self,
        file: &File,
        path: &WorkspacePath,
        resolved: &Path,
    ) -> Result<(), ToolResult> {
        let places = self.places.read().unwrap_or_else(PoisonError::into_inner);
        if places.is_empty() {
            return Ok(());
        }
        let real = held_path(file).unwrap_or_else(|| resolved.to_path_buf());
        let meta = file.metadata().ok();
        let identity = meta.as_ref().and_then(identity_of);
        if let Some(place) = places
            .iter()
            .find(|p| p.access == Access::Hidden && p.covers(&real, identity))
        {
            return Err(hidden(path, place, &real));
        }
        // A file with other names may be one inside a hidden folder, under
        // a name outside it: look for it there.
        if let (Some(identity), true) = (identity, meta.as_ref().is_some_and(has_other_names)) {
            return match linked_into(&places, identity) {
                Linked::No => Ok(()),
                Linked::Into(place) => Err(workspace::refused(
                    &path.shown,
                    &format!(
                        "it is another name (a hard link) for a file in {}, which the file tools never read or write",
                        place.why
                    ),
                )),
                Linked::Unknown => Err(workspace::refused(
                    &path.shown,
                    "it has other names (hard links), and the folders the file tools never read are too large to tell whether one is there; read a copy instead",
                )),
            };
        }
        Ok(())
    }

    /// Refuses making folder `name` in `folder` (held open) for a write
    /// to `path`, when the new folder would lie in a fenced place.
    /// Where no system call says where `folder` is, `resolved` (the new
    /// folder's path as the workspace resolved it) stands in.
    pub(crate) fn check_new_folder(
        &self,
        folder: &cap_std::fs::Dir,
        name: &std::ffi::OsStr,
        path: &WorkspacePath,
        resolved: &Path,
    ) -> Result<(), ToolResult> {
        let real = held_dir_path(folder)
            .map_or_else(|| resolved.to_path_buf(), |folder| folder.join(name));
        self.refuse_write(path, &real, None)
    }

    /// Refuses a write to `path` (resolved to `resolved`) before anything
    /// is made for it (a missing folder is created only outside the
    /// fence); [`check_write`](Self::check_write) judges what was opened.
    pub(crate) fn check_planned_write(
        &self,
        path: &WorkspacePath,
        resolved: &Path,
    ) -> Result<(), ToolResult> {
        self.refuse_write(path, resolved, None)
    }

    /// Refuses writing the file `name` in `folder` (held open, for `path`)
    /// when it or the folder is fenced.
    pub(crate) fn check_write(
        &self,
        folder: &cap_std::fs::Dir,
        name: &std::ffi::OsStr,
        path: &WorkspacePath,
        resolved: &Path,
    ) -> Result<(), ToolResult> {
        let real = held_dir_path(folder)
            .map_or_else(|| resolved.to_path_buf(), |folder| folder.join(name));
        let identity = folder
            .metadata(name)
            .ok()
            .and_then(|meta| identity_of_cap(&meta));
        self.refuse_write(path, &real, identity)
    }

    fn refuse_write(
        &self,
        path: &WorkspacePath,
        real: &Path,
        identity: Option<(u64, u64)>,
    ) -> Result<(), ToolResult> {
        let places = self.places.read().unwrap_or_else(PoisonError::into_inner);
        match places.iter().find(|p| p.covers(real, identity)) {
            Some(place) if place.access == Access::Hidden => Err(hidden(path, place, real)),
            Some(place) => Err(ToolResult::error(
                ToolErrorKind::PermissionDenied,
                format!(
                    "`{}` is in a read-only folder ({}); it was not changed",
                    workspace_shown(path),
                    place.why
                ),
            )),
            None => Ok(()),
        }
    }
}

/// Most entries of hidden folders looked through for another name of one
/// file.
const MAX_LINK_SEARCH: usize = 20_000;

/// Whether a file is one in a hidden folder under another name.
enum Linked<'p> {
    No,
    Into(&'p Place),
    /// The folders hold too much to tell.
    Unknown,
}

/// Looks through every hidden folder for the file `identity`.
fn linked_into(places: &[Place], identity: (u64, u64)) -> Linked<'_> {
    let mut budget = MAX_LINK_SEARCH;
    for place in places
        .iter()
        .filter(|p| p.access == Access::Hidden && p.identity.is_none())
    {
        let mut folders = vec![place.path.clone()];
        while let Some(folder) = folders.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                if budget == 0 {
                    return Linked::Unknown;
                }
                budget -= 1;
                let Ok(meta) = entry.path().symlink_metadata() else {
                    continue;
                };
                if meta.is_dir() {
                    folders.push(entry.path());
                } else if meta.is_file() && identity_of(&meta) == Some(identity) {
                    return Linked::Into(place);
                }
            }
        }
    }
    Linked::No
}

#[cfg(unix)]
fn has_other_names(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    meta.nlink() > 1
}

#[cfg(not(unix))]
fn has_other_names(_meta: &std::fs::Metadata) -> bool {
    false
}

impl Place {
    /// Whether the file at `real` with `identity` is this place or lies
    /// beneath it.
    fn covers(&self, real: &Path, identity: Option<(u64, u64)>) -> bool {
        real.starts_with(&self.path) || (self.identity.is_some() && self.identity == identity)
    }
}

fn hidden(path: &WorkspacePath, place: &Place, real: &Path) -> ToolResult {
    let relation = if real == place.path {
        "it is"
    } else if real.starts_with(&place.path) {
        "it lies in"
    } else {
        "it is another name for"
    };
    workspace::refused(
        &path.shown,
        &format!(
            "{relation} {}, which the file tools never read or write",
            place.why
        ),
    )
}

fn workspace_shown(path: &WorkspacePath) -> String {
    iris_core::text::clip(&path.shown, 200).into_owned()
}

/// The path the kernel holds for an open file.
#[cfg(target_os = "linux")]
fn held_path(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd as _;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

#[cfg(not(target_os = "linux"))]
fn held_path(_file: &File) -> Option<PathBuf> {
    None
}

/// The path the kernel holds for an open folder.
#[cfg(target_os = "linux")]
fn held_dir_path(dir: &cap_std::fs::Dir) -> Option<PathBuf> {
    use std::os::fd::AsRawFd as _;
    std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd())).ok()
}

#[cfg(not(target_os = "linux"))]
fn held_dir_path(_dir: &cap_std::fs::Dir) -> Option<PathBuf> {
    None
}

#[cfg(unix)]
#[allow(
    clippy::unnecessary_wraps,
    reason = "elsewhere a file has no identity to give"
)]
fn identity_of(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity_of(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

#[cfg(unix)]
fn identity_of_cap(meta: &cap_std::fs::Metadata) -> Option<(u64, u64)> {
    use cap_std::fs::MetadataExt as _;
    meta.is_file().then(|| (meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity_of_cap(_meta: &cap_std::fs::Metadata) -> Option<(u64, u64)> {
    None
}
