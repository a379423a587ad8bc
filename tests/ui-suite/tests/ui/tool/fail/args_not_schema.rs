#[derive(serde::Deserialize)]
struct Query {
    text: String,
}

/// Search.
#[iris::tool]
fn search(#[args] query: Query) -> String {
    query.text
}

fn main() {}
