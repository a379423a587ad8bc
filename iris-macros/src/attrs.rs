//! `key`, `key = value` lists inside `#[tool(...)]` and `#[middleware(...)]`.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt as _;
use syn::parse::{Parse, ParseStream, Parser as _};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Lit, LitStr, Token};

use crate::errors::Errors;

/// One `key` or `key = value`.
#[derive(Clone)]
pub(crate) struct AttrArg {
    pub(crate) key: Ident,
    pub(crate) value: Option<Expr>,
}

impl Parse for AttrArg {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        // `parse_any` so that `crate = "..."` parses although `crate` is a keyword.
        let key = Ident::parse_any(input)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        Ok(Self { key, value })
    }
}

/// Parses the attribute's arguments.
pub(crate) fn parse_args(tokens: TokenStream) -> syn::Result<Vec<AttrArg>> {
    let args = Punctuated::<AttrArg, Token![,]>::parse_terminated.parse2(tokens)?;
    Ok(args.into_iter().collect())
}

/// Keeps the known keys, reporting unknown ones (with the closest known key)
/// and repeated ones.
pub(crate) fn check_keys(args: Vec<AttrArg>, known: &[&str], errors: &mut Errors) -> Vec<AttrArg> {
    let mut seen: Vec<String> = Vec::new();
    let mut kept = Vec::new();
    for arg in args {
        let key = arg.key.unraw().to_string();
        if !known.contains(&key.as_str()) {
            errors.at(arg.key.span(), unknown_key_message(&key, known));
        } else if seen.contains(&key) {
            errors.at(
                arg.key.span(),
                format!("duplicate key `{key}`; each key may appear once"),
            );
        } else {
            seen.push(key);
            kept.push(arg);
        }
    }
    kept
}

fn unknown_key_message(key: &str, known: &[&str]) -> String {
    let expected = one_of(known);
    let closest = known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(key, k), *k))
        .filter(|(distance, k)| *distance <= (k.len() / 3).max(2))
        .min_by_key(|(distance, _)| *distance);
    match closest {
        Some((_, suggestion)) => {
            format!("unknown key `{key}`; did you mean `{suggestion}`? expected {expected}")
        }
        None => format!("unknown key `{key}`; expected {expected}"),
    }
}

/// "`a`, `b` or `c`".
pub(crate) fn one_of(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [only] => format!("`{only}`"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(|k| format!("`{k}`")).collect();
            format!("{} or `{last}`", init.join(", "))
        }
    }
}

impl AttrArg {
    /// The key as written, without `r#`.
    pub(crate) fn name(&self) -> String {
        self.key.unraw().to_string()
    }

    /// A flag: the key alone.
    pub(crate) fn flag(&self) -> syn::Result<()> {
        match &self.value {
            None => Ok(()),
            Some(value) => Err(syn::Error::new_spanned(
                value,
                format!(
                    "`{}` is a flag and takes no value; write `{}` alone",
                    self.name(),
                    self.name()
                ),
            )),
        }
    }

    /// A string literal value.
    pub(crate) fn string(&self) -> syn::Result<LitStr> {
        match &self.value {
            Some(Expr::Lit(lit)) => match &lit.lit {
                Lit::Str(s) => Ok(s.clone()),
                other => Err(syn::Error::new_spanned(
                    other,
                    format!("expected a string literal for `{}`", self.name()),
                )),
            },
            Some(other) => Err(syn::Error::new_spanned(
                other,
                format!("expected a string literal for `{}`", self.name()),
            )),
            None => Err(self.missing_value("a string literal")),
        }
    }

    /// A list of string literals: `["a", "b"]`.
    pub(crate) fn strings(&self) -> syn::Result<Vec<LitStr>> {
        let expected = || {
            format!(
                "expected a list of string literals for `{}`, such as `[\"a\", \"b\"]`",
                self.name()
            )
        };
        match &self.value {
            Some(Expr::Array(array)) => array
                .elems
                .iter()
                .map(|elem| match elem {
                    Expr::Lit(lit) => match &lit.lit {
                        Lit::Str(s) => Ok(s.clone()),
                        other => Err(syn::Error::new_spanned(other, expected())),
                    },
                    other => Err(syn::Error::new_spanned(other, expected())),
                })
                .collect(),
            Some(other) => Err(syn::Error::new_spanned(other, expected())),
            None => Err(self.missing_value("a list of string literals")),
        }
    }

    /// A positive integer literal.
    pub(crate) fn positive_int(&self) -> syn::Result<(usize, Span)> {
        let expected = || format!("expected a positive integer for `{}`", self.name());
        match &self.value {
            Some(Expr::Lit(lit)) => match &lit.lit {
                Lit::Int(int) => match int.base10_parse::<usize>() {
                    Ok(0) | Err(_) => Err(syn::Error::new_spanned(int, expected())),
                    Ok(n) => Ok((n, int.span())),
                },
                other => Err(syn::Error::new_spanned(other, expected())),
            },
            Some(other) => Err(syn::Error::new_spanned(other, expected())),
            None => Err(self.missing_value("a positive integer")),
        }
    }

    fn missing_value(&self, what: &str) -> syn::Error {
        syn::Error::new(
            self.key.span(),
            format!(
                "`{}` needs a value: `{} = ...` with {what}",
                self.name(),
                self.name()
            ),
        )
    }
}
