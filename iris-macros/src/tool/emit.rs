//! From the checked model to Rust: the only module that writes tokens.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{ToTokens as _, format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;

use super::model::{Description, Output, Param, Site, ToolFn};
use crate::function::{FnItem, stripped_fn};
use crate::paths::private_path;

pub(crate) fn emit(tool: &ToolFn, item: &FnItem) -> TokenStream {
    let private = private_path(tool.root.as_ref());
    // Inside the const block, one short local name stands for the private
    // module: fewer tokens to parse and paths to resolve per tool.
    let p = quote!(__iris);
    let item = stripped_fn(item);
    let vis = &tool.vis;
    let struct_ident = &tool.struct_ident;
    let struct_doc = format!(
        "The `{}` tool, written by `#[tool]` from the function of the same name.",
        tool.name.value
    );
    let tool_impl = tool_impl(tool, &p, struct_ident, &TokenStream::new());
    let name = &tool.name.value;
    let function = syn::ext::IdentExt::unraw(&tool.fn_ident).to_string();
    quote! {
        // Tool arguments arrive owned, parsed from JSON, so taking them by
        // value is the design rather than an oversight.
        #[allow(clippy::needless_pass_by_value)]
        #item

        #[doc = #struct_doc]
        #vis struct #struct_ident;

        const _: () = {
            use #private as __iris;
            #[allow(unused_imports)]
            use __iris::{ViaIntoToolResult as _, ViaSerializeOk as _};

            #tool_impl

            __iris::catalog_tool!(#struct_ident, #name, #function);
        };
    }
}

/// The argument struct (when the parameters make one) and `impl Tool` for
/// `struct_ident`, with `extra` items in the impl; inside a block where
/// `p` names the private module.
pub(crate) fn tool_impl(
    tool: &ToolFn,
    p: &TokenStream,
    struct_ident: &syn::Ident,
    extra: &TokenStream,
) -> TokenStream {
    let (args_ty, args_struct) = args_type(tool, p);
    let check = param_check(tool, p);
    let bounds = param_bounds(tool, p);
    let definition = definition_fn(tool, p, &args_ty);
    let parse = parse_fn(tool, p, &args_ty);
    let call = call_fn(tool, p);
    quote! {
        #check

        #args_struct

        #[automatically_derived]
        impl #p::Tool for #struct_ident #bounds {
            type Args = #args_ty;
            #definition
            #parse
            #call
            #extra
        }
    }
}

