//! The checked form of a `#[middleware]`.

use syn::ext::IdentExt as _;
use syn::spanned::Spanned as _;
use syn::{FnArg, Ident, Pat, Visibility};

use super::parse::MiddlewareInput;
use crate::attrs::check_keys;
use crate::errors::Errors;
use crate::function::{Made, check_plain, struct_name};

const KEYS: &[&str] = &["name", "crate"];

pub(crate) struct MiddlewareFn {
    pub(crate) vis: Visibility,
    pub(crate) fn_ident: Ident,
    pub(crate) struct_ident: Ident,
    /// The name errors of this middleware carry.
    pub(crate) name: String,
    pub(crate) takes_context: bool,
    /// The parameters' types, in order, each checked where it stands.
    pub(crate) param_types: Vec<syn::Type>,
    pub(crate) root: Option<syn::Path>,
    pub(crate) output_span: proc_macro2::Span,
}

impl MiddlewareFn {
    pub(crate) fn from_input(input: &MiddlewareInput) -> syn::Result<Self> {
        let mut errors = Errors::default();
        let item = &input.item;
        let sig = &item.sig;
        let fn_ident = sig.ident.clone();
        let mut middleware = MiddlewareFn {
            vis: item.vis.clone(),
            struct_ident: Ident::new(&struct_name(&fn_ident.unraw().to_string()), fn_ident.span()),
            name: fn_ident.unraw().to_string(),
            fn_ident,
            takes_context: false,
            param_types: Vec::new(),
            root: None,
            output_span: match &sig.output {
                syn::ReturnType::Default => sig.ident.span(),
                syn::ReturnType::Type(_, ty) => ty.span(),
            },
        };
        let args = match &input.args {
            Ok(args) => check_keys(args.clone(), KEYS, &mut errors),
            Err(err) => {
                errors.push(err.clone());
                Vec::new()
            }
        };
        for arg in &args {
            match arg.name().as_str() {
                "name" => {
                    if let Some(lit) = errors.ok(arg.string()) {
                        middleware.name = lit.value();
                    }
                }
                _ => {
                    if let Some(lit) = errors.ok(arg.string()) {
                        middleware.root = errors.ok(lit.parse::<syn::Path>());
                    }
                }
            }
        }
        if sig.asyncness.is_none() {
            errors.at(
                sig.fn_token.span,
                "a middleware must be an `async fn`; it awaits `next.run(call)`",
            );
        }
        let plain = Made {
            what: "a middleware",
            concrete: "it wraps the calls of every tool, whatever their types",
            caller: "the executor",
        };
        check_plain(sig, &plain, &mut errors);
        let mut plain = 0;
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(receiver) => errors.at(
                    receiver.self_token.span,
                    "`#[middleware]` goes on free functions, not methods",
                ),
                FnArg::Typed(param) => {
                    if !matches!(&*param.pat, Pat::Ident(_)) {
                        errors.at(param.pat.span(), "expected a plain parameter name");
                    }
                    middleware.param_types.push((*param.ty).clone());
                    plain += 1;
                }
            }
        }
        match plain {
            2 => {}
            3 => middleware.takes_context = true,
            _ => errors.at(
                sig.inputs.span(),
                "expected `(call: ToolCall, next: Next<'_>)` or `(call: ToolCall, cx: &ToolContext, next: Next<'_>)`",
            ),
        }
        errors.finish()?;
        Ok(middleware)
    }
}
