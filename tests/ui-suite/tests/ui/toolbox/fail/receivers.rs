use std::sync::Arc;

struct Counter {
    n: u64,
}

#[iris::toolbox]
impl Counter {
    /// Add one.
    #[tool]
    fn bump(&mut self) -> u64 {
        self.n += 1;
        self.n
    }

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

    /// Say hello.
    #[tool]
    fn hello(name: String) -> String {
        format!("hello {name}")
    }
}

fn main() {}
