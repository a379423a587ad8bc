//! Which calls have stages between their permission check and their body.
//!
//! A call that no middleware and no `tool.before`/`tool.after` hook sees
//! goes from its permission check straight to its body: nothing runs in
//! between (no hook, no middleware, no await), so one policy check is both
//! the permission stage and the gate, and its typed arguments are never
//! boxed. The pipeline is the same for every call; the stages in between are
//! skipped when there are none.

use iris_core::ToolDefinition;
use rustc_hash::FxHashSet;

use crate::hooks::HookDispatcher;

/// The calls that have hooks or middleware between permission and body.
#[derive(Debug)]
pub(super) enum Staged {
    /// Every call: middleware sees every call, or a tool hook watches
    /// every tool.
    All,
    /// Only the calls of these tools, which filtered tool hooks watch (none
    /// when there is no tool hook).
    Only(FxHashSet<String>),
}

impl Staged {
    pub(super) fn new(has_middleware: bool, hooks: &HookDispatcher) -> Self {
        match hooks.watched_tools() {
            Some(watched) if !has_middleware => Staged::Only(watched),
            _ => Staged::All,
        }
    }

    /// Whether calls of `tool` pass through hooks or middleware.
    pub(super) fn includes(&self, tool: &ToolDefinition) -> bool {
        match self {
            Staged::All => true,
            Staged::Only(watched) => !watched.is_empty() && watched.contains(tool.name().as_str()),
        }
    }
}
