//! The built-in file tools — `read_file`, `write_file` and `edit_file`
//! (configuration keys `file.read`, `file.write`, `file.edit`) — and the
//! [`FileService`] they share.
//!
//! Every path is resolved beneath the workspace root by the operating
//! system, so `..`, absolute paths elsewhere and symlinks that leave the
//! root are refused, also when the tree changes between a check and an
//! open. Reads record an observation per run (content hash and the lines
//! seen); editing or overwriting an existing file needs a current one:
//! read in this run, unchanged since (by content, so a touch is no
//! conflict), and the replaced lines among those read. Writes are atomic
//! and keep the file's permissions and line endings.
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use iris_core::{RunId, ToolContext};
//! use iris_runtime::{ToolExecutor, ToolRegistry};
//! use iris_tools::fs::{FileService, register_file_tools};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut registry = ToolRegistry::new();
//! register_file_tools(&mut registry)?;
//! let executor = ToolExecutor::builder(registry).build()?;
//! // One service for every run; each run's observations stay apart, in
//! // the executor's ledger, and end with the run.
//! let files = Arc::new(
//!     FileService::open("/path/to/workspace")?.with_ledger(Arc::clone(executor.ledger())),
//! );
//! let cx = ToolContext::builder("/path/to/workspace", RunId::new("run-1"))
//!     .shared_state(Arc::clone(&files))
//!     .build();
//! # let _ = cx;
//! # Ok(())
//! # }
//! ```

mod atomic;
mod edit_file;
mod error;
mod fence;
mod folders;
pub mod observation;
mod page;
mod read_file;
mod text;
mod workspace;
mod write_file;

use std::path::Path;
use std::sync::Arc;

use iris_core::{ArtifactRef, RunId, ToolErrorKind, ToolResult};
use sha2::{Digest, Sha256};

use iris_runtime::RuntimeError;
use iris_runtime::ToolRegistry;
use iris_runtime::artifacts::{ArtifactStore, Identity};
use iris_runtime::ledger::RunLedger;
use observation::{ContentHash, Observation, ObservationLog};
use workspace::Workspace;

pub use edit_file::{EditFile, edit_file};
pub use error::FileServiceError;
pub use read_file::{ReadFile, read_file};
pub use write_file::{WriteFile, write_file};

/// Largest file `edit_file` and `write_file` load whole: 64 MiB.
const MAX_EDIT_BYTES: u64 = 64 * 1024 * 1024;

/// The workspace the file tools work in, the artifact store `read_file`
/// reads handles from, and what each run has read.
///
/// Add it to the context as state (`ToolContext::builder(..).state(files)`);
/// one service serves every run, keeping each run's observations apart.
#[derive(Debug)]
pub struct FileService {
    workspace: Workspace,
    artifacts: ArtifactStore,
    observations: ObservationLog,
    /// Serializes writes to one file within the process.
    locks: atomic::WriteLocks,
    /// Folders already cleared of stale temporary files.
    swept: std::sync::Mutex<rustc_hash::FxHashSet<Identity>>,
    /// Places the tools never touch (the agent's own files, Iris's state)
    /// or only read.
    fence: fence::Fence,
}

/// Folders remembered as swept; past this the memory starts again.
const MAX_SWEPT_FOLDERS: usize = 10_000;

impl FileService {
    /// A service confined to `root`, an existing folder, with the artifact
    /// store at `<root>/.iris/artifacts` (where the executor saves
    /// oversized results by default).
    ///
    /// # Errors
    /// [`FileServiceError::Workspace`] when `root` cannot be opened as a folder;
    /// [`FileServiceError::Artifacts`] when the workspace's
    /// `.iris/artifacts` exists but is a symlink or another user's.
    pub fn open(root: impl AsRef<Path>) -> Result<Self, FileServiceError> {
        let root = root.as_ref();
        let workspace = Workspace::open(root).map_err(|source| FileServiceError::Workspace {
            root: root.to_path_buf(),
            source,
        })?;
        let artifacts = ArtifactStore::in_workspace(root);
        artifacts.check_existing()?;
        let fence = fence::Fence::default();
        fence.add(
            &workspace.canonical().join(RUNTIME_DIR),
            fence::Access::Hidden,
            "Iris's own state (`.iris/`: run stores, artifacts, keys)".to_owned(),
        );
        Ok(Self {
            artifacts,
            workspace,
            observations: ObservationLog::new(Arc::default()),
            locks: atomic::WriteLocks::default(),
            swept: std::sync::Mutex::default(),
            fence,
        })
    }

