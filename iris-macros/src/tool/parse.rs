//! From tokens to the attribute arguments and the function, spans intact.

use proc_macro2::TokenStream;

use crate::attrs::{AttrArg, parse_args};
use crate::function::FnItem;

/// What `#[tool(...)] fn ...` was written with.
pub(crate) struct ToolInput {
    pub(crate) args: syn::Result<Vec<AttrArg>>,
    pub(crate) item: FnItem,
}

pub(crate) fn parse(attr: TokenStream, item: TokenStream) -> syn::Result<ToolInput> {
    let item: FnItem = syn::parse2(item).map_err(|err| {
        syn::Error::new(
            err.span(),
            "`#[tool]` goes on a function, such as `fn square(value: i64) -> i64 { .. }`",
        )
    })?;
    Ok(ToolInput {
        args: parse_args(attr),
        item,
    })
}
