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
}

fn main() {}