    /// Refuses writes and edits beneath `folder` (a folder inside the
    /// workspace, such as a skill's), saying `why`; reading stays allowed.
    /// Judged by what the OS opens, so no link leads around it; a folder
    /// outside the workspace changes nothing (the tools cannot reach it).
    #[must_use]
    pub fn with_read_only_folder(self, folder: &Path, why: impl Into<String>) -> Self {
        self.protect(folder, why);
        self
    }

    /// [`with_read_only_folder`](Self::with_read_only_folder) on a
    /// service already shared. A folder that holds the workspace itself
    /// is left writable (with a warning): nothing could be written at all.
    pub fn protect(&self, folder: &Path, why: impl Into<String>) {
        let holds_workspace = folder
            .canonicalize()
            .is_ok_and(|folder| self.workspace.canonical().starts_with(folder));
        if holds_workspace {
            tracing::warn!(folder = %folder.display(), "a folder that holds the whole workspace cannot be kept read-only; the file tools may write in it");
            return;
        }
        self.fence.add(folder, fence::Access::ReadOnly, why.into());
    }

    /// Hides `path` (a file or a folder) from the file tools: they neither
    /// read nor write it, however they are pointed at it (a link, a hard
    /// link to a file, `..`); `why` names it for the model ("the agent's
    /// own file"). What an agent is made of (its file, its children's, its
    /// skills) and Iris's state (`.iris/`) are hidden this way.
    #[must_use]
    pub fn with_hidden(self, path: &Path, why: impl Into<String>) -> Self {
        self.hide(path, why);
        self
    }

    /// [`with_hidden`](Self::with_hidden) on a service already shared:
    /// places are only ever added.
    pub fn hide(&self, path: &Path, why: impl Into<String>) {
        self.fence.add(path, fence::Access::Hidden, why.into());
    }

    /// Opens `resolved` for reading, unless it is hidden.
    fn open_readable(
        &self,
        resolved: &workspace::WorkspacePath,
    ) -> Result<std::fs::File, ToolResult> {
        let file = self.workspace.open_regular(resolved)?;
        self.fence.check_read(
            &file,
            resolved,
            &self.workspace.canonical().join(&resolved.key),
        )?;
        Ok(file)
    }

    /// Keeps what each run read in `ledger` (usually the executor's,
    /// [`ToolExecutor::ledger`](iris_runtime::ToolExecutor::ledger)), so that ending
    /// a run there forgets it. Alone, the service keeps a ledger of its own,
    /// bounded as the executor's is.
    #[must_use]
    pub fn with_ledger(mut self, ledger: Arc<RunLedger>) -> Self {
        self.observations = ObservationLog::new(ledger);
        self
    }

    /// The ledger what each run read is kept in.
    #[must_use]
    pub fn ledger(&self) -> &Arc<RunLedger> {
        self.observations.ledger()
    }

    /// Uses `store` for artifact handles instead of the workspace's own;
    /// its folder is hidden from the tools like the workspace's.
    #[must_use]
    pub fn with_artifacts(mut self, store: ArtifactStore) -> Self {
        if !store.dir().as_os_str().is_empty() {
            self.fence.add(
                store.dir(),
                fence::Access::Hidden,
                "the artifact store (read artifacts by their handle)".to_owned(),
            );
        }
        self.artifacts = store;
        self
    }

    /// The workspace root.
    #[must_use]
    pub fn root(&self) -> &Path {
        self.workspace.root()
    }

    /// The artifact store handles are read from.
    #[must_use]
    pub fn artifacts(&self) -> &ArtifactStore {
        &self.artifacts
    }

    /// What run `run` has seen of `path` (relative to the root), if it read it.
    #[must_use]
    pub fn observation(&self, run: &RunId, path: &str) -> Option<Observation> {
        let path = self.workspace.locate(path).ok()?;
        self.observations.get(run, &path.key)
    }

    /// Publishes a workspace file: the artifact store keeps an independent,
    /// immutable copy, so later changes to the file do not change what the
    /// handle opens. Confined like every other path.
    ///
    /// # Errors
    /// A [`ToolResult`] error the model can read: the path refused or
    /// missing, or the store failing.
    #[allow(
        clippy::result_large_err,
        reason = "the error is the call's result, returned to the model as is"
    )]
    pub fn publish(&self, path: &str, media_type: Option<&str>) -> Result<ArtifactRef, ToolResult> {
        let resolved = self.workspace.locate(path)?;
        let file = self.open_readable(&resolved)?;
        let name = resolved.key.file_name().and_then(|n| n.to_str());
        self.artifacts
            .publish_reader(file, media_type, name)
            .map_err(|e| {
                ToolResult::error(
                    ToolErrorKind::Execution,
                    format!("cannot publish `{path}`: {e}"),
                )
            })
    }
}