/// `where T: ToolParam` for each parameter type, spanned on the type: a type
/// without `Deserialize` or `JsonSchema` fails this one predicate, on the
/// parameter, and the derived code (which may assume it) reports nothing
/// more. A field parsed or described through `with` needs neither derive,
/// so it is left out.
fn param_bounds(tool: &ToolFn, p: &TokenStream) -> TokenStream {
    let predicates = param_predicates(tool, p);
    if predicates.is_empty() {
        TokenStream::new()
    } else {
        quote!(where #(#predicates),*)
    }
}

/// A function that is never called, with `where T: ToolParamCheck` for each
/// parameter type: checked before the argument struct, it makes Iris's own
/// message, with the derive lines that fix it, the first error on a
/// parameter type that lacks a derive.
fn param_check(tool: &ToolFn, p: &TokenStream) -> TokenStream {
    let predicates: Vec<TokenStream> = checked_types(tool)
        .map(|ty| {
            let bound = respan(quote!(#p::ToolParamCheck), ty.span());
            quote_spanned!(ty.span()=> #ty: #bound)
        })
        .collect();
    if predicates.is_empty() {
        return TokenStream::new();
    }
    quote! {
        #[allow(dead_code)]
        fn __iris_param_check() where #(#predicates),* {}
    }
}

/// The parameter types that must have both derives: not those parsed and
/// described through `with`, nor plain standard types.
fn checked_types(tool: &ToolFn) -> impl Iterator<Item = &syn::Type> {
    tool.params.iter().filter_map(|param| match param {
        Param::Arg {
            ty, field_attrs, ..
        } if !uses_with(field_attrs) && !is_plain_std_type(ty) => Some(ty),
        Param::Args { ty } => Some(ty),
        _ => None,
    })
}

/// The predicates of [`param_bounds`].
pub(crate) fn param_predicates(tool: &ToolFn, p: &TokenStream) -> Vec<TokenStream> {
    checked_types(tool)
        .map(|ty| {
            let bound = respan(quote!(#p::ToolParam), ty.span());
            quote_spanned!(ty.span()=> #ty: #bound)
        })
        .collect()
}

/// `String`, `bool`, a number or `char` written as one bare name, or an
/// `Option` or `Vec` of one: it has both derives, so checking it would only
/// cost compile time.
fn is_plain_std_type(ty: &syn::Type) -> bool {
    const PLAIN: &[&str] = &[
        "String", "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32",
        "u64", "u128", "usize", "f32", "f64",
    ];
    let syn::Type::Path(path) = ty else {
        return false;
    };
    if path.qself.is_some() || path.path.leading_colon.is_some() || path.path.segments.len() != 1 {
        return false;
    }
    let segment = &path.path.segments[0];
    match &segment.arguments {
        syn::PathArguments::None => PLAIN.iter().any(|name| segment.ident == name),
        syn::PathArguments::AngleBracketed(args)
            if (segment.ident == "Option" || segment.ident == "Vec") && args.args.len() == 1 =>
        {
            matches!(&args.args[0], syn::GenericArgument::Type(inner) if is_plain_std_type(inner))
        }
        _ => false,
    }
}

/// Whether `#[serde(with | deserialize_with ..)]` or `#[schemars(with |
/// schema_with ..)]` takes the field's parsing or schema out of its type.
fn uses_with(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        (attr.path().is_ident("serde") || attr.path().is_ident("schemars"))
            && attr.meta.to_token_stream().into_iter().any(|token| {
                matches!(&token, TokenTree::Group(group) if group.stream().into_iter().any(|inner| {
                    matches!(&inner, TokenTree::Ident(ident) if ident.to_string().ends_with("with"))
                }))
            })
    })
}

/// The argument type: the `#[args]` struct, or a struct of the loose
/// parameters that derives `Deserialize` and `JsonSchema`.
fn args_type(tool: &ToolFn, p: &TokenStream) -> (TokenStream, TokenStream) {
    if let Some(ty) = tool.params.iter().find_map(|param| match param {
        Param::Args { ty } => Some(ty),
        _ => None,
    }) {
        return (quote!(#ty), TokenStream::new());
    }
    let serde_crate = "__iris::serde";
    let schemars_crate = "__iris::schemars";
    let fields = tool.params.iter().filter_map(|param| match param {
        Param::Arg {
            ident,
            ty,
            field_attrs,
        } => Some(quote!(#(#field_attrs)* #ident: #ty,)),
        _ => None,
    });
    let bounds = param_bounds(tool, p);
    let args_struct = quote! {
        #[doc(hidden)]
        #[derive(#p::serde::Deserialize, #p::schemars::JsonSchema)]
        #[serde(crate = #serde_crate, deny_unknown_fields)]
        #[schemars(crate = #schemars_crate)]
        pub struct __IrisArgs #bounds {
            #(#fields)*
        }

        // Shown without its fields, which need not be `Debug`: enough for
        // `Tool::parse(..).expect_err(..)` and for logs.
        #[automatically_derived]
        impl ::core::fmt::Debug for __IrisArgs #bounds {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct("Args").finish_non_exhaustive()
            }
        }
    };
    (quote!(__IrisArgs), args_struct)
}

fn definition_fn(tool: &ToolFn, p: &TokenStream, args_ty: &TokenStream) -> TokenStream {
    let name = &tool.name.value;
    let description = match &tool.description {
        Description::Literal(lit) => quote!(#lit),
        Description::Docs(docs) => doc_expr(docs),
    };
    let aliases = tool.aliases.iter().map(|a| &a.value);
    let capabilities = tool
        .capabilities
        .iter()
        .map(|c| format_ident!("{}", c.value));
    let deferred = tool.deferred;
    let max_result_chars = tool.max_result_chars.map_or_else(
        || quote!(::core::option::Option::None),
        |n| quote!(::core::option::Option::Some(#n)),
    );
    let schema_span = args_span(tool);
    let output = output_schema(tool, p);
    let constructor = if tool.built_in {
        quote!(built_in)
    } else {
        quote!(new)
    };
    let build = respan(
        quote!(#p::definition::<#args_ty>(&__IRIS_TOOL, __iris_output)),
        schema_span,
    );
    quote! {
        #[inline]
        fn definition(&self) -> &#p::ToolDefinition {
            static __IRIS_TOOL: #p::ToolStatic = #p::ToolStatic::#constructor(#p::ToolMeta {
                name: #name,
                description: #description,
                aliases: &[#(#aliases),*],
                capabilities: &[#(#p::Capability::#capabilities),*],
                deferred: #deferred,
                max_result_chars: #max_result_chars,
            });
            let __iris_output = #output;
            #build
        }
    }
}

/// How the output schema is made: picked from the declared return type by
/// method resolution (`Json<T>`, `Result<T, E>` or `T` with
/// `T: JsonSchema` give `T`'s; text and other results none). A return type
/// that cannot be named inside the tool's impl (`impl Trait`, `Self`, `_`)
/// has none.
fn output_schema(tool: &ToolFn, p: &TokenStream) -> TokenStream {
    match &tool.output {
        Output::Type(ty) if nameable(&ty.to_token_stream()) && !is_text(ty) => quote! {{
            use #p::{
                OutputViaIntoToolResult as _, OutputViaJson as _, OutputViaOk as _,
                OutputViaSchema as _,
            };
            (&&&&&#p::OutputOf::<#ty>::NEW).__iris_output_schema()
        }},
        _ => quote!(::core::option::Option::None),
    }
}

/// `String`, `&str`, `ToolResult`, or `Result` of one of them: a result with
/// no `data` of a known shape, seen without asking the compiler (the
/// common text-returning tool pays nothing for output schemas).
fn is_text(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Reference(reference) => {
            matches!(&*reference.elem, syn::Type::Path(path) if path.path.is_ident("str"))
        }
        syn::Type::Path(path) if path.qself.is_none() => {
            let Some(last) = path.path.segments.last() else {
                return false;
            };
            match &last.arguments {
                syn::PathArguments::None => last.ident == "String" || last.ident == "ToolResult",
                syn::PathArguments::AngleBracketed(args) if last.ident == "Result" => {
                    matches!(args.args.first(), Some(syn::GenericArgument::Type(ok)) if is_text(ok))
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether a type written in the signature means the same inside the
/// generated impl.
fn nameable(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().all(|token| match token {
        TokenTree::Ident(ident) => ident != "impl" && ident != "Self" && ident != "_",
        TokenTree::Group(group) => nameable(&group.stream()),
        TokenTree::Punct(_) | TokenTree::Literal(_) => true,
    })
}

/// The doc lines as one expression: a single literal when they are all
/// literals (the usual `///` case), else `concat!` so `include_str!` works.
fn doc_expr(docs: &[syn::Expr]) -> TokenStream {
    let literals: Option<Vec<String>> = docs
        .iter()
        .map(|doc| match doc {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        })
        .collect();
    if let Some(lines) = literals {
        let joined = lines.join("\n");
        return quote!(#joined);
    }
    let mut parts = Vec::with_capacity(docs.len() * 2);
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            parts.push(quote!("\n"));
        }
        parts.push(quote!(#doc));
    }
    quote!(::core::concat!(#(#parts),*))
}

fn parse_fn(tool: &ToolFn, p: &TokenStream, args_ty: &TokenStream) -> TokenStream {
    let takes_struct = tool
        .params
        .iter()
        .any(|param| matches!(param, Param::Args { .. }));
    let parser = if takes_struct {
        quote!(parse_args_struct)
    } else {
        quote!(parse_args)
    };
    let parse = respan(
        quote!(#p::#parser::<#args_ty>(input, #p::Tool::definition(self))),
        args_span(tool),
    );
    quote! {
        #[inline]
        fn parse(
            &self,
            input: &#p::serde_json::Value,
        ) -> ::core::result::Result<#args_ty, #p::ArgumentError> {
            #parse
        }
    }
}

fn call_fn(tool: &ToolFn, p: &TokenStream) -> TokenStream {
    let mut extractions = Vec::new();
    let mut call_args = Vec::new();
    let mut fields = Vec::new();
    for (i, param) in tool.params.iter().enumerate() {
        match param {
            Param::Arg { ident, .. } => {
                fields.push(ident);
                call_args.push(quote!(#ident));
            }
            Param::Args { .. } => call_args.push(quote!(__iris_args)),
            Param::Context { ty, by_ref } => {
                let local = format_ident!("__iris_ctx_{}", i);
                extractions.push(quote_spanned! {ty.span()=>
                    let #local = match <#ty as #p::FromToolContext>::from_context(__iris_cx) {
                        ::core::result::Result::Ok(value) => value,
                        ::core::result::Result::Err(result) => return #p::ToolBody::ready(result),
                    };
                });
                call_args.push(if *by_ref {
                    quote!(&#local)
                } else {
                    quote!(#local)
                });
            }
        }
    }
    let destructure = if tool
        .params
        .iter()
        .any(|param| matches!(param, Param::Args { .. }))
    {
        quote!()
    } else {
        quote!(let __IrisArgs { #(#fields),* } = __iris_args;)
    };
    let fn_ident = &tool.fn_ident;
    let convert = convert(tool, p);
    let unused_cx = if extractions.is_empty() {
        quote!(let _ = __iris_cx;)
    } else {
        quote!()
    };
    // A toolbox tool holds its service in an `Arc`: an async body borrows
    // it for the call, a blocking body (which must own what it uses) takes
    // a clone of the `Arc`.
    let (service, callee) = match tool.site {
        Site::FreeFn => (quote!(), quote!(#fn_ident)),
        Site::Method if tool.is_async => (quote!(), quote!(self.0.#fn_ident)),
        Site::Method => (
            quote!(let __iris_service = #p::Arc::clone(&self.0);),
            quote!(__iris_service.#fn_ident),
        ),
    };
    let body = if tool.is_async {
        quote! {
            #p::ToolBody::Async(#p::Box::pin(async move {
                #destructure
                let __iris_out = #callee(#(#call_args),*).await;
                #convert
            }))
        }
    } else {
        quote! {
            #service
            #p::ToolBody::Blocking(#p::Box::new(move || {
                #destructure
                let __iris_out = #callee(#(#call_args),*);
                #convert
            }))
        }
    };
    quote! {
        #[inline]
        fn call<'a>(
            &'a self,
            __iris_args: Self::Args,
            __iris_cx: &'a #p::ToolContext,
        ) -> #p::ToolBody<'a> {
            #unused_cx
            #(#extractions)*
            #body
        }
    }
}

/// Picks the conversion by method resolution: `IntoToolResult`, then
/// `Result<T: Serialize, E: Display>`, then `T: Serialize`. Spanned on the
/// return type so an unconvertible type is reported there.
fn convert(tool: &ToolFn, p: &TokenStream) -> TokenStream {
    let span = match &tool.output {
        Output::Type(ty) => ty.span(),
        Output::Unit => Span::call_site(),
    };
    // The traits that make the choice are imported once per tool, at the
    // top of the const block.
    respan(
        quote!((&&&#p::Returned::new(__iris_out)).__iris_into_result()),
        span,
    )
}

/// Where schema and parsing errors about the argument type should point.
fn args_span(tool: &ToolFn) -> Span {
    tool.params
        .iter()
        .find_map(|param| match param {
            Param::Args { ty } => Some(ty.span()),
            _ => None,
        })
        .unwrap_or_else(Span::call_site)
}

/// Gives every token of `stream` the span `span`, interpolated paths
/// included, so a type error in the expression is reported at `span` (the
/// user's type) rather than at the attribute.
fn respan(stream: TokenStream, span: Span) -> TokenStream {
    stream
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut respanned = Group::new(group.delimiter(), respan(group.stream(), span));
                respanned.set_span(span);
                token = TokenTree::Group(respanned);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    fn expand(attr: TokenStream, item: TokenStream) -> String {
        let file = syn::parse2(super::super::expand(attr, item)).expect("expansion is a file");
        prettyplease::unparse(&file)
    }

    #[test]
    fn sync_tool_expansion() {
        insta::assert_snapshot!(expand(
            quote!(read_only, aliases = ["sq"]),
            quote! {
                /// Square it.
                pub fn square(
                    /// The value.
                    value: i64,
                ) -> i64 {
                    value * value
                }
            },
        ));
    }

    #[test]
    fn async_tool_with_context_expansion() {
        insta::assert_snapshot!(expand(
            quote!(network, crate = "::my_iris"),
            quote! {
                /// Fetch it.
                async fn fetch(
                    /// Where.
                    #[serde(rename = "URL")]
                    url: String,
                    #[ctx] cx: &ToolContext,
                    #[state] client: State<Client>,
                ) -> Result<String, Error> {
                    client.get(&url, cx).await
                }
            },
        ));
    }

    #[test]
    fn args_struct_expansion() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                /// Book it.
                fn book(#[args] request: Request) {}
            },
        ));
    }
}
