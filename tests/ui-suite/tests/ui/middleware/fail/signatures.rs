use iris::{Next, ToolCall, ToolResult};

#[iris::middleware]
async unsafe fn dangerous(call: ToolCall, next: Next<'_>) -> ToolResult {
    next.run(call).await.unwrap_or_else(|e| ToolResult::text(e.to_string()))
}

#[iris::middleware]
async extern "C" fn foreign(call: ToolCall, next: Next<'_>) -> ToolResult {
    next.run(call).await.unwrap_or_else(|e| ToolResult::text(e.to_string()))
}

#[iris::middleware]
async fn bounded(call: ToolCall, next: Next<'_>) -> ToolResult
where
    ToolCall: Send,
{
    next.run(call).await.unwrap_or_else(|e| ToolResult::text(e.to_string()))
}

fn main() {}
