/// Not a function.
#[iris::tool]
struct Square {
    value: i64,
}

fn main() {}
