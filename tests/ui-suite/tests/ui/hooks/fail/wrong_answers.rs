use iris::hooks::{AfterAnswer, BeforeAnswer, HookInput, HookRegistration};

async fn audit(_: &HookInput) -> BeforeAnswer {
    BeforeAnswer::Allow
}

fn main() {
    // Feedback is a `tool.after` answer; a `tool.before` hook cannot give it.
    let _ = HookRegistration::before("explain", |_: &HookInput| AfterAnswer::feedback("hi"));
    // A closure's parameter type must be written out.
    let _ = HookRegistration::before("allow", |_input| BeforeAnswer::Allow);
    // Run hooks are told; they answer nothing.
    let _ = HookRegistration::run_started("audit", audit);
}
