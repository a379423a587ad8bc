//! The per-call environment the runtime fills and tools read.

use std::any::{Any, TypeId};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::name::ToolName;
use crate::result::{ToolErrorKind, ToolResult};

/// Identifies one agent run; approvals and disclosures are bound to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RunId(Arc<str>);

impl RunId {
    /// A run id from any string.
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        Self(id.into())
    }

    /// The id as a string slice.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

type Extensions = HashMap<TypeId, Arc<dyn Any + Send + Sync>, BuildHasherDefault<TypeIdHasher>>;

/// `TypeId`s are already well-mixed hashes; running them through `SipHash`
/// again only costs time on every extension lookup.
#[derive(Default)]
struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // `TypeId` hashes through `write_u64`; fold anything else in too.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 ^= value;
    }
}

/// The environment of one call: workspace root, run identity, the tools
/// offered in the current request, and typed extensions (shared state,
/// services such as the file service or a permission policy).
///
/// Cloning is cheap (one `Arc`), so a sync tool body can own a copy on its
/// blocking thread.
#[derive(Clone)]
pub struct ToolContext {
    inner: Arc<ContextInner>,
}

struct ContextInner {
    workspace_root: PathBuf,
    run_id: RunId,
    offered: Option<HashSet<ToolName>>,
    extensions: Extensions,
}

impl ToolContext {
    /// Starts a context for run `run_id` rooted at `workspace_root`.
    pub fn builder(workspace_root: impl Into<PathBuf>, run_id: RunId) -> ToolContextBuilder {
        ToolContextBuilder {
            inner: ContextInner {
                workspace_root: workspace_root.into(),
                run_id,
                offered: None,
                extensions: Extensions::default(),
            },
        }
    }

    /// This context with one more extension (replacing one of the same
    /// type), for one call that needs something the others do not.
    #[must_use]
    pub fn with_extension<T: Any + Send + Sync>(&self, value: T) -> ToolContext {
        let inner = &self.inner;
        let mut extensions = inner.extensions.clone();
        extensions.insert(TypeId::of::<T>(), Arc::new(value));
        ToolContext {
            inner: Arc::new(ContextInner {
                workspace_root: inner.workspace_root.clone(),
                run_id: inner.run_id.clone(),
                offered: inner.offered.clone(),
                extensions,
            }),
        }
    }

    /// The folder file tools are confined to.
    #[must_use]
    pub fn workspace_root(&self) -> &Path {
        &self.inner.workspace_root
    }

    /// The run this call belongs to.
    #[must_use]
    pub fn run_id(&self) -> &RunId {
        &self.inner.run_id
    }

    /// The canonical names offered to the model in the current request;
    /// `None` when the host did not restrict the request (the executor then
    /// treats every eager tool as offered, and no deferred one).
    #[must_use]
    pub fn offered(&self) -> Option<&HashSet<ToolName>> {
        self.inner.offered.as_ref()
    }

    /// Whether `name` is in the offered set, or the request is unrestricted.
    #[must_use]
    pub fn is_offered(&self, name: &str) -> bool {
        self.inner.offered.as_ref().is_none_or(|o| o.contains(name))
    }

    /// Whether this call should stop: its deadline passed or it was
    /// cancelled, and the executor raised its [`StopFlag`](crate::StopFlag).
    /// A synchronous body cannot be stopped from outside; one that may run
    /// long looks at this in its loops and returns early when it is true.
    /// (An async body is simply no longer polled, so it never needs to.)
    #[must_use]
    pub fn should_stop(&self) -> bool {
        crate::StopFlag::current_is_raised()
    }

    /// The extension of type `T`, if the host added one.
    #[must_use]
    pub fn extension<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.inner
            .extensions
            .get(&TypeId::of::<T>())
            .and_then(|ext| ext.downcast_ref::<T>())
    }

    /// Shared state of type `T`, if the host added it with
    /// [`ToolContextBuilder::state`].
    #[must_use]
    pub fn state<T: Any + Send + Sync>(&self) -> Option<State<T>> {
        let ext = self.inner.extensions.get(&TypeId::of::<State<T>>())?;
        ext.downcast_ref::<State<T>>().cloned()
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("workspace_root", &self.inner.workspace_root)
            .field("run_id", &self.inner.run_id)
            .field("offered", &self.inner.offered)
            .field("extensions", &self.inner.extensions.len())
            .finish()
    }
}

/// Builds a [`ToolContext`].
#[must_use]
pub struct ToolContextBuilder {
    inner: ContextInner,
}

impl ToolContextBuilder {
    /// Restricts the request to these canonical names.
    pub fn offered(mut self, names: impl IntoIterator<Item = ToolName>) -> Self {
        self.inner.offered = Some(names.into_iter().collect());
        self
    }

    /// Adds an extension, replacing one of the same type.
    pub fn extension<T: Any + Send + Sync>(mut self, value: T) -> Self {
        self.inner
            .extensions
            .insert(TypeId::of::<T>(), Arc::new(value));
        self
    }

    /// Adds shared state that `#[state]` parameters of type `State<T>` receive.
    pub fn state<T: Any + Send + Sync>(self, value: T) -> Self {
        self.extension(State(Arc::new(value)))
    }

    /// Adds state the host keeps a handle to as well, such as a service
    /// shared by every run's contexts.
    pub fn shared_state<T: Any + Send + Sync>(self, value: Arc<T>) -> Self {
        self.extension(State(value))
    }

    /// Finishes the context.
    #[must_use]
    pub fn build(self) -> ToolContext {
        ToolContext {
            inner: Arc::new(self.inner),
        }
    }
}

/// Shared state handed to `#[state]` tool parameters.
pub struct State<T: ?Sized>(pub Arc<T>);

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        State(Arc::clone(&self.0))
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&&*self.0).finish()
    }
}

/// A value a `#[ctx]` or `#[state]` tool parameter can be taken from the
/// context as.
pub trait FromToolContext: Sized {
    /// Takes the value; the error result is what the call returns instead
    /// of running the body.
    ///
    /// # Errors
    /// A [`ToolResult`] error saying what the host must add to the context.
    #[allow(
        clippy::result_large_err,
        reason = "the error is the call's result, returned once and never propagated further"
    )]
    fn from_context(cx: &ToolContext) -> Result<Self, ToolResult>;
}

impl FromToolContext for ToolContext {
    fn from_context(cx: &ToolContext) -> Result<Self, ToolResult> {
        Ok(cx.clone())
    }
}

impl<T: Any + Send + Sync> FromToolContext for State<T> {
    fn from_context(cx: &ToolContext) -> Result<Self, ToolResult> {
        cx.state::<T>().ok_or_else(|| {
            ToolResult::error(
                ToolErrorKind::Internal,
                format!(
                    "the host did not provide state of type `{}`; add it with `ToolContext::builder(..).state(value)`",
                    std::any::type_name::<T>()
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_and_state_by_type() {
        let cx = ToolContext::builder("/ws", RunId::new("run-1"))
            .extension(7_u32)
            .state(String::from("db"))
            .offered([ToolName::new("square").unwrap()])
            .build();
        assert_eq!(cx.extension::<u32>(), Some(&7));
        assert_eq!(cx.extension::<u64>(), None);
        assert_eq!(&*cx.state::<String>().unwrap(), "db");
        assert!(cx.is_offered("square") && !cx.is_offered("cube"));
        assert_eq!(cx.run_id().as_str(), "run-1");
    }
}
