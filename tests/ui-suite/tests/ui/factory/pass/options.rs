// Factories with no options, plain options, an `#[args]` struct, a renamed
// factory and a `Patch` option all expand.
use iris::Patch;
use iris::hooks::{AfterAnswer, Hook, HookInput};

/// No options.
#[iris::hook_factory]
fn create_plain() -> Hook {
    Hook::after(|_: &HookInput| AfterAnswer::Nothing)
}

/// Options of a struct.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Options {
    /// What to say.
    text: String,
}

/// One `#[args]` struct.
#[iris::hook_factory(name = "explain")]
fn create_from_struct(#[args] options: Options) -> Hook {
    Hook::after(move |_: &HookInput| AfterAnswer::feedback(&options.text))
}

/// A `Patch` option, optional without `#[serde(default)]`.
#[iris::hook_factory]
fn create_patched(
    /// Extra text, or `null` for none.
    extra: Patch<String>,
) -> Hook {
    let text = match extra {
        Patch::Set(text) => text,
        Patch::Keep | Patch::Clear => String::new(),
    };
    Hook::after(move |_: &HookInput| AfterAnswer::feedback(&text))
}

fn main() {
    use iris::hooks::HookFactory as _;
    assert_eq!(CreateFromStruct.name(), "explain");
    assert!(CreatePlain.build(&serde_json::Value::Null).is_ok());
    assert!(CreatePatched.build(&serde_json::json!({})).is_ok());
}
