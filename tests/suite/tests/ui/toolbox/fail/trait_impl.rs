struct Service;

trait Greeter {
    fn hello(&self, name: String) -> String;
}

#[iris::toolbox]
impl Greeter for Service {
    /// Say hello.
    #[tool]
    fn hello(&self, name: String) -> String {
        format!("hello {name}")
    }
}

fn main() {}
