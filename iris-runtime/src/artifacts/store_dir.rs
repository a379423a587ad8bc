//! Opening the store's folder so that nothing in it can lead elsewhere: the
//! folder is held open, its own path must not run through a symlink the
//! workspace could plant, and it must belong to this user.

use std::io;
use std::path::Path;

use cap_std::fs::{Dir, MetadataExt as _};

/// A file's or folder's identity: device and inode.
pub type Identity = (u64, u64);

/// Why the store's folder was refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreDirError {
    #[error(
        "`{name}` is a symlink; the artifact store never follows links, so make it a real folder or choose another store"
    )]
    Symlink { name: String },
    #[error("`{name}` is not a folder")]
    NotAFolder { name: String },
    #[error(
        "`{name}` belongs to user {owner}, not to this process's user {us}; choose a store folder of your own"
    )]
    Foreign { name: String, owner: u32, us: u32 },
    #[error("`{name}` changed while it was opened; try again")]
    Swapped { name: String },
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Opens (creating it when missing) the folder `name` inside `parent`,
/// refusing a symlink, anything but a folder, and a folder of another user.
/// A folder swapped for a link between the check and the open is caught
/// by comparing identities.
pub(crate) fn open_child(parent: &Dir, name: &str) -> Result<Dir, StoreDirError> {
    let found = match parent.symlink_metadata(name) {
        Ok(found) => found,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            match parent.create_dir(name) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e.into()),
            }
            parent.symlink_metadata(name)?
        }
        Err(e) => return Err(e.into()),
    };
    if found.file_type().is_symlink() {
        return Err(StoreDirError::Symlink { name: name.into() });
    }
    if !found.is_dir() {
        return Err(StoreDirError::NotAFolder { name: name.into() });
    }
    let dir = parent.open_dir(name)?;
    let opened = dir.dir_metadata()?;
    if (opened.dev(), opened.ino()) != (found.dev(), found.ino()) {
        return Err(StoreDirError::Swapped { name: name.into() });
    }
    check_owner(&opened, name)?;
    Ok(dir)
}

/// Opens (creating it when missing) a folder the host named by its full
/// path: its parent is trusted as the host's choice, its last part is held
/// to the same rules as [`open_child`].
pub(crate) fn open_path(path: &Path) -> Result<Dir, StoreDirError> {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent)?;
    let parent = Dir::open_ambient_dir(parent, cap_std::ambient_authority())?;
    let name =
        path.file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| StoreDirError::NotAFolder {
                name: path.display().to_string(),
            })?;
    open_child(&parent, name)
}

/// The identity of an open folder.
pub(crate) fn identity(dir: &Dir) -> io::Result<Identity> {
    let meta = dir.dir_metadata()?;
    Ok((meta.dev(), meta.ino()))
}

#[cfg(unix)]
fn check_owner(meta: &cap_std::fs::Metadata, name: &str) -> Result<(), StoreDirError> {
    let us = nix::unistd::geteuid().as_raw();
    let owner = meta.uid();
    // Root may use any folder; anyone else only their own.
    if owner != us && us != 0 {
        return Err(StoreDirError::Foreign {
            name: name.into(),
            owner,
            us,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_owner(_meta: &cap_std::fs::Metadata, _name: &str) -> Result<(), StoreDirError> {
    Ok(())
}
