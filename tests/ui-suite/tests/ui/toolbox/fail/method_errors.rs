struct Service;

#[iris::toolbox]
impl Service {
    /// Look up a thing.
    #[tool(read_only, raed_only)]
    async fn lookup(&self, id: String) -> String {
        id
    }

    #[tool]
    fn undocumented(&self) -> u64 {
        1
    }
}

fn main() {}
