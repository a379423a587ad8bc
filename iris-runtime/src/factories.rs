//! Factories that configuration names: a plain function called once with
//! typed options, returning a hook or a middleware (above both: a factory
//! makes them, neither knows factories). `#[hook_factory]` and
//! `#[middleware_factory]` write the impls below; with feature `assembly`
//! they also enter the link-time catalog, so agent files find them by name.

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

/// What a `#[hook_factory]` or `#[middleware_factory]` writes to enter
/// the catalog: nothing, in a build without feature `assembly`.
#[doc(hidden)]
#[macro_export]
macro_rules! __iris_no_catalog_factory {
    ($factory:ident, $name:literal, $function:literal) => {};
}
