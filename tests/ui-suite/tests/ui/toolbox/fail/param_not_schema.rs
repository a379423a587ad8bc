struct Service;

/// Not parsed from JSON: no `Deserialize`, no `JsonSchema`.
struct Opaque;

#[iris::toolbox]
impl Service {
    /// Take a parameter that cannot be parsed from JSON.
    #[tool]
    fn opaque(&self, value: Opaque) -> u64 {
        let _ = value;
        1
    }
}

fn main() {}
