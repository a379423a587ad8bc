struct Service;

#[iris::toolbox]
impl Service {
    fn helper(&self) -> u64 {
        1
    }
}

fn main() {}
