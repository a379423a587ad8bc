use iris::{BeforeAnswer, HookRegistration};

fn main() {
    let _ = HookRegistration::before("allow", |_input| BeforeAnswer::Allow);
}
