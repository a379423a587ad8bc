//! The registry that owns tools, and filtered views of it for a request.

use rustc_hash::FxHashMap;
use std::fmt;
use std::sync::Arc;

use iris_core::{
    ArgumentError, Capability, DynTool, Exposure, ParsedArgs, Tool, ToolBody, ToolContext,
    ToolDefinition, ToolName, ToolOrigin, ToolSpec, Toolbox,
};

use crate::error::RuntimeError;

/// Names only a tool that ships with Iris may answer to: the model trusts
/// what they do (`tool_search` discloses tools, `read_history` reads the
/// run's own results back), so a host's or a server's tool cannot take them.
const RESERVED_NAMES: [&str; 2] = ["tool_search", "read_history"];

mod shared;
pub use shared::{SharedRegistry, WeakSharedRegistry};

/// Owns the tools and resolves names and aliases to them.
///
/// A name or alias that another tool already answers to is refused with an
/// error naming both tools, never silently replaced.
#[derive(Default, Clone)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn DynTool>>,
    by_name: FxHashMap<String, usize>,
}

impl ToolRegistry {
    /// An empty registry.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a tool, such as the unit struct `#[tool]` writes.
    ///
    /// # Errors
    /// [`RuntimeError::NameCollision`] when its name or an alias is taken.
    pub fn register<T: Tool>(&mut self, tool: T) -> Result<&mut Self, RuntimeError> {
        self.register_dyn(Arc::new(tool))
    }

    /// Registers a tool with `exposure` in place of the one its definition
    /// gives (for example deferring a `#[tool]` that is eager by default).
    ///
    /// # Errors
    /// [`RuntimeError::NameCollision`] when its name or an alias is taken.
    pub fn register_as<T: Tool>(
        &mut self,
        tool: T,
        exposure: Exposure,
    ) -> Result<&mut Self, RuntimeError> {
        self.register_dyn_as(Arc::new(tool), exposure)
    }

    /// [`ToolRegistry::register_dyn`] with `exposure` in place of the
    /// definition's own.
    ///
    /// # Errors
    /// [`RuntimeError::NameCollision`] when its name or an alias is taken.
    pub fn register_dyn_as(
        &mut self,
        tool: Arc<dyn DynTool>,
        exposure: Exposure,
    ) -> Result<&mut Self, RuntimeError> {
        if tool.definition_dyn().exposure() == exposure {
            return self.register_dyn(tool);
        }
        let definition = tool.definition_dyn().clone().with_exposure(exposure);
        self.register_dyn(Arc::new(Relabeled {
            inner: tool,
            definition,
        }))
    }

    /// Registers a tool under `name` in place of its own (its aliases
    /// kept), for a tool whose name is taken or reserved and whose
    /// definition is not yours to change.
    ///
    /// # Errors
    /// [`RuntimeError::NameCollision`] when `name` or an alias is taken.
    pub fn register_renamed<T: Tool>(
        &mut self,
        tool: T,
        name: ToolName,
    ) -> Result<&mut Self, RuntimeError> {
        let tool: Arc<dyn DynTool> = Arc::new(tool);
        let definition = tool.definition_dyn().clone().with_name(name);
        self.register_dyn(Arc::new(Relabeled {
            inner: tool,
            definition,
        }))
    }

    /// Registers a shared, type-erased tool (MCP tools, tools built at run time).
    ///
    /// # Errors
    /// [`RuntimeError::NameCollision`] when its name or an alias is taken;
    /// [`RuntimeError::ReservedToolName`] when it would answer to
    /// `tool_search` and is not the built-in search tool.
    pub fn register_dyn(&mut self, tool: Arc<dyn DynTool>) -> Result<&mut Self, RuntimeError> {
        let definition = tool.definition_dyn();
        let names = std::iter::once(definition.name()).chain(definition.aliases());
        if definition.origin() != &ToolOrigin::BuiltIn
            && let Some(reserved) = names
                .clone()
                .find_map(|n| RESERVED_NAMES.iter().find(|r| **r == n.as_str()))
        {
            return Err(RuntimeError::ReservedToolName {
                name: reserved,
                tool: definition.name().clone(),
                item: tool.rust_item(),
            });
        }
        for name in names.clone() {
            if let Some(&index) = self.by_name.get(name.as_str()) {
                let existing = &self.tools[index];
                return Err(RuntimeError::NameCollision {
                    name: name.to_string(),
                    existing: existing.definition_dyn().name().clone(),
                    existing_item: existing.rust_item(),
                    new: definition.name().clone(),
                    new_item: tool.rust_item(),
                });
            }
        }
        let index = self.tools.len();
        for name in names {
            self.by_name.insert(name.to_string(), index);
        }
        self.tools.push(tool);
        Ok(self)
    }

