//! The toolbox's tokens: the `impl` block as written (minus what only Iris
//! reads), one tool type per `#[tool]` method, and the `Toolbox` impl.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt as _;

use super::parse::{ImplBlock, Item};
use crate::function::stripped_fn;
use crate::paths::private_path;
use crate::tool::{ToolFn, emit as tool_emit};

pub(crate) fn emit(block: &ImplBlock, tools: &[ToolFn], root: Option<&syn::Path>) -> TokenStream {
    let private = private_path(root);
    let p = quote!(__iris);
    let self_ty = &block.self_ty;
    let impl_block = impl_block(block);
    let mut types = Vec::with_capacity(tools.len());
    let mut constructors = Vec::with_capacity(tools.len());
    // Every tool's parameter checks, so a failing one is reported on the
    // parameter alone, not again where the tools are made.
    let mut predicates = Vec::new();
    for tool in tools {
        predicates.extend(tool_emit::param_predicates(tool, &p));
        let method = tool.fn_ident.unraw().to_string();
        let struct_ident = format_ident!("__IrisTool_{}", method);
        let rust_item = quote! {
            fn rust_item(&self) -> &'static str {
                ::core::concat!(
                    ::core::module_path!(),
                    "::",
                    ::core::stringify!(#self_ty),
                    "::",
                    #method
                )
            }
        };
        let tool_impl = tool_emit::tool_impl(tool, &p, &struct_ident, &rust_item);
        let name = &tool.name.value;
        // Generic services have no one type to name.
        let catalog_entry = block
            .generics
            .params
            .is_empty()
            .then(|| quote!(#p::catalog_toolbox_tool!(#self_ty, #name);));
        types.push(quote! {
            #[allow(non_camel_case_types)]
            struct #struct_ident(#p::Arc<#self_ty>);

            const _: () = {
                #tool_impl
            };

            #catalog_entry
        });
        constructors.push(quote! {
            #p::Arc::new(#struct_ident(#p::Arc::clone(&service))) as #p::Arc<dyn #p::DynTool>
        });
    }
    let where_clause = if predicates.is_empty() {
        TokenStream::new()
    } else {
        quote!(where #(#predicates),*)
    };
    quote! {
        #impl_block

        const _: () = {
            use #private as __iris;
            #[allow(unused_imports)]
            use __iris::{ViaIntoToolResult as _, ViaSerializeOk as _};

            #(#types)*

            #[automatically_derived]
            impl #p::Toolbox for #self_ty #where_clause {
                fn tools(service: #p::Arc<Self>) -> #p::Vec<#p::Arc<dyn #p::DynTool>> {
                    #p::Vec::from([#(#constructors),*])
                }
            }
        };
    }
}

/// The errors, the `impl` block as written (so code calling its methods
/// does not cascade into more errors), and, for a concrete inherent impl,
/// a `Toolbox` with no tools so `register_toolbox` does not either.
pub(crate) fn with_errors(
    block: &ImplBlock,
    err: syn::Error,
    root: Option<&syn::Path>,
) -> TokenStream {
    let err = err.into_compile_error();
    let impl_block = impl_block(block);
    if block.trait_.is_some() || !block.generics.params.is_empty() {
        return quote!(#err #impl_block);
    }
    let private = private_path(root);
    let self_ty = &block.self_ty;
    quote! {
        #err
        #impl_block
        const _: () = {
            use #private as __iris;
            impl __iris::Toolbox for #self_ty {
                fn tools(_: __iris::Arc<Self>) -> __iris::Vec<__iris::Arc<dyn __iris::DynTool>> {
                    __iris::Vec::new()
                }
            }
        };
    }
}

/// The block as written, each tool method without its `#[tool]` and its
/// parameters' Iris attributes.
fn impl_block(block: &ImplBlock) -> TokenStream {
    let ImplBlock {
        attrs,
        impl_token,
        generics,
        trait_,
        self_ty,
        brace,
        items,
    } = block;
    let where_clause = &generics.where_clause;
    let items = items.iter().map(|item| match item {
        Item::Tool { method, .. } => {
            let method = stripped_fn(method);
            // Tool arguments arrive owned, parsed from JSON, so taking them
            // by value is the design rather than an oversight.
            quote!(#[allow(clippy::needless_pass_by_value)] #method)
        }
        Item::Other(tokens) => tokens.clone(),
    });
    let mut body = proc_macro2::Group::new(proc_macro2::Delimiter::Brace, quote!(#(#items)*));
    body.set_span(brace.span());
    quote!(#(#attrs)* #impl_token #generics #trait_ #self_ty #where_clause #body)
}

#[cfg(test)]
mod tests {
    use quote::quote;

    #[test]
    fn toolbox_expansion() {
        let expanded = super::super::expand(
            quote!(),
            quote! {
                impl Library {
                    const SHELVES: u8 = 3;

                    /// Find a book.
                    #[tool(read_only)]
                    pub async fn find(
                        &self,
                        /// Words of the title.
                        query: String,
                    ) -> Vec<String> {
                        self.search(&query)
                    }

                    /// Count the books on a shelf.
                    #[iris::tool(name = "count_books")]
                    fn count(&self, shelf: u8, #[ctx] cx: &ToolContext) -> usize {
                        self.books(shelf).len()
                    }

                    fn search(&self, query: &str) -> Vec<String> {
                        Vec::new()
                    }
                }
            },
        );
        let file = syn::parse2(expanded).expect("expansion is a file");
        insta::assert_snapshot!(prettyplease::unparse(&file));
    }
}
