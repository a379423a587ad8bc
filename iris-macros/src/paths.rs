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

/// The same root as a string, for `#[serde(crate = "...")]` and
/// `#[schemars(crate = "...")]`.
pub(crate) fn private_path_string(root: Option<&syn::Path>, dep: &str) -> String {
    let root = root.map_or_else(
        || "::iris".to_owned(),
        |p| quote!(#p).to_string().replace(' ', ""),
    );
    format!("{root}::__private::{dep}")
}
