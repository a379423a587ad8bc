//! A definition is built once; fetching it again allocates nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use iris::Tool;

struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator.
#[allow(
    unsafe_code,
    reason = "a global allocator is the only way to count allocations"
)]
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Look up a word.
#[iris::tool(read_only)]
fn define(
    /// The word.
    word: String,
) -> String {
    word
}

#[test]
fn fetching_a_built_definition_allocates_nothing() {
    let first = Define.definition();
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let mut total = 0;
    for _ in 0..1000 {
        total += Define.definition().description().len();
    }
    let after = ALLOCATIONS.load(Ordering::SeqCst);
    assert_eq!(after - before, 0, "fetching the definition allocated");
    assert!(std::ptr::eq(first, Define.definition()));
    assert_eq!(total, 1000 * "Look up a word.".len());
}
