//! The link-time catalog of `#[tool]` functions (feature `catalog`): every
//! free `#[tool]` in the program, by its name and by its module path, so
//! configuration can name a tool without code that lists them.
//!
//! Entries are collected by the linker. An item in a library crate that
//! nothing in the program refers to may be left out of the binary, its entry
//! with it: refer to something of that crate (any item, such as
//! `use my_tools as _;` is not enough, but calling one of its functions or
//! naming one of its types is) from the binary. Code that forbids
//! `unsafe_code` cannot hold catalog entries: the registration the linker
//! runs is written with a link section.

use std::sync::Arc;

use crate::tool::DynTool;

/// One `#[tool]` function in the catalog.
pub struct CatalogTool {
    name: &'static str,
    path: &'static str,
    make: fn() -> Arc<dyn DynTool>,
}

impl CatalogTool {
    #[doc(hidden)]
    #[must_use]
    pub const fn new(
        name: &'static str,
        path: &'static str,
        make: fn() -> Arc<dyn DynTool>,
    ) -> Self {
        Self { name, path, make }
    }

    /// The tool's name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The function's path (`my_crate::math::square`).
    #[must_use]
    pub fn path(&self) -> &'static str {
        self.path
    }

    /// A new instance of the tool.
    #[must_use]
    pub fn tool(&self) -> Arc<dyn DynTool> {
        (self.make)()
    }
}

impl std::fmt::Debug for CatalogTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogTool")
            .field("name", &self.name)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

inventory::collect!(CatalogTool);

/// Every `#[tool]` function linked into the program, in no set order.
pub fn tools() -> impl Iterator<Item = &'static CatalogTool> {
    inventory::iter::<CatalogTool>.into_iter()
}

/// A `#[tool]` method of an `#[iris::toolbox]` service. Its tool needs the
/// service value, which only the host has, so the catalog holds no tool:
/// only the name, so that configuration naming it can say which service to
/// hand over.
pub struct CatalogToolboxTool {
    name: &'static str,
    service: &'static str,
}

impl CatalogToolboxTool {
    #[doc(hidden)]
    #[must_use]
    pub const fn new(name: &'static str, service: &'static str) -> Self {
        Self { name, service }
    }

    /// The tool's name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The service type's path (`support_desk::Desk`).
    #[must_use]
    pub fn service(&self) -> &'static str {
        self.service
    }
}

impl std::fmt::Debug for CatalogToolboxTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogToolboxTool")
            .field("name", &self.name)
            .field("service", &self.service)
            .finish()
    }
}

inventory::collect!(CatalogToolboxTool);

/// Every `#[tool]` method of a toolbox service linked into the program, in
/// no set order.
pub fn toolbox_tools() -> impl Iterator<Item = &'static CatalogToolboxTool> {
    inventory::iter::<CatalogToolboxTool>.into_iter()
}

/// Registers `$tool` (a unit struct `#[tool]` wrote) in the catalog.
#[doc(hidden)]
#[macro_export]
macro_rules! __iris_catalog_tool {
    ($tool:ident, $name:literal, $function:literal) => {
        #[allow(unsafe_code)]
        const _: () = {
            $crate::__private::inventory::submit! {
                $crate::__private::CatalogTool::new(
                    $name,
                    ::core::concat!(::core::module_path!(), "::", $function),
                    || $crate::__private::Arc::new($tool),
                )
            }
        };
    };
}

/// Registers the name of a toolbox method's tool, and its service `$service`.
#[doc(hidden)]
#[macro_export]
macro_rules! __iris_catalog_toolbox_tool {
    ($service:ty, $name:literal) => {
        #[allow(unsafe_code)]
        const _: () = {
            $crate::__private::inventory::submit! {
                $crate::__private::CatalogToolboxTool::new(
                    $name,
                    ::core::concat!(::core::module_path!(), "::", ::core::stringify!($service)),
                )
            }
        };
    };
}
