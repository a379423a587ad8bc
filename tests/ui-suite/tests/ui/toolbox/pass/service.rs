// A toolbox beside everything else an `impl` block may hold: constants,
// helpers, a constructor, async and sync tools, context and state.
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use iris::{State, ToolContext, ToolRegistry};

pub struct Counter {
    n: AtomicU64,
}

pub struct Step {
    pub by: u64,
}

#[iris::toolbox]
impl Counter {
    pub const START: u64 = 0;

    pub fn new() -> Self {
        Self { n: AtomicU64::new(Self::START) }
    }

    /// Add the configured step, returning the new count.
    #[tool(write)]
    pub fn bump(&self, #[state] step: State<Step>) -> u64 {
        self.n.fetch_add(step.by, Ordering::SeqCst) + step.by
    }

    /// The count, as of this run.
    #[iris::tool(read_only, concurrency_safe, aliases = ["peek"])]
    pub async fn current(&self, #[ctx] cx: &ToolContext) -> String {
        format!("{} in {}", self.n.load(Ordering::SeqCst), cx.run_id())
    }

    fn helper(&self) -> u64 {
        self.n.load(Ordering::SeqCst)
    }
}

fn main() {
    let counter = Arc::new(Counter::new());
    let mut registry = ToolRegistry::new();
    registry.register_toolbox(Arc::clone(&counter)).unwrap();
    assert_eq!(counter.helper(), Counter::START);
}
