/// Square a number.
#[iris::tool(read_only = true, name = square, max_result_chars = 0, aliases = "sq", description)]
fn square(value: i64) -> i64 {
    value * value
}

fn main() {}
