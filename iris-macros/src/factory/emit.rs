//! From the checked factory to Rust: the options struct, the factory trait
//! impl on a unit struct, and the catalog entry.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::Kind;
use super::model::{FactoryFn, Options};
use crate::function::{FnItem, stripped_fn};
use crate::paths::private_path;

pub(crate) fn emit(factory: &FactoryFn, item: &FnItem) -> TokenStream {
    let private = private_path(factory.root.as_ref());
    let item = stripped_fn(item);
    let vis = &factory.vis;
    let struct_ident = &factory.struct_ident;
    let fn_ident = &factory.fn_ident;
    let name = &factory.name;
    let function = syn::ext::IdentExt::unraw(fn_ident).to_string();
    let (trait_name, made, catalog) = match factory.kind {
        Kind::Hook => (
            quote!(HookFactory),
            quote!(__iris::Hook),
            quote!(catalog_hook_factory),
        ),
        Kind::Middleware => (
            quote!(MiddlewareFactory),
            quote!(__iris::Arc<dyn __iris::Middleware>),
            quote!(catalog_middleware_factory),
        ),
    };
    let struct_doc = format!(
        "The `{name}` {} factory, written by `{}` from the function of the same name.",
        factory.kind.made(),
        factory.kind.attribute()
    );
    // A return type that is not what the factory must make is reported on
    // the type.
    let span = factory
        .output
        .as_ref()
        .map_or_else(proc_macro2::Span::call_site, syn::spanned::Spanned::span);
    let wrap = match factory.kind {
        Kind::Hook => quote_spanned!(span=> ::core::convert::Into::<__iris::Hook>::into),
        Kind::Middleware => quote_spanned!(span=> __iris::arc_middleware),
    };
    let (options_ty, options_struct, build_body) = match &factory.options {
        Options::Struct(ty) => (
            quote!(#ty),
            TokenStream::new(),
            quote! {
                let options = __iris::parse_options_struct::<#ty>(options)?;
                ::core::result::Result::Ok(#wrap(#fn_ident(options)))
            },
        ),
        Options::Fields(fields) => {
            let serde_crate = "__iris::serde";
            let schemars_crate = "__iris::schemars";
            let idents: Vec<_> = fields.iter().map(|f| &f.ident).collect();
            let declared = fields.iter().map(|f| {
                let (ident, ty, attrs) = (&f.ident, &f.ty, &f.attrs);
                quote!(#(#attrs)* #ident: #ty,)
            });
            (
                quote!(__IrisOptions),
                quote! {
                    #[derive(__iris::serde::Deserialize, __iris::schemars::JsonSchema)]
                    #[serde(crate = #serde_crate, deny_unknown_fields)]
                    #[schemars(crate = #schemars_crate)]
                    struct __IrisOptions {
                        #(#declared)*
                    }
                },
                quote! {
                    let __IrisOptions { #(#idents),* } = __iris::parse_options::<__IrisOptions>(options)?;
                    ::core::result::Result::Ok(#wrap(#fn_ident(#(#idents),*)))
                },
            )
        }
    };
    quote! {
        // Options arrive owned, parsed from configuration.
        #[allow(clippy::needless_pass_by_value)]
        #item

        #[doc = #struct_doc]
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #struct_ident;

        const _: () = {
            use #private as __iris;

            #options_struct

            #[automatically_derived]
            impl __iris::#trait_name for #struct_ident {
                fn name(&self) -> &'static str {
                    #name
                }

                fn options_schema(&self) -> __iris::serde_json::Value {
                    __iris::options_schema::<#options_ty>()
                }

                fn build(
                    &self,
                    options: &__iris::serde_json::Value,
                ) -> ::core::result::Result<#made, __iris::ArgumentError> {
                    #build_body
                }
            }

            __iris::#catalog!(#struct_ident, #name, #function);
        };
    }
}
