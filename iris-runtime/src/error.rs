//! Host-side errors of the runtime.

use iris_core::ToolName;

/// What the host did wrong: misconfiguration, a name collision, an unknown
/// approval. Failures the model should read are `ToolResult` errors instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// Two tools answer to the same name.
    #[error(
        "`{name}` is already taken by tool `{existing}`; tool `{new}` cannot use it too (rename one with `name = \"...\"` or drop the alias)"
    )]
    NameCollision {
        /// The contested name or alias.
        name: String,
        /// The tool registered first.
        existing: ToolName,
        /// The tool that was refused.
        new: ToolName,
    },
    /// `resume` named a call that is not waiting for approval.
    #[error("call `{call_id}` is not waiting for approval; it may have been resumed already")]
    NoPendingApproval {
        /// The call id given.
        call_id: String,
    },
    /// A hook factory name that nobody registered.
    #[error("no hook factory named `{name}`; registered: {known}")]
    UnknownHookFactory {
        /// The name asked for.
        name: String,
        /// The names that exist.
        known: String,
    },
    /// Options a hook factory could not accept.
    #[error("options for hook factory `{factory}` are invalid: {source}")]
    HookOptions {
        /// The factory.
        factory: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A command hook without a program to run.
    #[error("command hook `{hook}` has an empty argv; give the program and its arguments")]
    EmptyCommand {
        /// The hook's name.
        hook: String,
    },
    /// The artifact store could not be read or written.
    #[error("cannot {action} artifact file `{}`: {source}", path.display())]
    Artifact {
        /// What was being done: `create`, `write`, `open`, `store`.
        action: &'static str,
        /// The file involved.
        path: std::path::PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// A string that is not an artifact handle.
    #[error(
        "`{handle}` is not an artifact handle; handles look like `artifact://` followed by 32 hex digits"
    )]
    InvalidArtifactHandle {
        /// The string given.
        handle: String,
    },
    /// The workspace root could not be opened.
    #[error("cannot open workspace root `{}`: {source}; give an existing folder", root.display())]
    Workspace {
        /// The root given.
        root: std::path::PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
}
