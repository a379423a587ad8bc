/// Shout.
#[iris::tool]
fn shout(text: &str) -> String {
    text.to_uppercase()
}

fn main() {}
