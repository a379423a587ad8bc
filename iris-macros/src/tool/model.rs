//! The checked form of a `#[tool]`: typed, spanned, no token streams.

use proc_macro2::Span;
use syn::ext::IdentExt as _;
use syn::spanned::Spanned as _;
use syn::{Attribute, Expr, FnArg, Ident, LitStr, Pat, ReturnType, Type, Visibility};

use super::parse::ToolInput;
use crate::attrs::{AttrArg, check_keys, one_of};
use crate::docs::{all_blank, doc_values};
use crate::errors::Errors;
use crate::function::{
    FnItem, MARKERS, Made, check_plain, default_patch, is_field_attr, struct_name,
};

/// A value with the span of the token it came from.
pub(crate) struct Spanned<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

/// The capability tags, as `#[tool]` keys.
pub(crate) const CAPABILITIES: &[(&str, &str)] = &[
    ("read_only", "ReadOnly"),
    ("write", "Write"),
    ("exec", "Exec"),
    ("network", "Network"),
    ("interactive", "Interactive"),
    ("concurrency_safe", "ConcurrencySafe"),
    ("idempotent", "Idempotent"),
];

const KEYS: &[&str] = &[
    "name",
    "description",
    "aliases",
    "read_only",
    "write",
    "exec",
    "network",
    "interactive",
    "concurrency_safe",
    "idempotent",
    "deferred",
    "max_result_chars",
    "crate",
];

pub(crate) enum Description {
    /// `#[doc = ...]` values: literals and `include_str!` calls.
    Docs(Vec<Expr>),
    /// `description = "..."`.
    Literal(LitStr),
}

pub(crate) enum Output {
    Unit,
    Type(Box<Type>),
}

/// One parameter of the function.
pub(crate) enum Param {
    /// A schema property.
    Arg {
        ident: Ident,
        ty: Type,
        /// Doc comments, `#[serde]` and `#[schemars]` for the generated field.
        field_attrs: Vec<Attribute>,
    },
    /// `#[args]`: the whole input as one struct.
    Args { ty: Type },
    /// `#[ctx]` or `#[state]`: taken from the execution context.
    Context { ty: Type, by_ref: bool },
}

/// Where the function sits: a free function, or a method of an
/// `#[iris::toolbox]` impl.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Site {
    FreeFn,
    Method,
}

pub(crate) struct ToolFn {
    pub(crate) site: Site,
    pub(crate) vis: Visibility,
    pub(crate) fn_ident: Ident,
    pub(crate) struct_ident: Ident,
    pub(crate) name: Spanned<String>,
    pub(crate) description: Description,
    pub(crate) aliases: Vec<Spanned<String>>,
    /// Variant names of `Capability`.
    pub(crate) capabilities: Vec<Spanned<&'static str>>,
    pub(crate) deferred: bool,
    /// The hidden key `built_in`: a tool that ships with Iris (origin
    /// `BuiltIn`), the only kind that may take a reserved name such as
    /// `tool_search`. Left out of the keys errors list, since users have no
    /// use for it.
    pub(crate) built_in: bool,
    pub(crate) max_result_chars: Option<usize>,
    pub(crate) root: Option<syn::Path>,
    pub(crate) is_async: bool,
    pub(crate) params: Vec<Param>,
    pub(crate) output: Output,
}

impl ToolFn {
    pub(crate) fn from_input(input: &ToolInput) -> syn::Result<Self> {
        Self::at_site(input, Site::FreeFn)
    }

    /// A `#[tool]` method of an `#[iris::toolbox]` impl, which takes `&self`.
    pub(crate) fn from_method(input: &ToolInput) -> syn::Result<Self> {
        Self::at_site(input, Site::Method)
    }

