//! From tokens to the attribute arguments and the function, spans intact.

use proc_macro2::TokenStream;
use syn::{Attribute, FnArg, ItemFn};

use crate::attrs::{AttrArg, parse_args};
use crate::docs::is_doc;

/// What `#[tool(...)] fn ...` was written with.
pub(crate) struct ToolInput {
    pub(crate) args: syn::Result<Vec<AttrArg>>,
    pub(crate) item: ItemFn,
}

pub(crate) fn parse(attr: TokenStream, item: TokenStream) -> syn::Result<ToolInput> {
    let item: ItemFn = syn::parse2(item).map_err(|err| {
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

/// Parameter attributes that belong to Iris: `#[ctx]`, `#[state]`, `#[args]`.
pub(crate) const MARKERS: &[&str] = &["ctx", "state", "args"];

/// Parameter attributes that move to the generated argument field.
pub(crate) fn is_field_attr(attr: &Attribute) -> bool {
    is_doc(attr) || attr.path().is_ident("serde") || attr.path().is_ident("schemars")
}

pub(crate) fn is_marker(attr: &Attribute) -> bool {
    MARKERS.iter().any(|m| attr.path().is_ident(m))
}

/// The function as the user wrote it, minus what only Iris reads: parameter
/// doc comments, markers and serde/schemars attributes (which rustc would
/// reject on a parameter).
pub(crate) fn stripped_fn(item: &ItemFn) -> ItemFn {
    let mut item = item.clone();
    for input in &mut item.sig.inputs {
        if let FnArg::Typed(param) = input {
            param
                .attrs
                .retain(|attr| !is_field_attr(attr) && !is_marker(attr));
        }
    }
    item
}
