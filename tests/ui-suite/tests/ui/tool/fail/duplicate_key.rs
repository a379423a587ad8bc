/// Square a number.
#[iris::tool(read_only, name = "sq", name = "square")]
fn square(value: i64) -> i64 {
    value * value
}

fn main() {}
