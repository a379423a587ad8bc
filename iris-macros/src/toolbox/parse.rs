//! An `impl` block, read without parsing method bodies: its type, its
//! `#[tool]` methods as functions, and every other item kept as tokens.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Generics, Signature, Token, Type, Visibility};

use crate::function::FnItem;

/// One item of the block.
pub(crate) enum Item {
    /// A method marked `#[tool]`: the attribute's arguments (empty for a
    /// bare `#[tool]`) and the method without that attribute.
    Tool {
        args: TokenStream,
        method: Box<FnItem>,
    },
    /// Anything else, as written.
    Other(TokenStream),
}

pub(crate) struct ImplBlock {
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) impl_token: Token![impl],
    pub(crate) generics: Generics,
    /// `Trait for` when the block implements a trait.
    pub(crate) trait_: Option<TokenStream>,
    pub(crate) self_ty: Type,
    pub(crate) brace: Group,
    pub(crate) items: Vec<Item>,
}

impl Parse for ImplBlock {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let impl_token: Token![impl] = input.parse()?;
        let mut generics: Generics = input.parse()?;
        // `impl Trait for Type` or `impl Type`: read a type, and if `for`
        // follows, what was read was the trait.
        let first: Type = input.parse()?;
        let (trait_, self_ty) = if input.peek(Token![for]) {
            let for_token: Token![for] = input.parse()?;
            let mut tokens = first.to_token_stream();
            for_token.to_tokens(&mut tokens);
            (Some(tokens), input.parse()?)
        } else {
            (None, first)
        };
        generics.where_clause = input.parse()?;
        let brace: Group = input.parse()?;
        if brace.delimiter() != Delimiter::Brace {
            return Err(syn::Error::new(
                brace.span(),
                "expected the impl body in braces",
            ));
        }
        let items = syn::parse::Parser::parse2(parse_items, brace.stream())?;
        Ok(Self {
            attrs,
            impl_token,
            generics,
            trait_,
            self_ty,
            brace,
            items,
        })
    }
}

fn parse_items(input: ParseStream<'_>) -> syn::Result<Vec<Item>> {
    let mut items = Vec::new();
    // Inner attributes (`#![allow(..)]`) stay at the top, as written.
    let inner = input.call(Attribute::parse_inner)?;
    if !inner.is_empty() {
        let mut tokens = TokenStream::new();
        for attr in inner {
            attr.to_tokens(&mut tokens);
        }
        items.push(Item::Other(tokens));
    }
    while !input.is_empty() {
        let mut attrs = input.call(Attribute::parse_outer)?;
        let tool_attr = attrs.iter().position(is_tool_attr);
        let Some(position) = tool_attr else {
            items.push(Item::Other(rest_of_item(attrs, input)?));
            continue;
        };
        let attr = attrs.remove(position);
        let vis: Visibility = input.parse()?;
        let sig: Signature = input.parse().map_err(|err| {
            syn::Error::new(
                err.span(),
                "`#[tool]` in a toolbox goes on a method, such as `async fn lookup(&self, id: String) -> String { .. }`",
            )
        })?;
        let body: Group = input.parse()?;
        if body.delimiter() != Delimiter::Brace {
            return Err(syn::Error::new(
                body.span(),
                "expected the method body in braces",
            ));
        }
        let args = match &attr.meta {
            syn::Meta::Path(_) => TokenStream::new(),
            syn::Meta::List(list) => list.tokens.clone(),
            syn::Meta::NameValue(nv) => {
                return Err(syn::Error::new_spanned(
                    nv,
                    "expected `#[tool]` or `#[tool(key, key = value, ..)]`",
                ));
            }
        };
        items.push(Item::Tool {
            args,
            method: Box::new(FnItem {
                attrs,
                vis,
                sig,
                body,
            }),
        });
    }
    Ok(items)
}

/// `#[tool]` or `#[iris::tool]` (any path ending in `tool`).
pub(crate) fn is_tool_attr(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == "tool")
}

/// The tokens of an item that is not a tool, up to and including its body
/// in braces or its closing `;`.
fn rest_of_item(attrs: Vec<Attribute>, input: ParseStream<'_>) -> syn::Result<TokenStream> {
    let mut tokens = TokenStream::new();
    for attr in attrs {
        attr.to_tokens(&mut tokens);
    }
    input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tree, next)) = rest.token_tree() {
            let ends = match &tree {
                TokenTree::Group(group) => group.delimiter() == Delimiter::Brace,
                TokenTree::Punct(punct) => punct.as_char() == ';',
                _ => false,
            };
            tokens.extend(std::iter::once(tree));
            rest = next;
            if ends {
                break;
            }
        }
        Ok(((), rest))
    })?;
    Ok(tokens)
}
