//! Factories that configuration names: a plain function called once with
//! typed options, returning a hook or a middleware. `#[hook_factory]` and
//! `#[middleware_factory]` write the impls below and a catalog entry.

use std::sync::Arc;

use iris_core::{ArgumentError, Middleware};
use serde_json::Value;

use crate::hooks::Hook;

/// Makes a hook from options. `#[iris::hook_factory]` implements it on a
/// unit struct named after the function (`create_feedback` ->
/// `CreateFeedback`).
pub trait HookFactory: Send + Sync + 'static {
    /// The name configuration uses (the function's, unless renamed).
    fn name(&self) -> &'static str;

    /// The JSON Schema of the options.
    fn options_schema(&self) -> Value;

    /// Parses `options` and calls the factory.
    ///
    /// # Errors
    /// [`ArgumentError`] naming the option at fault.
    fn build(&self, options: &Value) -> Result<Hook, ArgumentError>;
}

/// Makes a middleware from options. `#[iris::middleware_factory]`
/// implements it on a unit struct named after the function.
pub trait MiddlewareFactory: Send + Sync + 'static {
    /// The name configuration uses (the function's, unless renamed).
    fn name(&self) -> &'static str;

    /// The JSON Schema of the options.
    fn options_schema(&self) -> Value;

    /// Parses `options` and calls the factory.
    ///
    /// # Errors
    /// [`ArgumentError`] naming the option at fault.
    fn build(&self, options: &Value) -> Result<Arc<dyn Middleware>, ArgumentError>;
}

/// A hook factory in the link-time catalog.
pub struct CatalogHookFactory {
    pub(crate) path: &'static str,
    pub(crate) factory: &'static dyn HookFactory,
}

/// A middleware factory in the link-time catalog.
pub struct CatalogMiddlewareFactory {
    pub(crate) path: &'static str,
    pub(crate) factory: &'static dyn MiddlewareFactory,
}

impl CatalogHookFactory {
    #[doc(hidden)]
    #[must_use]
    pub const fn new(path: &'static str, factory: &'static dyn HookFactory) -> Self {
        Self { path, factory }
    }
}

impl CatalogMiddlewareFactory {
    #[doc(hidden)]
    #[must_use]
    pub const fn new(path: &'static str, factory: &'static dyn MiddlewareFactory) -> Self {
        Self { path, factory }
    }
}

inventory::collect!(CatalogHookFactory);
inventory::collect!(CatalogMiddlewareFactory);

pub(crate) fn catalog_hook_factories() -> impl Iterator<Item = &'static CatalogHookFactory> {
    inventory::iter::<CatalogHookFactory>.into_iter()
}

pub(crate) fn catalog_middleware_factories()
-> impl Iterator<Item = &'static CatalogMiddlewareFactory> {
    inventory::iter::<CatalogMiddlewareFactory>.into_iter()
}

/// The schema of a factory's options (what editors complete).
#[doc(hidden)]
#[must_use]
pub fn options_schema<O: schemars::JsonSchema>() -> Value {
    iris_core::schema::input_schema_for::<O>()
}

/// Options of a factory whose parameters make the options struct (which
/// denies unknown keys itself); absent options are `{}`.
///
/// # Errors
/// [`ArgumentError`] with the path of the option at fault.
#[doc(hidden)]
pub fn parse_options<O: serde::de::DeserializeOwned>(options: &Value) -> Result<O, ArgumentError> {
    iris_core::schema::parse_arguments(empty_if_null(options))
}

/// Options of a factory taking an `#[args]` struct, which may not deny
/// unknown keys itself: its schema decides.
///
/// # Errors
/// [`ArgumentError`] for an unknown key or with the path of the option at fault.
#[doc(hidden)]
pub fn parse_options_struct<O: serde::de::DeserializeOwned + schemars::JsonSchema>(
    options: &Value,
) -> Result<O, ArgumentError> {
    let options = empty_if_null(options);
    iris_core::schema::reject_unknown_keys(options, &options_schema::<O>())?;
    iris_core::schema::parse_arguments(options)
}

fn empty_if_null(options: &Value) -> &Value {
    static EMPTY: std::sync::LazyLock<Value> =
        std::sync::LazyLock::new(|| Value::Object(serde_json::Map::new()));
    if options.is_null() { &EMPTY } else { options }
}

/// A middleware a factory returned, shared.
#[doc(hidden)]
pub fn arc_middleware<M: Middleware>(middleware: M) -> Arc<dyn Middleware> {
    Arc::new(middleware)
}

/// Registers a hook factory in the catalog.
#[doc(hidden)]
#[macro_export]
macro_rules! __iris_catalog_hook_factory {
    ($factory:ident, $name:literal, $function:literal) => {
        #[allow(unsafe_code)]
        const _: () = {
            $crate::assembly::__private::inventory::submit! {
                $crate::assembly::__private::CatalogHookFactory::new(
                    ::core::concat!(::core::module_path!(), "::", $function),
                    &$factory,
                )
            }
        };
    };
}

/// Registers a middleware factory in the catalog.
#[doc(hidden)]
#[macro_export]
macro_rules! __iris_catalog_middleware_factory {
    ($factory:ident, $name:literal, $function:literal) => {
        #[allow(unsafe_code)]
        const _: () = {
            $crate::assembly::__private::inventory::submit! {
                $crate::assembly::__private::CatalogMiddlewareFactory::new(
                    ::core::concat!(::core::module_path!(), "::", $function),
                    &$factory,
                )
            }
        };
    };
}
