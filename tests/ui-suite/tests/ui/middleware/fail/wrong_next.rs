use iris::{ToolCall, ToolResult};

#[iris::middleware]
async fn audit(call: ToolCall, next: String) -> ToolResult {
    let _ = (call, next);
    ToolResult::text("no next")
}

fn main() {}
