//! Reading a file beneath a folder the way every wing does: opened once,
//! resolved beneath the folder by the operating system (`cap-std`:
//! `openat2` with `RESOLVE_BENEATH` on Linux), never following a link out,
//! without waiting on a FIFO, and refused unless it is a regular file with
//! no other name (a hard link to a file elsewhere is that file). The file
//! tools, skills and agent files share it, so none checks a path and then
//! opens another.

use std::fs::File;
use std::io;
use std::path::Path;

use cap_std::fs::{Dir, OpenOptions};

/// Why a file beneath a folder was not opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BeneathError {
    /// The folder itself could not be opened.
    #[error("its folder cannot be opened: {0}")]
    Folder(#[source] io::Error),
    /// It leads out of the folder (through `..` or a link).
    #[error("it leads out of its folder (through `..` or a link)")]
    Outside,
    /// It does not exist.
    #[error("it does not exist")]
    Missing,
    /// It is a folder.
    #[error("it is a folder, not a file")]
    Directory,
    /// It is a FIFO, a socket or a device.
    #[error("it is not a regular file but a FIFO, socket or device")]
    NotRegular,
    /// It has other names: it may be a file from elsewhere.
    #[error(
        "it has other names (hard links), so it may be a file from elsewhere; only files of the folder's own are read"
    )]
    OtherNames,
    /// Opening or inspecting it failed otherwise.
    #[error("it cannot be opened: {0}")]
    Io(#[source] io::Error),
}

/// Whether a file with other names (hard links) may be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HardLinks {
    /// Refused: a hard link to a file elsewhere is that file. For folders
    /// that hold only their own files (skills, agent files).
    Refuse,
    /// Opened: a workspace may hold hard links of its own (package caches
    /// do), and the file tools fence their hidden folders themselves.
    Allow,
}

/// Opens the regular file `relative` beneath `folder` for reading,
/// refusing one with other names.
///
/// # Errors
/// [`BeneathError`], saying what was wrong.
pub fn open_beneath(folder: &Path, relative: &Path) -> Result<File, BeneathError> {
    let dir = Dir::open_ambient_dir(folder, cap_std::ambient_authority())
        .map_err(BeneathError::Folder)?;
    open_in(&dir, relative, HardLinks::Refuse)
}

/// Opens the regular file `relative` beneath the open folder `dir` for
/// reading: resolved by the operating system beneath it, never waiting on
/// a FIFO, and, with [`HardLinks::Refuse`], never a file with other names.
///
/// # Errors
/// [`BeneathError`], saying what was wrong; [`BeneathError::Io`] keeps the
/// operating system's own error for the caller to word.
pub fn open_in(dir: &Dir, relative: &Path, hard_links: HardLinks) -> Result<File, BeneathError> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt as _;
        // Opening a FIFO for reading would wait for a writer; a device such
        // as a terminal must not become the controlling one.
        options.custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY);
    }
    let file = dir
        .open_with(relative, &options)
        .map_err(|error| match error.kind() {
            io::ErrorKind::NotFound => BeneathError::Missing,
            io::ErrorKind::PermissionDenied if error.to_string().contains("outside") => {
                BeneathError::Outside
            }
            _ => BeneathError::Io(error),
        })?
        .into_std();
    let metadata = file.metadata().map_err(BeneathError::Io)?;
    if metadata.is_dir() {
        return Err(BeneathError::Directory);
    }
    if !metadata.is_file() {
        return Err(BeneathError::NotRegular);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if hard_links == HardLinks::Refuse && metadata.nlink() > 1 {
            return Err(BeneathError::OtherNames);
        }
        crate::nonblocking::clear_nonblocking(&file);
    }
    Ok(file)
}
