use iris::{Next, ToolCall, ToolResult};

#[iris::middleware]
async fn audit<T>(call: ToolCall, next: Next<'_>) -> ToolResult {
    next.run(call).await.unwrap_or_else(|e| ToolResult::text(e.to_string()))
}

fn main() {}
