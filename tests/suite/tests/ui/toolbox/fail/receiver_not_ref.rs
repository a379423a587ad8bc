use std::sync::Arc;

struct Service;

#[iris::toolbox]
impl Service {
    /// Take the service by value.
    #[tool]
    fn consume(self) -> u64 {
        1
    }

    /// Take the service's `Arc`.
    #[tool]
    fn shared(self: Arc<Self>) -> u64 {
        2
    }
}

fn main() {}
