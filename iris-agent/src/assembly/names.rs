//! The functions and factories an agent file may name: everything in the
//! link-time catalog, or an explicit list.

use std::sync::Arc;

use iris_core::{DynTool, Middleware, Tool, Toolbox};
use iris_runtime::hooks::HookRegistration;

use super::factory::{catalog_hook_factories, catalog_middleware_factories};
use iris_runtime::factories::{HookFactory, MiddlewareFactory};

/// One nameable thing: its name, its path, and the thing.
pub(crate) struct Entry<T: ?Sized> {
    pub(crate) name: String,
    pub(crate) path: String,
    pub(crate) item: Arc<T>,
}

impl<T: ?Sized> Clone for Entry<T> {
    fn clone(&self) -> Self {
        Self {
            name: self.name.clone(),
            path: self.path.clone(),
            item: Arc::clone(&self.item),
        }
    }
}

/// What an agent file can name: `#[tool]` functions, hook factories and
/// middleware factories, each by its name and by its module path.
///
/// [`Assembly::from_catalog`] takes everything the program links;
/// [`Assembly::builder`] lists them by hand, for hosts that want no
/// link-time collection.
#[derive(Clone, Default)]
pub struct Assembly {
    pub(crate) tools: Vec<Entry<dyn DynTool>>,
    pub(crate) hook_factories: Vec<Entry<dyn HookFactory>>,
    pub(crate) middleware_factories: Vec<Entry<dyn MiddlewareFactory>>,
    /// Observers the assembled executor reports to.
    pub(crate) observers: Vec<Arc<dyn iris_runtime::RunEventObserver>>,
    /// The host's own hooks, given every assembled agent before the file's.
    pub(crate) hooks: Vec<HookRegistration>,
    /// The host's own middleware, outside the file's.
    pub(crate) middleware: Vec<Arc<dyn Middleware>>,
    /// Whether the names came from the link-time catalog (a name missing
    /// there may be one the linker left out).
    pub(crate) from_catalog: bool,
    /// The folders the file's MCP servers that may ask their caller are
    /// told are their roots.
    pub(crate) roots: Vec<std::path::PathBuf>,
}

impl std::fmt::Debug for Assembly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assembly")
            .field("tools", &paths(&self.tools))
            .field("hook_factories", &paths(&self.hook_factories))
            .field("middleware_factories", &paths(&self.middleware_factories))
            .field("observers", &self.observers.len())
            .field("hooks", &self.hooks.len())
            .field("middleware", &self.middleware.len())
            .field("from_catalog", &self.from_catalog)
            .field("roots", &self.roots)
            .finish()
    }
}

fn paths<T: ?Sized>(entries: &[Entry<T>]) -> String {
    entries
        .iter()
        .map(|e| e.path.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// "no `what` is named `wanted`" with the closest name (or module path,
/// when `wanted` is a path) of `entries`; from the catalog, with what to do
/// when the linker left the item out. A name two entries share is said to
/// be shared, with their paths, rather than missing.
pub(crate) fn unknown_name<T: ?Sized>(
    entries: &[Entry<T>],
    wanted: &str,
    what: &str,
    from_catalog: bool,
) -> String {
    let shared = shared_names(entries, wanted);
    if shared.len() > 1 {
        let paths: Vec<String> = shared.iter().map(|p| format!("`{p}`")).collect();
        return format!(
            "more than one {what} is named `{wanted}` ({}); name one by its path",
            paths.join(", ")
        );
    }
    let known: Vec<&str> = if wanted.contains("::") {
        entries.iter().map(|e| e.path.as_str()).collect()
    } else {
        entries.iter().map(|e| e.name.as_str()).collect()
    };
    let closest = iris_runtime::config::yaml::closest(wanted, &known, what);
    if from_catalog && !closest.starts_with("did you mean") {
        format!(
            "no {what} is named `{wanted}`; {closest}. Names come from the link-time catalog, and the linker leaves out a library crate the program never uses: if `{wanted}` is defined in one, use something of that crate in your binary (such as `let _ = my_tools::{struct_name};` in `main`), or list it with `Assembly::builder()`",
            struct_name = struct_name_of(wanted)
        )
    } else {
        format!("no {what} is named `{wanted}`; {closest}")
    }
}

/// The struct a `#[tool]` or factory function's name becomes
/// (`create_feedback` -> `CreateFeedback`), for the hint above.
fn struct_name_of(function: &str) -> String {
    let name = function.rsplit("::").next().unwrap_or(function);
    name.split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect::<String>()
            })
        })
        .collect()
}

