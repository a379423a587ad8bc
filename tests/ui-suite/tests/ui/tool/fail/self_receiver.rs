struct Counter;

impl Counter {
    /// Count.
    #[iris::tool]
    fn count(&self, by: u32) -> u32 {
        by
    }
}

fn main() {}
