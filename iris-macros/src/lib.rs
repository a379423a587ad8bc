//! The `#[tool]`, `#[middleware]`, `#[toolbox]` and factory attribute
//! macros of Iris.
//!
//! Use them through the `iris` crate (`#[iris::tool]`), which documents every
//! key and shows the code they write; this crate holds only the expansions.

mod attrs;
mod docs;
mod errors;
mod factory;
mod fallback;
mod function;
mod middleware;
mod paths;
mod tool;
mod toolbox;

use proc_macro::TokenStream;

/// Turns a function into an LLM tool. See `iris::tool` for the keys.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// Turns an async function `(call, [cx,] next)` into a middleware. See
/// `iris::middleware`.
#[proc_macro_attribute]
pub fn middleware(attr: TokenStream, item: TokenStream) -> TokenStream {
    middleware::expand(attr.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an `impl` block into tools bound to an
/// `Arc` of the service. See `iris::toolbox`.
#[proc_macro_attribute]
pub fn toolbox(attr: TokenStream, item: TokenStream) -> TokenStream {
    toolbox::expand(attr.into(), item.into()).into()
}

/// Turns a function into a hook factory that configuration names. See
/// `iris::hook_factory`.
#[proc_macro_attribute]
pub fn hook_factory(attr: TokenStream, item: TokenStream) -> TokenStream {
    factory::expand(factory::Kind::Hook, attr.into(), item.into()).into()
}

/// Turns a function into a middleware factory that configuration names. See
/// `iris::middleware_factory`.
#[proc_macro_attribute]
pub fn middleware_factory(attr: TokenStream, item: TokenStream) -> TokenStream {
    factory::expand(factory::Kind::Middleware, attr.into(), item.into()).into()
}
