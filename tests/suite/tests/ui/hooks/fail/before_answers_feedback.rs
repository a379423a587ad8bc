use iris::{AfterAnswer, HookInput, HookRegistration};

fn main() {
    // Feedback is a `tool.after` answer; a `tool.before` hook cannot give it.
    let _ = HookRegistration::before("explain", |_: &HookInput| AfterAnswer::feedback("hi"));
}
