use iris::{Next, ToolCall, ToolResult};

#[iris::middleware]
async fn retry(call: ToolCall, next: Next<'_>) -> ToolResult {
    let first = next.run(call.clone()).await;
    let _ = first;
    next.run(call).await.unwrap_or_else(|e| ToolResult::text(e.to_string()))
}

fn main() {}
