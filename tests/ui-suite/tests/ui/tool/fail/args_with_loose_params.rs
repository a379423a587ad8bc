#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    text: String,
}

/// Search.
#[iris::tool]
fn search(#[args] query: Query, limit: u32) -> String {
    format!("{} {limit}", query.text)
}

fn main() {}
