use iris::ToolContext;

/// Tell the run id.
#[iris::tool]
fn whoami(#[ctx] first: &ToolContext, #[ctx] second: &ToolContext) -> String {
    format!("{} {}", first.run_id(), second.run_id())
}

fn main() {}
