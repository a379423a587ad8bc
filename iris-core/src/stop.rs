//! Asking a running body to stop. A synchronous body runs on a thread of its
//! own that nothing can stop from outside; when its call's deadline passes
//! or the call is cancelled, the executor raises the call's [`StopFlag`],
//! and a body that looks at [`ToolContext::should_stop`] in its loops can
//! end early instead of running on unseen.
//!
//! [`ToolContext::should_stop`]: crate::ToolContext::should_stop

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

thread_local! {
    /// The flag of the call whose body runs on this thread, if any.
    static CURRENT: RefCell<Option<StopFlag>> = const { RefCell::new(None) };
}

/// A flag raised when a call should stop; cheap to clone, clones share it.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// A flag not raised yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Raises the flag: the body should stop as soon as it can.
    pub fn raise(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the flag was raised.
    #[must_use]
    pub fn is_raised(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Runs `body` on this thread as the call this flag belongs to, so that
    /// [`ToolContext::should_stop`](crate::ToolContext::should_stop) sees it.
    pub fn scope<R>(&self, body: impl FnOnce() -> R) -> R {
        struct Restore(Option<StopFlag>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let previous = self.0.take();
                CURRENT.with(|current| *current.borrow_mut() = previous);
            }
        }
        let previous = CURRENT.with(|current| current.borrow_mut().replace(self.clone()));
        let _restore = Restore(previous);
        body()
    }

    /// Whether the call whose body runs on this thread should stop.
    #[must_use]
    pub fn current_is_raised() -> bool {
        CURRENT.with(|current| current.borrow().as_ref().is_some_and(StopFlag::is_raised))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raised_flag_is_seen_only_inside_its_scope() {
        let flag = StopFlag::new();
        assert!(!StopFlag::current_is_raised());
        flag.scope(|| {
            assert!(!StopFlag::current_is_raised());
            flag.raise();
            assert!(StopFlag::current_is_raised());
        });
        assert!(!StopFlag::current_is_raised());
    }
}
