struct Store<T>(T);

#[iris::toolbox]
impl<T: Send + Sync + 'static> Store<T> {
    /// Count things.
    #[tool]
    fn count(&self) -> u64 {
        0
    }
}

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

struct Helper;

#[iris::toolbox]
impl Helper {
    fn helper(&self) -> u64 {
        1
    }
}

fn main() {}