impl Assembly {
    /// Every `#[tool]` function and factory linked into the program.
    #[must_use]
    pub fn from_catalog() -> Self {
        let mut assembly = Self {
            from_catalog: true,
            ..Self::default()
        };
        for tool in iris_core::catalog::tools() {
            assembly.tools.push(Entry {
                name: tool.name().to_owned(),
                path: tool.path().to_owned(),
                item: tool.tool(),
            });
        }
        for entry in catalog_hook_factories() {
            assembly.hook_factories.push(Entry {
                name: entry.factory.name().to_owned(),
                path: entry.path.to_owned(),
                item: Arc::new(StaticHookFactory(entry.factory)),
            });
        }
        for entry in catalog_middleware_factories() {
            assembly.middleware_factories.push(Entry {
                name: entry.factory.name().to_owned(),
                path: entry.path.to_owned(),
                item: Arc::new(StaticMiddlewareFactory(entry.factory)),
            });
        }
        // The linker's order is not the source's: sort for stable errors.
        assembly.tools.sort_by(|a, b| a.path.cmp(&b.path));
        assembly.hook_factories.sort_by(|a, b| a.path.cmp(&b.path));
        assembly
            .middleware_factories
            .sort_by(|a, b| a.path.cmp(&b.path));
        assembly
    }

    /// An empty list to fill by hand.
    pub fn builder() -> AssemblyBuilder {
        AssemblyBuilder {
            assembly: Self::default(),
        }
    }

    /// Observers the executors of agents assembled from now on report to
    /// (run and call events).
    #[must_use]
    pub fn with_observers(
        mut self,
        observers: impl IntoIterator<Item = Arc<dyn iris_runtime::RunEventObserver>>,
    ) -> Self {
        self.observers.extend(observers);
        self
    }

    /// The folders an assembled agent's MCP servers are told are their
    /// roots when they ask (`roots/list`): the workspace the host serves.
    /// Only servers the file lets ask their caller (`relay_input`) are
    /// told; the others learn no folder of the host's.
    #[must_use]
    pub fn with_roots(
        mut self,
        folders: impl IntoIterator<Item = impl Into<std::path::PathBuf>>,
    ) -> Self {
        self.roots = folders.into_iter().map(Into::into).collect();
        self
    }

    /// A hook of the host's own, in code, that every agent assembled from
    /// now on has whatever its file says: it runs before the file's hooks
    /// of the same event (a deny of either refuses the call). For a guard
    /// that must hold for every agent file the host loads.
    #[must_use]
    pub fn with_hook(mut self, hook: HookRegistration) -> Self {
        self.hooks.push(hook);
        self
    }

    /// A middleware of the host's own that every agent assembled from now
    /// on has, outside the file's `middleware.tools` (the first added is
    /// outermost).
    #[must_use]
    pub fn with_middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// The `#[tool]` methods of `service` (an `#[iris::toolbox]` type),
    /// which an agent file then names by tool name (`invoice_amount`) or as
    /// `Type::method` (`Billing::invoice_amount`). A service's tools need
    /// the service value, so the catalog cannot hold them: the host hands
    /// it over here.
    #[must_use]
    pub fn with_toolbox<S: Toolbox>(mut self, service: Arc<S>) -> Self {
        self.add_toolbox(service);
        self
    }

    fn add_toolbox<S: Toolbox>(&mut self, service: Arc<S>) {
        for tool in S::tools(service) {
            self.tools.push(Entry {
                name: tool.definition_dyn().name().to_string(),
                path: tool.rust_item().to_owned(),
                item: tool,
            });
        }
    }

    pub(crate) fn tool(&self, name: &str) -> Option<&Entry<dyn DynTool>> {
        find(&self.tools, name)
    }

    pub(crate) fn hook_factory(&self, name: &str) -> Option<&Entry<dyn HookFactory>> {
        find(&self.hook_factories, name)
    }

    pub(crate) fn middleware_factory(&self, name: &str) -> Option<&Entry<dyn MiddlewareFactory>> {
        find(&self.middleware_factories, name)
    }
}