/// Configuration keys of the file tools and the tool each one names.
pub const CONFIG_KEYS: &[(&str, &str)] = &[
    ("file.read", "read_file"),
    ("file.write", "write_file"),
    ("file.edit", "edit_file"),
];

/// The built-in file tool behind configuration key `key` (`file.read`,
/// `file.write` or `file.edit`).
#[must_use]
pub fn tool_for_key(key: &str) -> Option<std::sync::Arc<dyn iris_core::DynTool>> {
    let tool: std::sync::Arc<dyn iris_core::DynTool> = match key {
        "file.read" => std::sync::Arc::new(ReadFile),
        "file.write" => std::sync::Arc::new(WriteFile),
        "file.edit" => std::sync::Arc::new(EditFile),
        _ => return None,
    };
    Some(tool)
}

/// Registers `read_file`, `write_file` and `edit_file`.
///
/// # Errors
/// [`RuntimeError::NameCollision`] when a registered tool already uses one
/// of their names.
pub fn register_file_tools(registry: &mut ToolRegistry) -> Result<(), RuntimeError> {
    for (key, _) in CONFIG_KEYS {
        if let Some(tool) = tool_for_key(key) {
            registry.register_dyn(tool)?;
        }
    }
    Ok(())
}

/// Characters that make a name read as another: control characters and the
/// bidirectional text controls (U+202A-U+202E, U+2066-U+2069, U+200E/F).
fn is_deceptive(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

fn hash_of(bytes: &[u8]) -> ContentHash {
    Sha256::digest(bytes).into()
}

/// An existing file loaded whole for an edit or an overwrite.
struct Loaded {
    text: String,
    hash: ContentHash,
    permissions: cap_std::fs::Permissions,
    /// How it looked when loaded; checked again right before the rename.
    stamp: atomic::Stamp,
    /// Held for its `flock`.
    file: std::fs::File,
}

/// Where the runtime keeps its own state in a workspace; the file tools
/// never write there.
const RUNTIME_DIR: &str = ".iris";

impl FileService {
    /// Loads `path` whole; `Ok(None)` when it does not exist.
    fn load(&self, path: &workspace::WorkspacePath) -> Result<Option<Loaded>, ToolResult> {
        use std::io::Read as _;
        let file = match self.open_readable(path) {
            Ok(file) => file,
            Err(error) if error.error_kind() == Some(ToolErrorKind::NotFound) => return Ok(None),
            Err(error) => return Err(error),
        };
        let metadata = file
            .metadata()
            .map_err(|e| workspace::io_refusal(path, &e))?;
        if metadata.len() > MAX_EDIT_BYTES {
            return Err(ToolResult::error(
                ToolErrorKind::UnsupportedContent,
                format!(
                    "`{}` is {} bytes; files over {MAX_EDIT_BYTES} bytes cannot be edited or overwritten here",
                    path.shown,
                    metadata.len()
                ),
            ));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
        (&file)
            .read_to_end(&mut bytes)
            .map_err(|e| workspace::io_refusal(path, &e))?;
        let hash = hash_of(&bytes);
        let text = String::from_utf8(bytes).map_err(|_| {
            ToolResult::error(
                ToolErrorKind::UnsupportedContent,
                format!(
                    "`{}` is not UTF-8 text; it cannot be edited as text",
                    path.shown
                ),
            )
        })?;
        if text.contains('\0') {
            return Err(ToolResult::error(
                ToolErrorKind::UnsupportedContent,
                format!(
                    "`{}` is a binary file (it holds NUL bytes); it cannot be edited as text",
                    path.shown
                ),
            ));
        }
        Ok(Some(Loaded {
            text,
            hash,
            permissions: cap_std::fs::Permissions::from_std(metadata.permissions()),
            stamp: atomic::Stamp::of_std(&metadata),
            file,
        }))
    }

    /// Refuses writes the file tools must never make: into the runtime's
    /// own folder, to temporary files, or to names that hide what they are.
    fn refuse_protected(path: &workspace::WorkspacePath) -> Result<(), ToolResult> {
        if path
            .key
            .components()
            .next()
            .is_some_and(|first| first.as_os_str() == RUNTIME_DIR)
        {
            return Err(workspace::refused(
                &path.shown,
                "`.iris/` holds the runtime's own state (saved artifacts); tools cannot write there",
            ));
        }
        let name = path
            .key
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        if name.ends_with(iris_runtime::__wings::TEMP_SUFFIX) {
            return Err(workspace::refused(
                &path.shown,
                "names ending in `.iris-tmp` are reserved for files being written",
            ));
        }
        if path.shown.chars().any(is_deceptive) {
            return Err(workspace::refused(
                &path.shown,
                "it contains control characters or bidirectional text controls, which make a name look like another; use plain characters",
            ));
        }
        Ok(())
    }

    /// Opens the folder a write goes to, refusing the artifact store's own
    /// folder however it is reached (a symlink to `.iris` included), and
    /// clearing temporary files that dead processes left there.
    fn write_target(
        &self,
        path: &workspace::WorkspacePath,
        create: bool,
    ) -> Result<atomic::Target, ToolResult> {
        Self::refuse_protected(path)?;
        let resolved = self.workspace.canonical().join(&path.key);
        self.fence.check_planned_write(path, &resolved)?;
        if create {
            folders::make_parents(
                self.workspace.dir(),
                self.workspace.canonical(),
                &self.fence,
                path,
            )?;
        }
        let target = atomic::Target::open(self.workspace.dir(), path)?;
        self.fence
            .check_write(target.folder(), target.name(), path, &resolved)?;
        if self.artifacts.existing_identity() == Some(target.folder_identity()) {
            return Err(workspace::refused(
                &path.shown,
                "it leads into the artifact store, which tools cannot write",
            ));
        }
        let first_visit = {
            let mut swept = self
                .swept
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if swept.len() >= MAX_SWEPT_FOLDERS {
                swept.clear();
            }
            swept.insert(target.folder_identity())
        };
        if first_visit {
            atomic::sweep_stale(target.folder());
        }
        Ok(target)
    }

    /// Whether `path` still is what was loaded (`None`: still absent),
    /// looked at right before the rename. A touch is no change.
    fn unchanged(
        &self,
        path: &workspace::WorkspacePath,
        loaded: Option<&Loaded>,
    ) -> Result<(), ToolResult> {
        let moved = |what: &str| {
            Err(ToolResult::error(
                ToolErrorKind::StaleRead,
                format!(
                    "`{}` {what} while this change was being made, so nothing was written; read it again with read_file, then make the change again",
                    path.shown
                ),
            ))
        };
        let file = match self.open_readable(path) {
            Ok(file) => file,
            Err(error) if error.error_kind() == Some(ToolErrorKind::NotFound) => {
                return match loaded {
                    None => Ok(()),
                    Some(_) => moved("was removed by another program"),
                };
            }
            Err(error) => return Err(error),
        };
        let Some(loaded) = loaded else {
            return moved("was created by another program");
        };
        let metadata = file
            .metadata()
            .map_err(|e| workspace::io_refusal(path, &e))?;
        if atomic::Stamp::of_std(&metadata) == loaded.stamp {
            return Ok(());
        }
        let mut bytes = Vec::new();
        {
            use std::io::Read as _;
            (&file)
                .read_to_end(&mut bytes)
                .map_err(|e| workspace::io_refusal(path, &e))?;
        }
        if hash_of(&bytes) == loaded.hash {
            Ok(())
        } else {
            moved("was changed by another program")
        }
    }

    /// The run's observation of `path`, if it is still current for `loaded`.
    fn current_observation(
        &self,
        run: &RunId,
        path: &workspace::WorkspacePath,
        loaded: &Loaded,
        verb: &str,
    ) -> Result<Observation, ToolResult> {
        let Some(observation) = self.observations.get(run, &path.key) else {
            return Err(ToolResult::error(
                ToolErrorKind::StaleRead,
                format!(
                    "`{}` has not been read in this run; read it with read_file before you {verb} it",
                    path.shown
                ),
            ));
        };
        if observation.hash != loaded.hash {
            return Err(ToolResult::error(
                ToolErrorKind::StaleRead,
                format!(
                    "`{}` changed on disk since you read it; read it again with read_file, then {verb} it",
                    path.shown
                ),
            ));
        }
        Ok(observation)
    }

    /// Refuses when any of lines `first..=last` was not read.
    fn require_seen(
        path: &workspace::WorkspacePath,
        observation: &Observation,
        first: usize,
        last: usize,
    ) -> Result<(), ToolResult> {
        match observation.seen.first_unseen(first, last) {
            None => Ok(()),
            Some(line) => Err(ToolResult::error(
                ToolErrorKind::StaleRead,
                format!(
                    "line {line} of `{}` has not been read in this run, and the change would replace it; read it first with read_file {}",
                    path.shown,
                    serde_json::json!({"path": path.shown, "offset": line, "limit": last + 1 - line})
                ),
            )),
        }
    }
}
