//! Why a [`FileService`](super::FileService) cannot be opened.

use iris_runtime::RuntimeError;

/// A workspace the file tools cannot work in.
#[derive(thiserror::Error)]
pub enum FileServiceError {
    /// The workspace root could not be opened.
    #[error("cannot open workspace root `{}`: {source}; give an existing folder", root.display())]
    Workspace {
        /// The root given.
        root: std::path::PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// The workspace's artifact store is refused (a symlink, or another
    /// user's folder).
    #[error(transparent)]
    Artifacts(#[from] RuntimeError),
}

iris_runtime::__wings::debug_as_display!(FileServiceError);
