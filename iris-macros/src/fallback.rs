//! What an expansion emits when the input is wrong: the errors, plus the
//! user's function and a stand-in type so code that uses them does not
//! cascade into unrelated errors.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ext::IdentExt as _;

use crate::function::{FnItem, stripped_fn};

/// The item did not parse as a function: keep it as written.
pub(crate) fn unparsed(item: TokenStream, err: syn::Error) -> TokenStream {
    let mut out = err.into_compile_error();
    out.extend(item);
    out
}

/// A `#[tool]` or `#[middleware]` with errors: the function, an empty
/// struct of the type name the macro would have written, and the errors.
pub(crate) fn with_stand_in(item: &FnItem, err: syn::Error) -> TokenStream {
    let err = err.into_compile_error();
    let item_out = stripped_fn(item);
    // A method cannot have a type beside it inside an `impl` block.
    if item.sig.receiver().is_some() {
        return quote!(#err #item_out);
    }
    let vis = &item.vis;
    let struct_ident = syn::Ident::new(
        &crate::function::struct_name(&item.sig.ident.unraw().to_string()),
        item.sig.ident.span(),
    );
    quote! {
        #err
        #item_out
        #[allow(dead_code)]
        #vis struct #struct_ident;
    }
}
