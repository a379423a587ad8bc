//! The root path generated code reaches Iris through.

use proc_macro2::TokenStream;
use quote::quote;

/// The path of the `iris` crate as the user's crate sees it: `::iris` unless
/// `crate = "..."` renamed it.
pub(crate) fn private_path(root: Option<&syn::Path>) -> TokenStream {
    root.map_or_else(
        || quote!(::iris::__private),
        |root| quote!(#root::__private),
    )
}
