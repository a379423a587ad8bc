/// Add a pair.
#[iris::tool]
fn add((a, b): (i64, i64), _: bool) -> i64 {
    a + b
}

fn main() {}
