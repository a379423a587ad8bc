use iris::{Next, ToolCall, ToolResult};

#[iris::middleware]
fn audit(call: ToolCall, next: Next<'_>) -> ToolResult {
    let _ = (call, next);
    ToolResult::text("sync")
}

fn main() {}
