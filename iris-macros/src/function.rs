//! The function model every attribute macro shares: a function read
//! without its body, the parameter markers Iris owns, what is stripped from
//! the re-emitted function, and the names generated from a function's.

use proc_macro2::{Delimiter, Group, TokenStream};
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned as _;
use syn::{Attribute, FnArg, Signature, Visibility};

use crate::docs::is_doc;
use crate::errors::Errors;

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

/// A `Patch<T>` parameter is optional as an `Option<T>` one is (serde
/// defaults that by its name alone): a left-out property must reach it as
/// `Patch::Keep`, not as a "missing field" error.
pub(crate) fn default_patch(ty: &syn::Type, attrs: &mut Vec<Attribute>) {
    let is_patch = matches!(ty, syn::Type::Path(path) if path.qself.is_none()
        && path.path.segments.last().is_some_and(|last| last.ident == "Patch"
            && matches!(last.arguments, syn::PathArguments::AngleBracketed(_))));
    let has_default = attrs.iter().any(|attr| {
        attr.path().is_ident("serde")
            && quote::ToTokens::to_token_stream(&attr.meta).into_iter().any(|token| {
                matches!(&token, proc_macro2::TokenTree::Group(group) if group.stream().into_iter().any(|inner| {
                    matches!(&inner, proc_macro2::TokenTree::Ident(ident) if ident == "default")
                }))
            })
    });
    if is_patch && !has_default {
        attrs.push(syn::parse_quote!(#[serde(default)]));
    }
}

/// `read_file` -> `ReadFile`.
pub(crate) fn struct_name(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = true;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    if out.is_empty() {
        out.push_str("Tool");
    }
    out
}

/// How a macro names what it makes of a function, for the signature checks
/// every attribute macro shares.
pub(crate) struct Made {
    /// "a tool", "a factory", "a middleware".
    pub(crate) what: &'static str,
    /// Why its types must be concrete.
    pub(crate) concrete: &'static str,
    /// Who calls it, and so could never uphold an `unsafe fn`'s contract.
    pub(crate) caller: &'static str,
}

/// What no function an Iris attribute macro takes may be: generic (or
/// with a `where` clause), `unsafe`, `extern` or variadic, each reported on
/// its own token.
pub(crate) fn check_plain(sig: &Signature, made: &Made, errors: &mut Errors) {
    let Made {
        what,
        concrete,
        caller,
    } = made;
    if !sig.generics.params.is_empty() {
        errors.at(
            sig.generics.params.span(),
            format!("{what} cannot be generic; {concrete}"),
        );
    }
    if let Some(where_clause) = &sig.generics.where_clause {
        errors.at(
            where_clause.span(),
            format!("{what} cannot have a `where` clause; {concrete}"),
        );
    }
    if let syn::Safety::Unsafe(token) = &sig.safety {
        errors.at(
            token.span,
            format!("{what} cannot be an `unsafe fn`; {caller} cannot uphold its safety contract"),
        );
    }
    if let Some(abi) = &sig.abi {
        errors.at(
            abi.span(),
            format!("{what} must use the Rust ABI; remove the `extern` qualifier"),
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(variadic.span(), format!("{what} cannot be variadic"));
    }
}
