// Every way a factory's signature can be wrong, each reported on the token
// at fault.
use iris::{State, ToolContext};
use iris::hooks::{AfterAnswer, Hook, HookInput};

/// Async: a factory returns its hook at once.
#[iris::hook_factory]
async fn create_async(text: String) -> Hook {
    Hook::after(move |_: &HookInput| AfterAnswer::feedback(&text))
}

/// No return type.
#[iris::hook_factory]
fn create_nothing(text: String) {
    let _ = text;
}

/// Generic.
#[iris::hook_factory]
fn create_generic<T: Into<String>>(text: String) -> Hook {
    Hook::after(move |_: &HookInput| AfterAnswer::feedback(&text))
}

/// Borrowed option.
#[iris::hook_factory]
fn create_borrowed(text: &str) -> Hook {
    let text = text.to_owned();
    Hook::after(move |_: &HookInput| AfterAnswer::feedback(&text))
}

/// A call context, which a factory never has.
#[iris::hook_factory]
fn create_with_context(#[ctx] cx: &ToolContext, #[state] limit: State<u32>) -> Hook {
    let _ = (cx, limit);
    Hook::after(|_: &HookInput| AfterAnswer::Nothing)
}

/// A pattern instead of a name.
#[iris::hook_factory]
fn create_pattern((a, b): (String, String)) -> Hook {
    let text = a + &b;
    Hook::after(move |_: &HookInput| AfterAnswer::feedback(&text))
}

/// An unknown key.
#[iris::hook_factory(nmae = "x")]
fn create_misspelt(text: String) -> Hook {
    Hook::after(move |_: &HookInput| AfterAnswer::feedback(&text))
}

/// A middleware factory without a middleware to return.
#[iris::middleware_factory]
fn create_no_middleware() {}

fn main() {}
