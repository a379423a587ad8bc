//! From tokens to the attribute arguments and the function, spans intact.

use proc_macro2::{Delimiter, Group, TokenStream};
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, FnArg, Signature, Visibility};

use crate::attrs::{AttrArg, parse_args};
use crate::docs::is_doc;

/// What `#[tool(...)] fn ...` was written with.
pub(crate) struct ToolInput {
    pub(crate) args: syn::Result<Vec<AttrArg>>,
    pub(crate) item: FnItem,
}

/// A function whose body is kept as tokens: the macro only reads the
/// signature, and not parsing bodies keeps every build (and every
/// incremental rebuild, which expands all macros again) fast.
#[derive(Clone)]
pub(crate) struct FnItem {
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) vis: Visibility,
    pub(crate) sig: Signature,
    pub(crate) body: Group,
}

impl Parse for FnItem {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let body: Group = input.parse()?;
        if body.delimiter() != Delimiter::Brace {
            return Err(syn::Error::new(
                body.span(),
                "expected the function body in braces",
            ));
        }
        Ok(Self {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

impl ToTokens for FnItem {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(self.attrs.iter().map(ToTokens::to_token_stream));
        self.vis.to_tokens(tokens);
        self.sig.to_tokens(tokens);
        self.body.to_tokens(tokens);
    }
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
pub(crate) fn stripped_fn(item: &FnItem) -> FnItem {
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
