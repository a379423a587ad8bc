//! From tokens to the attribute arguments and the function.

use proc_macro2::TokenStream;

use crate::attrs::{AttrArg, parse_args};
use crate::function::FnItem;

/// What `#[middleware(...)] async fn ...` was written with.
pub(crate) struct MiddlewareInput {
    pub(crate) args: syn::Result<Vec<AttrArg>>,
    pub(crate) item: FnItem,
}

pub(crate) fn parse(attr: TokenStream, item: TokenStream) -> syn::Result<MiddlewareInput> {
    let item: FnItem = syn::parse2(item).map_err(|err| {
        syn::Error::new(
            err.span(),
            "`#[middleware]` goes on an async function, such as `async fn audit(call: ToolCall, next: Next<'_>) -> ToolResult { .. }`",
        )
    })?;
    Ok(MiddlewareInput {
        args: parse_args(attr),
        item,
    })
}
