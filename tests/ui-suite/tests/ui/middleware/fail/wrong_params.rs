use iris::{ToolCall, ToolResult};

#[iris::middleware]
async fn audit(call: ToolCall) -> ToolResult {
    let _ = call;
    ToolResult::text("no next")
}

fn main() {}
