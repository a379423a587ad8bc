//! The link-time catalog of hook and middleware factories: every
//! `#[hook_factory]` and `#[middleware_factory]` linked into the program.

use iris_runtime::factories::{HookFactory, MiddlewareFactory};

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
