//! `#[hook_factory]` and `#[middleware_factory]`: a plain function that
//! configuration names, called once with typed options, returning a hook or
//! a middleware.

mod emit;
mod model;

use proc_macro2::TokenStream;

use crate::attrs::parse_args;
use crate::function::FnItem;

/// What a factory makes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Hook,
    Middleware,
}

impl Kind {
    fn attribute(self) -> &'static str {
        match self {
            Kind::Hook => "#[hook_factory]",
            Kind::Middleware => "#[middleware_factory]",
        }
    }

    fn made(self) -> &'static str {
        match self {
            Kind::Hook => "hook",
            Kind::Middleware => "middleware",
        }
    }
}

pub(crate) fn expand(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let parsed: syn::Result<FnItem> = syn::parse2(item.clone());
    let item_fn = match parsed {
        Ok(item_fn) => item_fn,
        Err(err) => {
            let err = syn::Error::new(
                err.span(),
                format!(
                    "`{}` goes on a function, such as `fn create_feedback(text: String) -> Hook {{ .. }}`",
                    kind.attribute()
                ),
            );
            return crate::fallback::unparsed(item, err);
        }
    };
    match model::FactoryFn::check(kind, parse_args(attr), &item_fn) {
        Ok(factory) => emit::emit(&factory, &item_fn),
        Err(err) => crate::fallback::with_stand_in(&item_fn, err),
    }
}
