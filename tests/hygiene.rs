//! Generated code must compile next to names that shadow what it uses, and
//! without a single warning.
#![deny(warnings, unused_qualifications, missing_docs)]

struct Result;
struct Option;
struct Box;
struct OnceLock;
struct Tool;
struct ToolBody;
struct Arc;
struct Vec;
struct Toolbox;
struct DynTool;
mod serde {}
mod serde_json {}
mod schemars {}
mod core {}
mod std {}

/// Echo the text back.
#[must_use]
#[iris::tool(read_only, concurrency_safe)]
pub fn echo(
    /// The text.
    text: String,
    /// Whether to shout.
    loud: ::core::option::Option<bool>,
) -> String {
    let mut out = text;
    if loud.unwrap_or(false) {
        out.push('!');
    }
    out
}

/// Fail on purpose.
///
/// # Errors
/// Always, with `reason`.
#[iris::tool]
pub async fn fail(
    /// Why.
    reason: String,
) -> ::core::result::Result<(), String> {
    ::core::future::ready(()).await;
    ::core::result::Result::Err(reason)
}

/// Read the run id.
#[must_use]
#[iris::tool(read_only)]
pub fn run_id(#[ctx] cx: &iris::ToolContext) -> String {
    cx.run_id().to_string()
}

/// A service whose methods are tools.
pub struct Greeter {
    /// The greeting.
    pub greeting: ::std::string::String,
}

#[iris::toolbox]
impl Greeter {
    /// Greet someone.
    #[must_use]
    #[tool(read_only)]
    pub async fn greet(
        &self,
        /// Whom.
        name: ::std::string::String,
    ) -> ::std::string::String {
        ::core::future::ready(()).await;
        ::std::format!("{} {name}", self.greeting)
    }

    /// Count the greeting's letters.
    #[must_use]
    #[tool(read_only)]
    pub fn letters(&self) -> usize {
        self.greeting.len()
    }
}

#[test]
fn a_toolbox_next_to_shadowing_names_compiles_and_works() {
    let greeter = ::std::sync::Arc::new(Greeter {
        greeting: "hello".into(),
    });
    let tools = <Greeter as iris::tool::Toolbox>::tools(greeter);
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0].definition_dyn().name(), "greet");
}

#[test]
fn tools_next_to_shadowing_names_compile_and_work() {
    use iris::Tool as _;
    let definition = Echo.definition();
    assert_eq!(definition.name(), "echo");
    assert!(Fail.definition().input_schema()["properties"]["reason"].is_object());
    assert_eq!(
        RunId.definition().input_schema()["properties"],
        ::serde_json::json!({})
    );
}
