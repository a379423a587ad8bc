use iris::{Next, ToolCall};

#[iris::middleware]
async fn audit(call: ToolCall, next: Next<'_>) -> String {
    let _ = next.run(call).await;
    String::from("not a result")
}

fn main() {}
