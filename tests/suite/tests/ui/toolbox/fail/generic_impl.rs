struct Store<T>(T);

#[iris::toolbox]
impl<T: Send + Sync + 'static> Store<T> {
    /// Count things.
    #[tool]
    fn count(&self) -> u64 {
        0
    }
}

fn main() {}