    fn at_site(input: &ToolInput, site: Site) -> syn::Result<Self> {
        let mut errors = Errors::default();
        let mut built_in = false;
        let args = match &input.args {
            Ok(args) => {
                let (hidden, args): (Vec<AttrArg>, Vec<AttrArg>) =
                    args.iter().cloned().partition(|a| a.name() == "built_in");
                built_in = !hidden.is_empty();
                check_keys(args, KEYS, &mut errors)
            }
            Err(err) => {
                errors.push(err.clone());
                Vec::new()
            }
        };
        let item = &input.item;
        check_signature(item, &mut errors);
        let fn_ident = item.sig.ident.clone();
        let mut tool = ToolFn {
            site,
            vis: item.vis.clone(),
            struct_ident: Ident::new(&struct_name(&fn_ident.unraw().to_string()), fn_ident.span()),
            name: Spanned {
                value: fn_ident.unraw().to_string(),
                span: fn_ident.span(),
            },
            fn_ident,
            description: Description::Docs(doc_values(&item.attrs)),
            aliases: Vec::new(),
            capabilities: Vec::new(),
            deferred: false,
            built_in,
            max_result_chars: None,
            root: None,
            is_async: item.sig.asyncness.is_some(),
            params: Vec::new(),
            output: match &item.sig.output {
                ReturnType::Default => Output::Unit,
                ReturnType::Type(_, ty) => Output::Type(ty.clone()),
            },
        };
        let mut name_from_key = false;
        for arg in &args {
            name_from_key |= tool.apply_key(arg, &mut errors);
        }
        if !name_from_key {
            check_name(&tool.name.value, tool.name.span, true, &mut errors);
        }
        tool.check_aliases(&mut errors);
        tool.check_description(&mut errors);
        tool.params = params(item, site, &mut errors);
        errors.finish()?;
        Ok(tool)
    }