/// By name first, then by path; a name two functions share resolves to
/// neither (the path tells them apart).
/// The one entry `wanted` names: by name, by whole path, or by the end of
/// a path at a `::` (`Billing::invoice_amount`, `math::cube`).
fn find<'a, T: ?Sized>(entries: &'a [Entry<T>], wanted: &str) -> Option<&'a Entry<T>> {
    let mut by_name = entries.iter().filter(|e| e.name == wanted);
    if let Some(first) = by_name.next() {
        return by_name.next().is_none().then_some(first);
    }
    if let Some(exact) = entries.iter().find(|e| e.path == wanted) {
        return Some(exact);
    }
    if !wanted.contains("::") {
        return None;
    }
    let mut by_tail = entries.iter().filter(|e| {
        e.path
            .strip_suffix(wanted)
            .is_some_and(|head| head.ends_with("::"))
    });
    let first = by_tail.next()?;
    by_tail.next().is_none().then_some(first)
}

/// Names that more than one entry answers to.
pub(crate) fn shared_names<T: ?Sized>(entries: &[Entry<T>], wanted: &str) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e.name == wanted)
        .map(|e| e.path.clone())
        .collect()
}

/// Builds an [`Assembly`] by hand.
#[must_use]
pub struct AssemblyBuilder {
    assembly: Assembly,
}

impl AssemblyBuilder {
    /// A tool, named as its definition says (and by its Rust path).
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        let tool: Arc<dyn DynTool> = Arc::new(tool);
        self.assembly.tools.push(Entry {
            name: tool.definition_dyn().name().to_string(),
            path: tool.rust_item().to_owned(),
            item: tool,
        });
        self
    }

    /// The `#[tool]` methods of `service` (see [`Assembly::with_toolbox`]).
    pub fn toolbox<S: Toolbox>(mut self, service: Arc<S>) -> Self {
        self.assembly.add_toolbox(service);
        self
    }

    /// A hook of the host's own (see [`Assembly::with_hook`]).
    pub fn hook(mut self, hook: HookRegistration) -> Self {
        self.assembly.hooks.push(hook);
        self
    }

    /// A middleware of the host's own (see [`Assembly::with_middleware`]).
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.assembly.middleware.push(Arc::new(middleware));
        self
    }

    /// A hook factory under `name`.
    pub fn hook_factory(mut self, name: impl Into<String>, factory: impl HookFactory) -> Self {
        let name = name.into();
        self.assembly.hook_factories.push(Entry {
            path: name.clone(),
            name,
            item: Arc::new(factory),
        });
        self
    }

    /// A middleware factory under `name`.
    pub fn middleware_factory(
        mut self,
        name: impl Into<String>,
        factory: impl MiddlewareFactory,
    ) -> Self {
        let name = name.into();
        self.assembly.middleware_factories.push(Entry {
            path: name.clone(),
            name,
            item: Arc::new(factory),
        });
        self
    }

    /// The finished list.
    #[must_use]
    pub fn build(self) -> Assembly {
        self.assembly
    }
}

/// A catalog factory behind an `Arc`, like one given by hand.
struct StaticHookFactory(&'static dyn HookFactory);

impl HookFactory for StaticHookFactory {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn options_schema(&self) -> serde_json::Value {
        self.0.options_schema()
    }

    fn build(
        &self,
        options: &serde_json::Value,
    ) -> Result<iris_runtime::hooks::Hook, iris_core::ArgumentError> {
        self.0.build(options)
    }
}

struct StaticMiddlewareFactory(&'static dyn MiddlewareFactory);

impl MiddlewareFactory for StaticMiddlewareFactory {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn options_schema(&self) -> serde_json::Value {
        self.0.options_schema()
    }

    fn build(
        &self,
        options: &serde_json::Value,
    ) -> Result<Arc<dyn iris_core::Middleware>, iris_core::ArgumentError> {
        self.0.build(options)
    }
}

/// How the message for a tool name the agent does not have begins.
pub(super) const UNKNOWN_TOOL: &str = "the agent has no tool named";

/// "no tool is named `x`", with the closest tool, or the model-facing name
/// when `x` is a built-in key.
pub(super) fn unknown_tool(name: &str, known: &[String]) -> String {
    if let Some((_, tool)) = iris_tools::fs::CONFIG_KEYS
        .iter()
        .find(|(key, _)| *key == name)
    {
        return format!(
            "`{name}` is a built-in key; tools are named here as the model calls them: write `{tool}`"
        );
    }
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    format!(
        "{UNKNOWN_TOOL} `{name}`; {}",
        iris_runtime::config::yaml::closest(name, &known, "tool")
    )
}
