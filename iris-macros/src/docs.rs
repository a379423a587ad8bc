//! Doc comments as description sources.

use syn::{Attribute, Expr, Lit, Meta};

/// The values of `#[doc = ...]` attributes, in order: string literals and
/// macro calls such as `include_str!(..)`, which `concat!` accepts.
pub(crate) fn doc_values(attrs: &[Attribute]) -> Vec<Expr> {
    attrs
        .iter()
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(nv) if nv.path.is_ident("doc") => Some(nv.value.clone()),
            _ => None,
        })
        .collect()
}

/// Whether every doc value is a literal holding only whitespace (so the
/// description would be empty). A macro call counts as content: its text
/// is only known when the crate compiles.
pub(crate) fn all_blank(docs: &[Expr]) -> bool {
    docs.iter().all(|doc| match doc {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Str(s) => s.value().trim().is_empty(),
            _ => false,
        },
        _ => false,
    })
}

/// Whether `attr` is a doc comment.
pub(crate) fn is_doc(attr: &Attribute) -> bool {
    attr.path().is_ident("doc")
}