    /// Applies one key; returns whether it was `name`.
    fn apply_key(&mut self, arg: &AttrArg, errors: &mut Errors) -> bool {
        let key = arg.name();
        match key.as_str() {
            "name" => {
                if let Some(lit) = errors.ok(arg.string()) {
                    check_name(&lit.value(), lit.span(), false, errors);
                    self.name = Spanned {
                        value: lit.value(),
                        span: lit.span(),
                    };
                }
                return true;
            }
            "description" => {
                if let Some(lit) = errors.ok(arg.string()) {
                    self.description = Description::Literal(lit);
                }
            }
            "aliases" => {
                for lit in errors.ok(arg.strings()).unwrap_or_default() {
                    check_name(&lit.value(), lit.span(), false, errors);
                    self.aliases.push(Spanned {
                        value: lit.value(),
                        span: lit.span(),
                    });
                }
            }
            "deferred" => {
                if errors.ok(arg.flag()).is_some() {
                    self.deferred = true;
                }
            }
            "max_result_chars" => {
                self.max_result_chars = errors.ok(arg.positive_int()).map(|(n, _)| n);
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
            _ => {
                if let Some((tag, variant)) = CAPABILITIES.iter().find(|(k, _)| *k == key)
                    && errors.ok(arg.flag()).is_some()
                {
                    self.add_capability(tag, variant, arg.key.span(), errors);
                }
            }
        }
        false
    }

    fn add_capability(
        &mut self,
        tag: &str,
        variant: &'static str,
        span: Span,
        errors: &mut Errors,
    ) {
        let conflicts: &[&str] = match tag {
            "read_only" => &["Write", "Exec"],
            "write" | "exec" => &["ReadOnly"],
            _ => &[],
        };
        if let Some(other) = self
            .capabilities
            .iter()
            .find(|c| conflicts.contains(&c.value))
        {
            let other_tag = CAPABILITIES
                .iter()
                .find(|(_, v)| *v == other.value)
                .map_or("", |(k, _)| *k);
            errors.at(
                span,
                format!("conflicting capabilities `{other_tag}` and `{tag}`; a read-only tool cannot write or exec, remove one of them"),
            );
        }
        self.capabilities.push(Spanned {
            value: variant,
            span,
        });
    }

    fn check_aliases(&self, errors: &mut Errors) {
        for (i, alias) in self.aliases.iter().enumerate() {
            if alias.value == self.name.value {
                errors.at(
                    alias.span,
                    format!(
                        "alias `{}` is the tool's own name; remove it or pick another alias",
                        alias.value
                    ),
                );
            } else if self.aliases[..i].iter().any(|a| a.value == alias.value) {
                errors.at(
                    alias.span,
                    format!("alias `{}` is listed twice", alias.value),
                );
            }
        }
    }

    fn check_description(&self, errors: &mut Errors) {
        let blank = match &self.description {
            Description::Docs(docs) => all_blank(docs),
            Description::Literal(lit) => lit.value().trim().is_empty(),
        };
        if blank {
            let span = match &self.description {
                Description::Literal(lit) => lit.span(),
                Description::Docs(_) => self.fn_ident.span(),
            };
            errors.at(
                span,
                format!(
                    "tool `{}` has no description; add a doc comment (`/// ...`) or `description = \"...\"`, since models choose tools by their description",
                    self.name.value
                ),
            );
        }
    }
}

fn check_signature(item: &FnItem, errors: &mut Errors) {
    let made = Made {
        what: "a tool",
        concrete: "its schema needs concrete argument types",
        caller: "a model",
    };
    check_plain(&item.sig, &made, errors);
}

/// Checks a tool name or alias against `^[A-Za-z0-9_-]{1,64}$`.
fn check_name(name: &str, span: Span, from_fn: bool, errors: &mut Errors) {
    let problem = if name.is_empty() {
        Some("it is empty".to_owned())
    } else if name.len() > 64 {
        Some(format!("it is {} bytes long", name.len()))
    } else {
        name.chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
            .map(|c| format!("it contains {c:?}"))
    };
    if let Some(problem) = problem {
        let hint = if from_fn {
            "; set one with `name = \"...\"`"
        } else {
            ""
        };
        errors.at(
            span,
            format!("invalid tool name `{name}`: {problem}; providers accept 1 to 64 characters from `A-Z a-z 0-9 _ -`{hint}"),
        );
    }
}

fn params(item: &FnItem, site: Site, errors: &mut Errors) -> Vec<Param> {
    let mut params = Vec::new();
    let mut ctx_seen = false;
    if site == Site::Method && item.sig.receiver().is_none() {
        errors.at(
            item.sig.ident.span(),
            "a `#[tool]` in a toolbox is a method taking `&self`; a function without `self` can be a free `#[tool]` function outside the impl",
        );
    }
    for input in &item.sig.inputs {
        let param = match input {
            FnArg::Receiver(receiver) => {
                check_receiver(receiver, site, errors);
                continue;
            }
            FnArg::Typed(param) => param,
        };
        let markers: Vec<&Attribute> = param
            .attrs
            .iter()
            .filter(|a| MARKERS.iter().any(|m| a.path().is_ident(m)))
            .collect();
        for extra in markers.iter().skip(1) {
            errors.at(
                extra.span(),
                format!("a parameter takes one marker; expected {}", one_of(MARKERS)),
            );
        }
        let marker = markers.first().copied();
        if let Some(marker) = marker
            && !matches!(marker.meta, syn::Meta::Path(_))
        {
            errors.at(
                marker.meta.span(),
                "markers take no arguments; write `#[ctx]`, `#[state]` or `#[args]`",
            );
        }
        let ty = (*param.ty).clone();
        let marker_name = marker
            .and_then(|m| m.path().get_ident())
            .map(Ident::to_string);
        match marker_name.as_deref() {
            Some("ctx") => {
                if ctx_seen {
                    errors.at(
                        param.pat.span(),
                        "a tool takes at most one `#[ctx]` parameter; use the one context it already has",
                    );
                }
                ctx_seen = true;
                params.push(context_param(ty));
            }
            Some("state") => params.push(context_param(ty)),
            Some("args") => params.push(Param::Args { ty }),
            _ => {
                let Some(ident) = plain_ident(&param.pat, errors) else {
                    continue;
                };
                check_owned(&ty, errors);
                let mut field_attrs: Vec<Attribute> = param
                    .attrs
                    .iter()
                    .filter(|a| is_field_attr(a))
                    .cloned()
                    .collect();
                default_patch(&ty, &mut field_attrs);
                params.push(Param::Arg {
                    ident,
                    ty,
                    field_attrs,
                });
            }
        }
    }
    check_args_struct(&params, item, errors);
    params
}

/// A free `#[tool]` takes no `self`; a toolbox method takes exactly `&self`.
fn check_receiver(receiver: &syn::Receiver, site: Site, errors: &mut Errors) {
    // Spanned on the whole receiver (`&mut self`, `self: Arc<Self>`).
    let mut at = |message: &str| errors.push(syn::Error::new_spanned(receiver, message));
    match site {
        Site::FreeFn => at(
            "`#[tool]` on a method needs `#[iris::toolbox]` on its `impl` block, which makes every `#[tool]` method a tool bound to an `Arc` of the service (`registry.register_toolbox(Arc::new(service))`); or keep a free function and reach the service through a `#[state] service: State<Service>` parameter",
        ),
        Site::Method => match &receiver.kind {
            syn::ReceiverKind::Reference(_, _, None) => {}
            syn::ReceiverKind::Reference(_, _, Some(_)) => at(
                "a toolbox tool takes `&self`, not `&mut self`: calls of one service may run at the same time, so keep changing state behind a `Mutex` or an atomic",
            ),
            _ => at(
                "a toolbox tool takes `&self`: its service is shared as an `Arc` by all of its tools",
            ),
        },
    }
}

fn context_param(ty: Type) -> Param {
    match ty {
        Type::Reference(reference) => Param::Context {
            ty: (*reference.elem).clone(),
            by_ref: true,
        },
        ty => Param::Context { ty, by_ref: false },
    }
}

fn check_args_struct(params: &[Param], item: &FnItem, errors: &mut Errors) {
    let structs = params
        .iter()
        .filter(|p| matches!(p, Param::Args { .. }))
        .count();
    let loose = params
        .iter()
        .filter(|p| matches!(p, Param::Arg { .. }))
        .count();
    if structs > 1 || (structs == 1 && loose > 0) {
        errors.at(
            item.sig.inputs.span(),
            "an `#[args]` parameter takes the whole input; the other parameters may only be `#[ctx]` or `#[state]`",
        );
    }
}

/// The parameter's name, when the pattern is a plain (possibly `mut`) name.
fn plain_ident(pat: &Pat, errors: &mut Errors) -> Option<Ident> {
    match pat {
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => Some(pat.ident.clone()),
        other => {
            errors.at(
                other.span(),
                "expected a plain parameter name; a tool's parameters become named properties, so destructure inside the body instead",
            );
            None
        }
    }
}

/// Arguments are parsed from JSON into owned values.
fn check_owned(ty: &Type, errors: &mut Errors) {
    match ty {
        Type::Reference(_) => errors.at(
            ty.span(),
            "a tool parameter must be an owned type, since arguments are parsed from JSON; use `String` instead of `&str` or `Vec<T>` instead of `&[T]`",
        ),
        Type::ImplTrait(_) => errors.at(
            ty.span(),
            "a tool parameter cannot be `impl Trait`; its schema needs a concrete type",
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;

    fn model(attr: proc_macro2::TokenStream, item: FnItem) -> syn::Result<ToolFn> {
        ToolFn::from_input(&ToolInput {
            args: crate::attrs::parse_args(attr),
            item,
        })
    }

    #[test]
    fn names_struct_after_function() {
        assert_eq!(struct_name("read_file"), "ReadFile");
        assert_eq!(struct_name("square"), "Square");
        assert_eq!(struct_name("__x"), "X");
    }

    #[test]
    fn reads_keys_and_params() {
        let tool = model(
            quote::quote!(
                read_only,
                concurrency_safe,
                aliases = ["sq"],
                max_result_chars = 100
            ),
            parse_quote! {
                /// Square it.
                async fn square(
                    /// The value.
                    value: i64,
                    #[ctx] cx: &iris::ToolContext,
                ) -> i64 { value * value }
            },
        )
        .unwrap();
        assert_eq!(tool.name.value, "square");
        assert_eq!(tool.struct_ident, "Square");
        assert!(tool.is_async);
        assert_eq!(tool.aliases.len(), 1);
        assert_eq!(tool.max_result_chars, Some(100));
        let caps: Vec<&str> = tool.capabilities.iter().map(|c| c.value).collect();
        assert_eq!(caps, ["ReadOnly", "ConcurrencySafe"]);
        assert!(matches!(tool.params[0], Param::Arg { .. }));
        assert!(matches!(
            tool.params[1],
            Param::Context { by_ref: true, .. }
        ));
    }

    #[test]
    fn gathers_every_error_at_once() {
        let err = model(
            quote::quote!(nmae = "x", read_only, write, aliases = ["t"]),
            parse_quote! {
                fn t<T>(self, (a, b): (i32, i32)) {}
            },
        )
        .err()
        .unwrap();
        let messages: Vec<String> = err.into_iter().map(|e| e.to_string()).collect();
        let all = messages.join("\n");
        for expected in [
            "did you mean `name`",
            "conflicting capabilities",
            "own name",
            "cannot be generic",
            "#[iris::toolbox]",
            "plain parameter name",
            "no description",
        ] {
            assert!(all.contains(expected), "missing {expected:?} in\n{all}");
        }
    }
}