    /// Registers every `#[tool]` method of a service (an `impl` block
    /// marked `#[iris::toolbox]`), each bound to `service`.
    ///
    /// # Errors
    /// [`RuntimeError::NameCollision`] when a name or an alias is taken;
    /// then none of the service's tools is registered.
    pub fn register_toolbox<S: Toolbox>(
        &mut self,
        service: Arc<S>,
    ) -> Result<&mut Self, RuntimeError> {
        let registered = self.tools.len();
        for tool in S::tools(service) {
            if let Err(collision) = self.register_dyn(tool) {
                self.forget_from(registered);
                return Err(collision);
            }
        }
        Ok(self)
    }

    /// Removes the tools `remove` picks (with their names and aliases) and
    /// hands them back, for a source whose tools changed (an MCP server's
    /// catalog refreshed); the others keep their registration order.
    pub fn unregister_where(
        &mut self,
        mut remove: impl FnMut(&Arc<dyn DynTool>) -> bool,
    ) -> Vec<Arc<dyn DynTool>> {
        let (removed, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.tools)
            .into_iter()
            .partition(|tool| remove(tool));
        if removed.is_empty() {
            self.tools = kept;
            return removed;
        }
        self.by_name.clear();
        for (index, tool) in kept.iter().enumerate() {
            let definition = tool.definition_dyn();
            for name in std::iter::once(definition.name()).chain(definition.aliases()) {
                self.by_name.insert(name.to_string(), index);
            }
        }
        self.tools = kept;
        removed
    }

    /// Drops the tools registered from index `first` on.
    fn forget_from(&mut self, first: usize) {
        self.tools.truncate(first);
        self.by_name.retain(|_, index| *index < first);
    }

    /// The tool a name or alias resolves to.
    #[must_use]
    pub fn resolve(&self, name: &str) -> Option<&Arc<dyn DynTool>> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The canonical name of the tool `name` (a name or an alias) names,
    /// for configuration that names tools.
    ///
    /// # Errors
    /// [`RuntimeError::UnknownToolName`] when no registered tool answers to
    /// `name`, saying where it was used (`place`) and the closest names.
    pub(crate) fn canonical_name(
        &self,
        name: &str,
        place: impl FnOnce() -> String,
    ) -> Result<String, RuntimeError> {
        if let Some(tool) = self.resolve(name) {
            return Ok(tool.definition_dyn().name().to_string());
        }
        let close: Vec<String> = self
            .closest_names(name, 3)
            .into_iter()
            .map(|n| format!("`{n}`"))
            .collect();
        Err(RuntimeError::UnknownToolName {
            place: place(),
            name: crate::echo::shorten(name).into_owned(),
            suggestion: if close.is_empty() {
                String::new()
            } else {
                format!("; did you mean {}?", close.join(" or "))
            },
        })
    }

    /// Every tool, in registration order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn DynTool>> {
        self.tools.iter()
    }

    /// How many tools are registered.
    #[must_use]
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Registered names closest to `name`, best first, for "did you mean":
    /// close in spelling (`sqaure` for `square`), or sharing a whole word
    /// (`refund` for `issue_refund`). A name longer than any valid tool name
    /// is no misspelling of one and is not compared at all, so hostile input
    /// costs nothing here.
    #[must_use]
    pub fn closest_names(&self, name: &str, limit: usize) -> Vec<&str> {
        if name.len() > iris_core::MAX_TOOL_NAME_LEN {
            return Vec::new();
        }
        let wanted: Vec<String> = words(name).collect();
        let mut scored: Vec<(f64, &str)> = self
            .by_name
            .keys()
            .map(|k| {
                let spelling = strsim::jaro_winkler(name, k);
                let shared = words(k).filter(|w| wanted.contains(w)).count();
                #[allow(
                    clippy::cast_precision_loss,
                    reason = "word counts of names of at most 64 characters"
                )]
                let by_words = if shared == 0 {
                    0.0
                } else {
                    0.75 + 0.2 * shared as f64 / wanted.len().max(1) as f64
                };
                (spelling.max(by_words), k.as_str())
            })
            .filter(|(score, _)| *score >= 0.75)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        scored.into_iter().take(limit).map(|(_, k)| k).collect()
    }

    /// A view of every tool; narrow it with the view's methods.
    #[must_use]
    pub fn view(self: &Arc<Self>) -> ToolRegistryView {
        ToolRegistryView {
            registry: Arc::clone(self),
            filters: Vec::new(),
        }
    }
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.definition_dyn().name()))
            .finish()
    }
}

