use iris::{Next, ToolCall, ToolContext, ToolResult};
use iris::middleware::{Middleware, MiddlewareError};

/// Times the call.
#[iris::middleware]
pub async fn timing(call: ToolCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
    let started = std::time::Instant::now();
    let result = next.run(call).await?;
    Ok(result.with_stat("wrapped_seconds", started.elapsed().as_secs_f64()))
}

#[iris::middleware(name = "audit_log")]
async fn audit(call: ToolCall, cx: &ToolContext, next: Next<'_>) -> ToolResult {
    let _ = cx.run_id();
    next.run(call).await.unwrap_or_else(|e| ToolResult::text(e.to_string()))
}

fn assert_middleware<M: Middleware>(_: M) {}

fn main() {
    assert_middleware(Timing);
    assert_middleware(Audit);
}
