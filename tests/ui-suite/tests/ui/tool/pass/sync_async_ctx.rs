use iris::{State, Tool, ToolContext};

/// Square a number.
#[iris::tool(read_only, concurrency_safe)]
fn square(
    /// The number.
    value: i64,
) -> i64 {
    value * value
}

/// Fetch a URL.
#[iris::tool(network, deferred, aliases = ["get"], max_result_chars = 1000)]
pub async fn fetch(
    /// The URL.
    url: String,
    #[ctx] cx: &ToolContext,
    #[state] prefix: State<String>,
) -> Result<String, std::io::Error> {
    Ok(format!("{}{url}{}", *prefix, cx.run_id()))
}

/// Nothing to say.
#[iris::tool(name = "noop", description = "Do nothing.")]
fn do_nothing() {}

fn main() {
    assert_eq!(square(3), 9);
    let _ = fetch;
    do_nothing();
    assert_eq!(Square.definition().name(), "square");
    assert_eq!(Fetch.definition().aliases(), ["get"]);
    assert_eq!(DoNothing.definition().name(), "noop");
}
