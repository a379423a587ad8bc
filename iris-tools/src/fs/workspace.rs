//! Confinement: every path a file tool touches is resolved beneath the
//! workspace root by the operating system (`cap-std`, which uses `openat2`
//! with `RESOLVE_BENEATH` on Linux and walks component by component
//! elsewhere), never canonicalized first and opened later, so a folder
//! swapped for a symlink between a check and an open cannot lead outside.

use std::io;
use std::path::{Component, Path, PathBuf};

use cap_std::fs::Dir;
use iris_core::{ToolErrorKind, ToolResult};

/// Longest path a tool may name, in bytes; the OS limit on Linux.
const MAX_PATH_BYTES: usize = 4096;

/// The workspace root, held open.
#[derive(Debug)]
pub(crate) struct Workspace {
    root: PathBuf,
    canonical: PathBuf,
    dir: Dir,
}

/// A path as the model named it, checked and made relative to the root.
#[derive(Debug, Clone)]
pub(crate) struct WorkspacePath {
    /// Relative to the root, as given (`..` inside it is resolved by the OS).
    pub(crate) relative: PathBuf,
    /// Lexically normalized: the key of read observations.
    pub(crate) key: PathBuf,
    /// As the model wrote it, for messages.
    pub(crate) shown: String,
}

impl Workspace {
    pub(crate) fn open(root: &Path) -> io::Result<Self> {
        let dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
        let canonical = std::fs::canonicalize(root)?;
        Ok(Self {
            root: root.to_path_buf(),
            canonical,
            dir,
        })
    }

    /// The root as the OS resolves it.
    pub(crate) fn canonical(&self) -> &Path {
        &self.canonical
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    pub(crate) fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Checks `input` without touching the disk: not empty, no NUL, not
    /// absolute outside the root, no `..` that climbs above it.
    pub(crate) fn resolve(&self, input: &str) -> Result<WorkspacePath, ToolResult> {
        let refuse = |why: String| Err(refused(input, &why));
        if input.trim().is_empty() {
            return refuse("the path is empty; give a path relative to the workspace root, such as `src/main.rs`".into());
        }
        if input.contains('\0') {
            return refuse("the path contains a NUL byte, which no file name can hold".into());
        }
        if input.len() > MAX_PATH_BYTES {
            return refuse(format!(
                "the path is {} bytes long; the limit is {MAX_PATH_BYTES}",
                input.len()
            ));
        }
        let path = Path::new(input);
        let relative = if path.is_absolute() {
            match path
                .strip_prefix(&self.canonical)
                .or_else(|_| path.strip_prefix(&self.root))
            {
                Ok(inside) => inside.to_path_buf(),
                Err(_) => {
                    return refuse(
                        "it is an absolute path outside the workspace; give a path relative to the workspace root"
                            .into(),
                    );
                }
            }
        } else {
            path.to_path_buf()
        };
        let mut key = PathBuf::new();
        for component in relative.components() {
            match component {
                Component::CurDir => {}
                Component::ParentDir => {
                    if !key.pop() {
                        return refuse("`..` climbs above the workspace root".into());
                    }
                }
                Component::Normal(part) => key.push(part),
                Component::RootDir | Component::Prefix(_) => {
                    return refuse("it is not a path inside the workspace".into());
                }
            }
        }
        if key.as_os_str().is_empty() {
            return refuse("it names the workspace root itself, a directory".into());
        }
        Ok(WorkspacePath {
            relative,
            key,
            shown: input.to_owned(),
        })
    }

    /// [`resolve`](Self::resolve), then the key made the path the OS
    /// resolves to beneath the root (links and `..` after them followed),
    /// so one file has one key however it is named: `d/in/../x.txt` with
    /// `d/in` a link to `e/in` is `e/x.txt`. A file that does not exist yet
    /// is keyed by its resolved folder and its name.
    pub(crate) fn locate(&self, input: &str) -> Result<WorkspacePath, ToolResult> {
        let mut path = self.resolve(input)?;
        let resolved = self.dir.canonicalize(&path.relative).or_else(|_| {
            let name = path
                .relative
                .file_name()
                .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
            let parent = path.relative.parent().unwrap_or_else(|| Path::new(""));
            let folder = if parent.as_os_str().is_empty() {
                PathBuf::new()
            } else {
                self.dir.canonicalize(parent)?
            };
            Ok::<_, io::Error>(folder.join(name))
        });
        if let Ok(resolved) = resolved
            && !resolved.as_os_str().is_empty()
            && resolved.is_relative()
        {
            path.key = resolved;
        }
        Ok(path)
    }

    /// Opens an existing regular file for reading, beneath the root, as
    /// every wing opens its files. FIFOs and devices are opened without
    /// blocking and then refused.
    pub(crate) fn open_regular(&self, path: &WorkspacePath) -> Result<std::fs::File, ToolResult> {
        use iris_runtime::__wings::{BeneathError, HardLinks, open_in};
        open_in(&self.dir, &path.relative, HardLinks::Allow).map_err(|why| match why {
            BeneathError::Missing => io_refusal(path, &io::ErrorKind::NotFound.into()),
            BeneathError::Outside => refused(
                &path.shown,
                "it leads outside the workspace (through `..` or a symlink); only files inside the workspace root can be used",
            ),
            BeneathError::Directory => refused(&path.shown, "it is a directory, not a file"),
            BeneathError::NotRegular => refused(
                &path.shown,
                "it is not a regular file but a FIFO, socket or device; only regular files can be used",
            ),
            BeneathError::Io(error) | BeneathError::Folder(error) => io_refusal(path, &error),
            other => refused(&path.shown, &other.to_string()),
        })
    }
}

pub(crate) fn refused(path: &str, why: &str) -> ToolResult {
    ToolResult::error(
        ToolErrorKind::PathRefused,
        format!("path `{}` refused: {why}", shown(path)),
    )
}

/// An I/O failure on a workspace path as the model should read it.
pub(crate) fn io_refusal(path: &WorkspacePath, error: &io::Error) -> ToolResult {
    let shown_path = shown(&path.shown);
    match error.kind() {
        io::ErrorKind::NotFound => ToolResult::error(
            ToolErrorKind::NotFound,
            format!(
                "`{shown_path}` does not exist in the workspace; check the name, or list the folder first"
            ),
        ),
        io::ErrorKind::PermissionDenied if error.to_string().contains("outside") => refused(
            &path.shown,
            "it leads outside the workspace (through `..` or a symlink); only files inside the workspace root can be used",
        ),
        io::ErrorKind::PermissionDenied => {
            refused(&path.shown, "the operating system denied access")
        }
        io::ErrorKind::InvalidFilename => {
            refused(&path.shown, "a name in it is too long or invalid")
        }
        io::ErrorKind::NotADirectory => refused(
            &path.shown,
            "a part of it that should be a folder is a file",
        ),
        io::ErrorKind::IsADirectory => refused(&path.shown, "it is a directory"),
        _ => match error.raw_os_error() {
            #[cfg(unix)]
            Some(code) if code == nix::libc::ELOOP => refused(
                &path.shown,
                "it runs through too many symlinks, or ends in one that cannot be followed",
            ),
            _ => ToolResult::error(
                ToolErrorKind::Execution,
                format!("cannot use `{shown_path}`: {error}"),
            ),
        },
    }
}

/// A path shortened for messages: a hostile 4 KB name should not fill the
/// model's context.
fn shown(path: &str) -> String {
    const MAX: usize = 200;
    let clean: String = path.replace('\0', "\\0");
    iris_core::text::clip(&clean, MAX).into_owned()
}
