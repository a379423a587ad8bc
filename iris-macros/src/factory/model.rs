//! The checked form of a factory: its name, options and what it returns.

use syn::ext::IdentExt as _;
use syn::spanned::Spanned as _;
use syn::{Attribute, FnArg, Ident, ReturnType, Type, Visibility};

use super::Kind;
use crate::attrs::{AttrArg, check_keys};
use crate::errors::Errors;
use crate::function::{
    FnItem, Made, check_plain, default_patch, is_field_attr, is_marker, struct_name,
};

const KEYS: &[&str] = &["name", "crate"];

/// What the factory's options are made of.
pub(crate) enum Options {
    /// One field per parameter.
    Fields(Vec<OptionField>),
    /// `#[args]`: one struct holds them all.
    Struct(Box<Type>),
}

pub(crate) struct OptionField {
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    pub(crate) attrs: Vec<Attribute>,
}

pub(crate) struct FactoryFn {
    pub(crate) kind: Kind,
    pub(crate) vis: Visibility,
    pub(crate) fn_ident: Ident,
    pub(crate) struct_ident: Ident,
    pub(crate) name: String,
    pub(crate) root: Option<syn::Path>,
    pub(crate) options: Options,
    /// The return type, where a wrong one is reported.
    pub(crate) output: Option<Box<Type>>,
}

impl FactoryFn {
    pub(crate) fn check(
        kind: Kind,
        args: syn::Result<Vec<AttrArg>>,
        item: &FnItem,
    ) -> syn::Result<Self> {
        let mut errors = Errors::default();
        let args = match args {
            Ok(args) => check_keys(args, KEYS, &mut errors),
            Err(err) => {
                errors.push(err);
                Vec::new()
            }
        };
        check_signature(kind, item, &mut errors);
        let fn_ident = item.sig.ident.clone();
        let mut factory = FactoryFn {
            kind,
            vis: item.vis.clone(),
            struct_ident: Ident::new(&struct_name(&fn_ident.unraw().to_string()), fn_ident.span()),
            name: fn_ident.unraw().to_string(),
            fn_ident,
            root: None,
            options: Options::Fields(Vec::new()),
            output: match &item.sig.output {
                ReturnType::Default => None,
                ReturnType::Type(_, ty) => Some(ty.clone()),
            },
        };
        for arg in &args {
            factory.apply_key(arg, &mut errors);
        }
        factory.options = options(kind, item, &mut errors);
        errors.finish()?;
        Ok(factory)
    }

    fn apply_key(&mut self, arg: &AttrArg, errors: &mut Errors) {
        match arg.name().as_str() {
            "name" => {
                if let Some(lit) = errors.ok(arg.string()) {
                    let name = lit.value();
                    if name.is_empty()
                        || !name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
                    {
                        errors.at(
                            lit.span(),
                            "a factory name is letters, digits, `_` and `-`, such as `\"create_feedback\"`",
                        );
                    }
                    self.name = name;
                }
            }
            "crate" => {
                if let Some(lit) = errors.ok(arg.string()) {
                    self.root = errors.ok(lit.parse::<syn::Path>().map_err(|_| {
                        syn::Error::new(
                            lit.span(),
                            "expected a path for `crate`, such as `\"::iris\"`",
                        )
                    }));
                }
            }
            _ => {}
        }
    }
}

fn check_signature(kind: Kind, item: &FnItem, errors: &mut Errors) {
    let sig = &item.sig;
    let made = kind.made();
    if let Some(token) = &sig.asyncness {
        errors.at(
            token.span,
            format!("a factory runs once, while the agent is assembled, and returns its {made} directly: remove `async` (the {made} it returns may itself be async)"),
        );
    }
    let plain = Made {
        what: "a factory",
        concrete: "configuration calls it by name, so its options need concrete types",
        caller: "configuration",
    };
    check_plain(sig, &plain, errors);
    if let ReturnType::Default = sig.output {
        let expected = match kind {
            Kind::Hook => "`-> Hook`",
            Kind::Middleware => "a middleware, such as `-> Timing` or `-> impl Middleware`",
        };
        errors.at(
            sig.ident.span(),
            format!(
                "a {} returns the {made} it makes: add {expected}",
                kind.attribute()
            ),
        );
    }
}

fn options(kind: Kind, item: &FnItem, errors: &mut Errors) -> Options {
    let mut fields = Vec::new();
    let mut args_struct: Option<Type> = None;
    for input in &item.sig.inputs {
        let param = match input {
            FnArg::Receiver(receiver) => {
                errors.push(syn::Error::new_spanned(
                    receiver,
                    format!(
                        "a {} is a free function, called by name; it takes no `self`",
                        kind.attribute()
                    ),
                ));
                continue;
            }
            FnArg::Typed(param) => param,
        };
        if let Some(marker) = param.attrs.iter().find(|a| is_marker(a)) {
            if marker.path().is_ident("args") {
                if args_struct.is_some() {
                    errors.push(syn::Error::new_spanned(
                        marker,
                        "a factory takes at most one `#[args]` struct; put every option in it",
                    ));
                }
                args_struct = Some((*param.ty).clone());
            } else {
                errors.push(syn::Error::new_spanned(
                    marker,
                    format!("a factory runs before any call, so it has no call context: take what the {} needs as an option, or let the {} read the context when it runs", kind.made(), kind.made()),
                ));
            }
            continue;
        }
        let syn::Pat::Ident(pat) = &*param.pat else {
            errors.at(
                param.pat.span(),
                "expected a plain parameter name; each parameter is a named option in configuration",
            );
            continue;
        };
        let ident = pat.ident.clone();
        let ty = (*param.ty).clone();
        match &ty {
            Type::Reference(_) => errors.push(syn::Error::new_spanned(
                &ty,
                "a factory option must be an owned type, since options are parsed from configuration; use `String` instead of `&str`",
            )),
            Type::ImplTrait(_) => errors.push(syn::Error::new_spanned(
                &ty,
                "a factory option cannot be `impl Trait`; its schema needs a concrete type",
            )),
            _ => {}
        }
        let mut attrs: Vec<Attribute> = param
            .attrs
            .iter()
            .filter(|a| is_field_attr(a))
            .cloned()
            .collect();
        default_patch(&ty, &mut attrs);
        fields.push(OptionField { ident, ty, attrs });
    }
    match args_struct {
        Some(ty) => {
            if let Some(first) = fields.first() {
                errors.at(
                    first.ident.span(),
                    "with an `#[args]` struct, every option is one of its fields; move this parameter into the struct",
                );
            }
            Options::Struct(Box::new(ty))
        }
        None => Options::Fields(fields),
    }
}
