//! `#[tool]`: parse, check into a model, emit.

pub(crate) mod emit;
mod model;
mod parse;

use proc_macro2::TokenStream;

pub(crate) use model::ToolFn;
pub(crate) use parse::ToolInput;

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let input = match parse::parse(attr, item.clone()) {
        Ok(input) => input,
        Err(err) => return crate::fallback::unparsed(item, err),
    };
    match model::ToolFn::from_input(&input) {
        Ok(tool) => emit::emit(&tool, &input.item),
        Err(err) => crate::fallback::with_stand_in(&input.item, err),
    }
}
