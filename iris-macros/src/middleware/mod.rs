//! `#[middleware]`: parse, check into a model, emit.

mod emit;
mod model;
mod parse;

use proc_macro2::TokenStream;

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let input = match parse::parse(attr, item.clone()) {
        Ok(input) => input,
        Err(err) => return crate::fallback::unparsed(item, err),
    };
    match model::MiddlewareFn::from_input(&input) {
        Ok(middleware) => emit::emit(&middleware, &input.item),
        Err(err) => crate::fallback::with_stand_in(&input.item, err),
    }
}
