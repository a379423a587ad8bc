use iris::{Next, ToolCall, ToolResult};

struct Audit;

impl Audit {
    #[iris::middleware]
    async fn handle(&self, call: ToolCall, next: Next<'_>) -> ToolResult {
        next.run(call).await.unwrap_or_else(|e| ToolResult::text(e.to_string()))
    }
}

fn main() {}
