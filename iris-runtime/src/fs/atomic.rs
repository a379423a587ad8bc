//! Atomic replacement of a file beneath the root: the new content goes to
//! a temporary file in the same folder, is flushed to disk, takes the old
//! file's permissions, and is renamed over the target. Until the rename
//! the old content is untouched; a failure removes the temporary file.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, OpenOptions, Permissions};
use iris_core::ToolResult;

use super::workspace::{WorkspacePath, io_refusal, refused};

/// Writes `bytes` to `path`, creating parent folders inside the root.
pub(crate) fn write_atomic(
    root: &Dir,
    path: &WorkspacePath,
    bytes: &[u8],
    permissions: Option<Permissions>,
) -> Result<(), ToolResult> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let Some(name) = path.relative.file_name() else {
        return Err(refused(&path.shown, "it does not end in a file name"));
    };
    let folder = match path.relative.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => {
            root.create_dir_all(parent)
                .map_err(|e| io_refusal(path, &e))?;
            root.open_dir(parent).map_err(|e| io_refusal(path, &e))?
        }
        _ => root.try_clone().map_err(|e| io_refusal(path, &e))?,
    };
    // Short enough that a long target name still leaves room for the suffix.
    let stem: String = name.to_string_lossy().chars().take(64).collect();
    let temp = format!(
        ".{stem}.{}-{}.iris-tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let mut file = folder
        .open_with(&temp, OpenOptions::new().write(true).create_new(true))
        .map_err(|e| io_refusal(path, &e))?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| match permissions {
            Some(permissions) => file.set_permissions(permissions),
            None => Ok(()),
        });
    drop(file);
    if let Err(e) = written.and_then(|()| folder.rename(&temp, &folder, name)) {
        let _ = folder.remove_file(&temp);
        return Err(io_refusal(path, &e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    /// A rename that fails (here onto a folder) leaves the target as it
    /// was and no temporary file behind.
    #[test]
    fn a_failed_write_leaves_the_old_content_and_no_litter() {
        let temp = std::env::temp_dir().join(format!("iris-atomic-{}", std::process::id()));
        std::fs::create_dir_all(temp.join("target/kept")).unwrap();
        let root = Dir::open_ambient_dir(&temp, cap_std::ambient_authority()).unwrap();
        let path = WorkspacePath {
            relative: PathBuf::from("target"),
            key: PathBuf::from("target"),
            shown: "target".into(),
        };
        let result = write_atomic(&root, &path, b"new", None);
        assert!(result.is_err());
        assert!(temp.join("target/kept").is_dir());
        let litter: Vec<_> = std::fs::read_dir(&temp)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(litter, vec![std::ffi::OsString::from("target")]);
        std::fs::remove_dir_all(&temp).unwrap();
    }
}
