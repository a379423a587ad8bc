//! `#[toolbox]`: the `#[tool]` methods of an `impl` block become tools bound
//! to an `Arc` of the service.

mod emit;
mod parse;

use proc_macro2::TokenStream;

use crate::attrs::{check_keys, parse_args};
use crate::errors::Errors;
use crate::tool::{ToolFn, ToolInput};
use parse::{ImplBlock, Item};

/// The keys `#[toolbox(..)]` takes.
const KEYS: &[&str] = &["crate"];

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let block: ImplBlock = match syn::parse2(item.clone()) {
        Ok(block) => block,
        Err(err) => {
            let err = syn::Error::new(
                err.span(),
                format!(
                    "`#[toolbox]` goes on an `impl` block of a service, such as `impl Billing {{ #[tool] async fn lookup(&self, id: String) -> String {{ .. }} }}` ({err})"
                ),
            );
            return crate::fallback::unparsed(item, err);
        }
    };
    let mut errors = Errors::default();
    let root = root(attr, &mut errors);
    check_block(&block, &mut errors);
    let mut tools = Vec::new();
    for item in &block.items {
        if let Item::Tool { args, method, .. } = item {
            let input = ToolInput {
                args: parse_args(args.clone()),
                item: (**method).clone(),
            };
            if let Some(tool) = errors.ok(ToolFn::from_method(&input)) {
                tools.push(tool);
            }
        }
    }
    if tools.is_empty() && block.items.iter().all(|i| matches!(i, Item::Other(_))) {
        errors.at(
            block.impl_token.span,
            "this toolbox has no `#[tool]` method; mark the methods that are tools with `#[tool]`",
        );
    }
    match errors.finish() {
        Ok(()) => emit::emit(&block, &tools, root.as_ref()),
        Err(err) => emit::with_errors(&block, err, root.as_ref()),
    }
}

/// `crate = "..."`, when given.
fn root(attr: TokenStream, errors: &mut Errors) -> Option<syn::Path> {
    let args = errors.ok(parse_args(attr)).unwrap_or_default();
    let mut root = None;
    for arg in check_keys(args, KEYS, errors) {
        if let Some(lit) = errors.ok(arg.string()) {
            root = errors.ok(lit.parse::<syn::Path>().map_err(|_| {
                syn::Error::new(
                    lit.span(),
                    "expected a path for `crate`, such as `\"::iris\"`",
                )
            }));
        }
    }
    root
}

/// A toolbox is the inherent `impl` of one concrete type.
fn check_block(block: &ImplBlock, errors: &mut Errors) {
    if let Some(trait_) = &block.trait_ {
        errors.push(syn::Error::new_spanned(
            trait_,
            "`#[toolbox]` goes on the type's own `impl` block, not on a trait implementation",
        ));
    }
    if !block.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &block.generics.params,
            "a toolbox cannot be generic: each tool's schema and definition are made once, for one concrete service type",
        ));
    }
    if let Some(where_clause) = &block.generics.where_clause {
        errors.push(syn::Error::new_spanned(
            where_clause,
            "a toolbox cannot have a `where` clause: its tools are made for one concrete service type",
        ));
    }
}
