struct Service;

#[iris::toolbox]
impl Service {
    /// Say hello.
    #[tool]
    fn hello(name: String) -> String {
        format!("hello {name}")
    }
}

fn main() {}
