#[iris::tool(read_only)]
fn square(value: i64) -> i64 {
    value * value
}

///
#[iris::tool(read_only)]
fn cube(value: i64) -> i64 {
    value * value * value
}

fn main() {}
