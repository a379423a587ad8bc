/// Square a number.
#[iris::tool(aliases = ["sq", "square", "sq"])]
fn square(value: i64) -> i64 {
    value * value
}

fn main() {}
