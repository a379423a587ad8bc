//! A registry that can change while executors, discovery and servers read
//! it: each reader takes the snapshot of the moment, and a change builds a
//! new snapshot and swaps it in at once.
//!
//! Readers never lock: a call loads the current snapshot (no reference
//! count touched on the common path) and keeps the one tool it resolved, so
//! a call in flight finishes with the tool it started with while the next
//! call sees the new catalog.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;
use tokio::sync::watch;

use super::ToolRegistry;

/// A [`ToolRegistry`] shared by everything that runs its tools, swapped
/// whole when it changes.
///
/// Cheap to clone; clones share the registry. Executors, discovery and
/// served MCP connections built over it see each change from their next
/// request on.
#[derive(Clone)]
pub struct SharedRegistry {
    inner: Arc<Inner>,
}

struct Inner {
    current: ArcSwap<ToolRegistry>,
    /// Serializes changes, so two never build from the same snapshot and
    /// one is lost.
    writer: Mutex<()>,
    /// Counts changes, for those who react to them (a served connection
    /// telling its client, a search index rebuilt).
    changes: watch::Sender<u64>,
}

impl SharedRegistry {
    /// Shares `registry`.
    #[must_use]
    pub fn new(registry: impl Into<Arc<ToolRegistry>>) -> Self {
        let (changes, _) = watch::channel(0);
        Self {
            inner: Arc::new(Inner {
                current: ArcSwap::new(registry.into()),
                writer: Mutex::new(()),
                changes,
            }),
        }
    }

    /// The registry as it stands now; later changes do not affect it.
    #[must_use]
    pub fn snapshot(&self) -> Arc<ToolRegistry> {
        self.inner.current.load_full()
    }

    /// The registry as it stands now, for a short read that neither awaits
    /// nor outlives the caller's statement: cheaper than a
    /// [`snapshot`](Self::snapshot), which keeps the registry alive.
    #[must_use]
    pub fn peek(&self) -> impl std::ops::Deref<Target = Arc<ToolRegistry>> + use<> {
        self.inner.current.load()
    }

    /// Changes the registry: `change` edits a copy of the current snapshot,
    /// which replaces it when `change` succeeds. Calls already running keep
    /// the tools they resolved; the next request sees the new registry.
    ///
    /// # Errors
    /// Whatever `change` returns; then the registry is left as it was.
    pub fn update<T, E>(
        &self,
        change: impl FnOnce(&mut ToolRegistry) -> Result<T, E>,
    ) -> Result<T, E> {
        let _writer = self
            .inner
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut next = ToolRegistry::clone(&self.inner.current.load());
        let value = change(&mut next)?;
        self.inner.current.store(Arc::new(next));
        self.inner.changes.send_modify(|count| *count += 1);
        Ok(value)
    }

    /// Changes from now on: the receiver wakes after each
    /// [`SharedRegistry::update`] (several quick changes may wake it once).
    #[must_use]
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// A handle that does not keep the registry alive, for a task that
    /// keeps it current only as long as someone uses it.
    #[must_use]
    pub fn downgrade(&self) -> WeakSharedRegistry {
        WeakSharedRegistry(Arc::downgrade(&self.inner))
    }

    /// Whether `other` shares this registry.
    #[must_use]
    pub fn same_as(&self, other: &SharedRegistry) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// A [`SharedRegistry`] that may have been dropped.
#[derive(Clone)]
pub struct WeakSharedRegistry(std::sync::Weak<Inner>);

impl WeakSharedRegistry {
    /// The registry, while someone still holds it.
    #[must_use]
    pub fn upgrade(&self) -> Option<SharedRegistry> {
        self.0.upgrade().map(|inner| SharedRegistry { inner })
    }
}

impl From<ToolRegistry> for SharedRegistry {
    fn from(registry: ToolRegistry) -> Self {
        Self::new(registry)
    }
}

impl From<Arc<ToolRegistry>> for SharedRegistry {
    fn from(registry: Arc<ToolRegistry>) -> Self {
        Self::new(registry)
    }
}

impl From<&SharedRegistry> for SharedRegistry {
    fn from(registry: &SharedRegistry) -> Self {
        registry.clone()
    }
}

impl fmt::Debug for SharedRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self.peek(), f)
    }
}
