// A factory's return type is checked against what it must make.

/// Returns text, not a hook.
#[iris::hook_factory]
fn create_text(text: String) -> String {
    text
}

/// Returns a number, not a middleware.
#[iris::middleware_factory]
fn create_number() -> u32 {
    7
}

fn main() {}
