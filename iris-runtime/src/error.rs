//! Host-side errors of the runtime.

use iris_core::ToolName;

/// What the host did wrong with the runtime: misconfiguration, a name
/// collision, an unknown approval, an artifact store refused. Failures the
/// model should read are `ToolResult` errors instead; the crates above
/// raise their own (discovery's `DiscoveryError`, the file tools'
/// `FileServiceError`, the agent's `AgentBuildError` and `RunError`).
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// Two tools answer to the same name.
    #[error(
        "`{name}` is already taken by tool `{existing}` (`{existing_item}`); tool `{new}` (`{new_item}`) cannot use it too (rename one with `name = \"...\"` or drop the alias)"
    )]
    NameCollision {
        /// The contested name or alias.
        name: String,
        /// The tool registered first.
        existing: ToolName,
        /// The Rust item behind it.
        existing_item: &'static str,
        /// The tool that was refused.
        new: ToolName,
        /// The Rust item behind it.
        new_item: &'static str,
    },
    /// A tool other than the built-in search tool uses its name.
    #[error(
        "`{name}` is reserved for the tool of that name that ships with Iris; register `{tool}` (`{item}`) under another name: `#[tool(name = \"...\")]` on a tool you define, or `ToolRegistry::register_renamed(tool, \"...\")` for one you do not"
    )]
    ReservedToolName {
        /// The reserved name or alias it used.
        name: &'static str,
        /// The refused tool.
        tool: ToolName,
        /// The Rust item behind it.
        item: &'static str,
    },
    /// Configuration names a tool that is not registered: a hook filter, a
    /// per-tool deadline or result limit that would never apply.
    #[error(
        "{place} names `{name}`, which no registered tool answers to{suggestion}; name a registered tool (or one of its aliases), or register the tool before building the executor"
    )]
    UnknownToolName {
        /// Where the name was used.
        place: String,
        /// The name (cut when long).
        name: String,
        /// "; did you mean ..." when some names are close, else empty.
        suggestion: String,
    },
    /// A per-tool setting given for one tool under two of its names.
    #[error(
        "{setting} is set for tool `{tool}` twice, as `{first}` and as `{second}` (one is an alias of the other); keep one"
    )]
    ToolSetTwice {
        /// The setting.
        setting: String,
        /// The tool's canonical name.
        tool: String,
        /// The first name used.
        first: String,
        /// The second name used.
        second: String,
    },
    /// `resume` named a call that is not waiting for approval in the run.
    #[error(
        "call `{call_id}` is not waiting for approval in run `{run_id}` ({waiting}); it may have been resumed already, have expired, or belong to another run"
    )]
    NoPendingApproval {
        /// The calls of the run that do wait, in words.
        waiting: String,
        /// The call id given.
        call_id: String,
        /// The run it was looked for in.
        run_id: iris_core::RunId,
    },
    /// An approval given for another request than the waiting call's.
    #[error(
        "the approval does not match the request call `{call_id}` waits with (another run, call, tool or arguments); the call still waits: approve the request it shows"
    )]
    ApprovalMismatch {
        /// The call id given.
        call_id: String,
    },
    /// A hook registered for an event its code cannot answer.
    #[error(
        "hook `{hook}` is registered for `{event}` but its code answers {answers}; register it for that event, or give it code for `{event}`"
    )]
    HookEventMismatch {
        /// The hook's name.
        hook: String,
        /// The event it was registered for.
        event: String,
        /// The events its code answers.
        answers: &'static str,
    },
    /// A hook marked tree-wide on an event guards do not hold over (not
    /// `tool.before`, `model.before` or `model.after`).
    #[error(
        "hook `{hook}` is marked tree-wide but runs on `{event}`; only `tool.before`, `model.before` and `model.after` guards hold over child agents: drop `tree_wide`, or register it on one of those"
    )]
    TreeWideNotBefore {
        /// The hook's name.
        hook: String,
        /// The event it was registered for.
        event: String,
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
        "malformed artifact handle `{handle}`; handles look like `artifact://` followed by 32 lowercase hex digits"
    )]
    InvalidArtifactHandle {
        /// The string given.
        handle: String,
    },
    /// The artifact store's folder is a symlink, not a folder, or another
    /// user's.
    #[error("refusing the artifact store `{}`: {reason}", path.display())]
    ArtifactStoreRefused {
        /// The store's folder.
        path: std::path::PathBuf,
        /// What was wrong with it and what to do.
        reason: String,
    },
    /// An artifact that is not a regular file, or whose content no longer
    /// matches its address.
    #[error("artifact `{handle}` refused: {reason}")]
    ArtifactRefused {
        /// The handle.
        handle: String,
        /// Why.
        reason: &'static str,
    },
}

/// `Debug` that reads as `Display`: a `main` returning `Result<(), Box<dyn
/// Error>>` prints its error with `Debug`, and a person should read what was
/// wrong and what to do there too, not a struct dump (as `anyhow` users
/// expect). Exported for the Iris crates above this one (see `__wings`).
#[doc(hidden)]
#[macro_export]
macro_rules! __iris_debug_as_display {
    ($error:ty) => {
        impl ::std::fmt::Debug for $error {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt(self, f)
            }
        }
    };
}
crate::__iris_debug_as_display!(RuntimeError);