/// A tool under a changed definition (its exposure or its origin).
struct Relabeled {
    inner: Arc<dyn DynTool>,
    definition: ToolDefinition,
}

impl DynTool for Relabeled {
    fn rust_item(&self) -> &'static str {
        self.inner.rust_item()
    }

    fn definition_dyn(&self) -> &ToolDefinition {
        &self.definition
    }

    fn parse_dyn(&self, input: &serde_json::Value) -> Result<ParsedArgs, ArgumentError> {
        self.inner.parse_dyn(input)
    }

    fn call_dyn<'a>(&'a self, args: ParsedArgs, cx: &'a ToolContext) -> ToolBody<'a> {
        self.inner.call_dyn(args, cx)
    }

    fn parse_admit_dyn<'a>(
        &'a self,
        input: &serde_json::Value,
        cx: &'a ToolContext,
        admit: &mut dyn FnMut(iris_core::CallShape) -> iris_core::Admit,
    ) -> Result<iris_core::Admitted<'a>, ArgumentError> {
        self.inner.parse_admit_dyn(input, cx, admit)
    }
}

type Filter = Arc<dyn Fn(&ToolDefinition) -> bool + Send + Sync>;

/// A read-only, filtered window on a registry: what one request offers.
///
/// Cheap to clone and to narrow; being registered does not mean being
/// offered to the model.
#[derive(Clone)]
pub struct ToolRegistryView {
    registry: Arc<ToolRegistry>,
    filters: Vec<Filter>,
}

impl ToolRegistryView {
    /// Only the tools with these canonical names.
    #[must_use]
    pub fn names<I, S>(self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        self.filter(move |d| names.iter().any(|n| d.name() == n.as_str()))
    }

    /// Only the tools carrying `tag`.
    #[must_use]
    pub fn tag(self, tag: impl Into<String>) -> Self {
        let tag = tag.into();
        self.filter(move |d| d.tags().contains(&tag))
    }

    /// Only the tools with capability `cap`.
    #[must_use]
    pub fn capability(self, cap: Capability) -> Self {
        self.filter(move |d| d.capabilities().contains(cap))
    }

    /// Only eager or only deferred tools.
    #[must_use]
    pub fn exposure(self, exposure: Exposure) -> Self {
        self.filter(move |d| d.exposure() == exposure)
    }

    /// Only the tools `predicate` accepts.
    #[must_use]
    pub fn filter(
        mut self,
        predicate: impl Fn(&ToolDefinition) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.filters.push(Arc::new(predicate));
        self
    }

    /// The definitions in view, in registration order.
    pub fn definitions(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.registry
            .tools()
            .map(|t| t.definition_dyn())
            .filter(|d| self.filters.iter().all(|f| f(d)))
    }

    /// The specs of the tools in view, for a request.
    #[must_use]
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.definitions().map(ToolDefinition::spec).collect()
    }

    /// The canonical names in view, for `ToolContextBuilder::offered`.
    #[must_use]
    pub fn offered(&self) -> Vec<ToolName> {
        self.definitions().map(|d| d.name().clone()).collect()
    }

    /// The registry behind the view.
    #[must_use]
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }
}

impl fmt::Debug for ToolRegistryView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.definitions().map(ToolDefinition::name))
            .finish()
    }
}

/// The lowercase words of a tool name, split at `_`, `-` and `.`.
fn words(name: &str) -> impl Iterator<Item = String> + '_ {
    name.split(['_', '-', '.'])
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}
