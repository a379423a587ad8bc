use iris::{BeforeAnswer, HookInput, HookRegistration};

async fn audit(_: &HookInput) -> BeforeAnswer {
    BeforeAnswer::Allow
}

fn main() {
    // Run hooks are told; they answer nothing.
    let _ = HookRegistration::run_started("audit", audit);
}
