//! From the checked model to the `Middleware` implementation.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;

use super::model::MiddlewareFn;
use crate::function::FnItem;
use crate::paths::private_path;

pub(crate) fn emit(middleware: &MiddlewareFn, item: &FnItem) -> TokenStream {
    let private = private_path(middleware.root.as_ref());
    let vis = &middleware.vis;
    let struct_ident = &middleware.struct_ident;
    let fn_ident = &middleware.fn_ident;
    let name = &middleware.name;
    let doc = format!(
        "The `{name}` middleware, written by `#[middleware]` from the function of the same name."
    );
    // Each argument goes through a trait implemented only for the type its
    // position takes, spanned on the parameter's type: a parameter of the
    // wrong type is reported there, saying what was expected, instead of as
    // a mismatch on the whole call.
    let types = &middleware.param_types;
    let call_arg = types.first().map(|ty| {
        quote_spanned! {ty.span()=> <#ty as __iris::MiddlewareCallParam>::from_call(call)}
    });
    let next_arg = types.last().map(|ty| {
        quote_spanned! {ty.span()=> <#ty as __iris::MiddlewareNextParam<'a>>::from_next(next)}
    });
    let call = if middleware.takes_context {
        let cx_arg = types.get(1).map(|ty| {
            quote_spanned! {ty.span()=> <#ty as __iris::MiddlewareContextParam<'a>>::from_context(cx)}
        });
        quote!(#fn_ident(#call_arg, #cx_arg, #next_arg).await)
    } else {
        quote!({ let _ = cx; #fn_ident(#call_arg, #next_arg).await })
    };
    let convert = quote_spanned! {middleware.output_span=>
        __iris::IntoMiddlewareResult::into_middleware_result(__iris_out)
    };
    quote! {
        #item

        #[doc = #doc]
        #vis struct #struct_ident;

        const _: () = {
            use #private as __iris;

            #[automatically_derived]
            impl __iris::Middleware for #struct_ident {
                fn handle<'a>(
                    &'a self,
                    call: __iris::ToolCall,
                    cx: &'a __iris::ToolContext,
                    next: __iris::Next<'a>,
                ) -> __iris::BoxFuture<'a, ::core::result::Result<__iris::ToolResult, __iris::MiddlewareError>> {
                    __iris::Box::pin(async move {
                        let __iris_out = #call;
                        #convert
                    })
                }

                fn name(&self) -> &str {
                    #name
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    #[test]
    fn middleware_expansion() {
        let out = super::super::expand(
            quote!(),
            quote! {
                async fn audit(call: ToolCall, cx: &ToolContext, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
                    next.run(call).await
                }
            },
        );
        let file = syn::parse2(out).expect("expansion is a file");
        insta::assert_snapshot!(prettyplease::unparse(&file));
    }
}
