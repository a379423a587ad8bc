use iris::{Next, ToolCall, ToolContext, ToolResult};

#[iris::middleware]
async fn audit(cx: &ToolContext, call: ToolCall, next: Next<'_>) -> ToolResult {
    let _ = cx;
    next.run(call).await.unwrap_or_else(|e| ToolResult::text(e.to_string()))
}

fn main() {}
