//! Temporary files written beside their target and renamed over it, the
//! one way Iris writes a file whole (artifacts, the file tools): names
//! nobody can guess in advance (a name planted beforehand can neither
//! block a write nor catch its content), created fresh, never opened
//! through a link, and a stamp that says whether a file changed since it
//! was looked at.

use std::hash::{BuildHasher as _, Hasher as _};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, MetadataExt as _, OpenOptions};

/// The ending every temporary file of Iris carries; `read_file` refuses
/// names with it, and leftovers of dead processes are recognised by it.
pub const TEMP_SUFFIX: &str = ".iris-tmp";

/// `.{stem}.{pid}-{64 random bits}.iris-tmp`. The bits come from the
/// standard library's randomly keyed hasher over a counter and the clock,
/// so they differ per call and cannot be predicted from outside.
pub fn temp_name(stem: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(now.as_nanos());
    }
    // Short enough that a long target name still leaves room for the rest.
    let stem = iris_core::text::prefix(stem, 64);
    format!(
        ".{stem}.{}-{:016x}{TEMP_SUFFIX}",
        std::process::id(),
        hasher.finish()
    )
}

/// A new temporary file in `dir` for a file named `stem`, opened for
/// writing (created, never an existing file or link), with `mode` on Unix
/// (narrowed by the umask); a name taken is drawn again.
///
/// # Errors
/// The error of creating it.
pub fn create_temp(
    dir: &Dir,
    stem: &str,
    mode: Option<u32>,
) -> io::Result<(String, std::fs::File)> {
    loop {
        let name = temp_name(stem);
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if let Some(mode) = mode {
            use cap_std::fs::OpenOptionsExt as _;
            options.mode(mode);
        }
        #[cfg(not(unix))]
        let _ = mode;
        match dir.open_with(&name, &options) {
            Ok(file) => return Ok((name, file.into_std())),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
}

/// Renames the finished temporary file `temp` of `dir` to `to` (replacing
/// what is there, never following a link), or removes it when that fails.
///
/// # Errors
/// The error of renaming it.
pub fn rename_into_place(dir: &Dir, temp: &str, to: impl AsRef<std::path::Path>) -> io::Result<()> {
    dir.rename(temp, dir, to).inspect_err(|_| {
        let _ = dir.remove_file(temp);
    })
}

/// What identifies a file's content without reading it: device, inode,
/// size and change times. Any change to a file's content changes its
/// ctime, which no program can set back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    dev: u64,
    ino: u64,
    size: u64,
    ctime: (i64, i64),
    mtime: (i64, i64),
}

impl FileStamp {
    /// The stamp of a file opened through a capability.
    #[must_use]
    pub fn of(meta: &cap_std::fs::Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.len(),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            mtime: (meta.mtime(), meta.mtime_nsec()),
        }
    }

    /// The stamp of a file's standard metadata.
    #[must_use]
    pub fn of_std(meta: &std::fs::Metadata) -> Self {
        Self::of(&cap_std::fs::Metadata::from_just_metadata(meta.clone()))
    }
}

/// The process that made temporary file `name`, if it is one of ours.
#[must_use]
pub fn temp_owner(name: &str) -> Option<u32> {
    let rest = name.strip_suffix(TEMP_SUFFIX)?;
    let (_, tail) = rest.rsplit_once('.')?;
    let (pid, random) = tail.split_once('-')?;
    (random.len() == 16 && random.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| pid.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_differ_and_name_their_process() {
        let a = temp_name("a.txt");
        let b = temp_name("a.txt");
        assert_ne!(a, b);
        assert!(a.starts_with(".a.txt.") && a.ends_with(TEMP_SUFFIX));
        {
            assert_eq!(temp_owner(&a), Some(std::process::id()));
            assert_eq!(temp_owner("a.txt"), None);
            assert_eq!(temp_owner(".a.txt.12-0.iris-tmp"), None);
        }
    }
}
