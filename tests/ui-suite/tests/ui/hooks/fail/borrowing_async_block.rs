// A plain closure cannot return a future that borrows its argument; rustc
// says so in its own words. The form that works is an async closure,
// `async |input: &HookInput| { .. }` (see `ui/hooks/pass/every_shape.rs`).
use iris::hooks::{BeforeAnswer, HookInput, HookRegistration};

fn main() {
    let _ = HookRegistration::before("natural", |input: &HookInput| async move {
        std::future::ready(()).await;
        if input.tool.is_some() { BeforeAnswer::Allow } else { BeforeAnswer::deny("no tool") }
    });
}
