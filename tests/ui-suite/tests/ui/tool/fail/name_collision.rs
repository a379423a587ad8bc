// `fn quote` becomes `struct Quote`: next to a type of that name the
// compiler points at the function's name (the fix is a module of tools).
struct Quote;

/// Quote a price.
#[iris::tool(read_only)]
fn quote(
    /// The item.
    item: String,
) -> String {
    item
}

fn main() {
    let _ = Quote;
}
