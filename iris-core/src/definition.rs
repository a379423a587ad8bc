//! Everything known about one tool, and the provider-neutral spec a request carries.

use crate::spec::ToolSpec;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::capability::{Capabilities, Capability};
use crate::error::{ArgumentError, DefinitionError};
use crate::name::ToolName;
use crate::schema::constraints::Constraints;

/// Whether a tool is offered with every request or found through `tool_search`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exposure {
    /// Offered with every request.
    #[default]
    Eager,
    /// Kept out of the prompt until discovered.
    Deferred,
}

/// Where a tool comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
#[non_exhaustive]
pub enum ToolOrigin {
    /// A Rust function or a hand-written [`Tool`](crate::Tool) of the host.
    #[default]
    Native,
    /// A tool that ships with Iris.
    BuiltIn,
    /// A tool served by an MCP server.
    Mcp {
        /// The server's configured name.
        server: String,
        /// The tool's name on the wire, which never changes even when the
        /// model-facing name is prefixed or aliased.
        wire_name: String,
    },
}

/// Bounds on what the model reads of a tool's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResultPolicy {
    /// Characters of model content past which the result is saved as an
    /// artifact and previewed; `None` uses the runtime's default.
    pub max_chars: Option<usize>,
}

impl ResultPolicy {
    /// A policy that previews results longer than `max_chars` characters.
    #[must_use]
    pub const fn with_max_chars(mut self, max_chars: usize) -> Self {
        self.max_chars = Some(max_chars);
        self
    }
}

/// Everything known about one tool.
///
/// Built once (a `#[tool]` caches it in a static) and shared by reference;
/// the schema and description sit behind `Arc`s so projecting a spec for a
/// request copies no JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    name: ToolName,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    aliases: Vec<ToolName>,
    description: Arc<str>,
    input_schema: Arc<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_schema: Option<Arc<Value>>,
    capabilities: Capabilities,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<String>,
    result_policy: ResultPolicy,
    exposure: Exposure,
    origin: ToolOrigin,
    /// What the schema asks beyond its types, compiled once; `None` for
    /// most tools, which then pay nothing after parsing.
    #[serde(skip)]
    constraints: Option<Arc<Constraints>>,
    /// Whether the schema has an optional property whose `null` parsing
    /// drops (see `schema::nulls`); when not, parsing does not look.
    #[serde(skip)]
    optional_nulls: bool,
    #[serde(skip)]
    spec_chars: SpecChars,
}

/// The size of a definition's spec in a request, measured on first use: a
/// run asks it of every offered tool at every step, and the definition
/// outlives them all.
#[derive(Debug, Clone, Default)]
struct SpecChars(OnceLock<usize>);

impl PartialEq for SpecChars {
    /// A cache of what the other fields decide, so never a difference.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl ToolDefinition {
    /// Starts a definition; [`ToolDefinitionBuilder::build`] checks it.
    pub fn builder(name: ToolName, description: impl Into<Arc<str>>) -> ToolDefinitionBuilder {
        ToolDefinitionBuilder {
            name,
            aliases: Vec::new(),
            description: description.into(),
            input_schema: None,
            output_schema: None,
            capabilities: Capabilities::NONE,
            tags: Vec::new(),
            result_policy: ResultPolicy::default(),
            exposure: Exposure::Eager,
            origin: ToolOrigin::Native,
        }
    }

    /// A definition from parts the `#[tool]` macro checked at compile time.
    pub(crate) fn from_checked_parts(
        name: ToolName,
        aliases: Vec<ToolName>,
        description: Arc<str>,
        input_schema: Value,
        capabilities: Capabilities,
        exposure: Exposure,
        result_policy: ResultPolicy,
    ) -> Self {
        Self {
            name,
            aliases,
            description,
            constraints: Constraints::of(&input_schema).map(Arc::new),
            optional_nulls: crate::schema::nulls::may_drop_nulls(&input_schema),
            input_schema: Arc::new(input_schema),
            output_schema: None,
            capabilities,
            tags: Vec::new(),
            result_policy,
            exposure,
            origin: ToolOrigin::Native,
            spec_chars: SpecChars::default(),
        }
    }

    /// Whether parsing should look for `null`s of optional properties.
    #[inline]
    pub(crate) fn has_optional_nulls(&self) -> bool {
        self.optional_nulls
    }

    /// Checks parsed input against the constraints its types do not carry
    /// (ranges, lengths, patterns, item counts, formats).
    ///
    /// # Errors
    /// [`ArgumentError`] with the path of the first value outside one and
    /// the bound it broke.
    #[inline]
    pub(crate) fn check_constraints(&self, input: &Value) -> Result<(), ArgumentError> {
        match &self.constraints {
            None => Ok(()),
            Some(constraints) => {
                crate::schema::locate::check(constraints, input, &self.input_schema)
            }
        }
    }

    /// The canonical name.
    #[must_use]
    pub fn name(&self) -> &ToolName {
        &self.name
    }

    /// Other names the model may use for this tool.
    #[must_use]
    pub fn aliases(&self) -> &[ToolName] {
        &self.aliases
    }

    /// What the tool does, written for the model.
    #[must_use]
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON Schema of the arguments (root `type: object`).
    #[must_use]
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The JSON Schema of the structured result, when the tool declares one.
    #[must_use]
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_deref()
    }

    /// The capability tags.
    #[must_use]
    pub fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    /// Free-form tags used by views and discovery.
    #[must_use]
    pub fn tags(&self) -> &[String] {
        &self.tags
    }

    /// How large a result the model reads before it is previewed.
    #[must_use]
    pub fn result_policy(&self) -> ResultPolicy {
        self.result_policy
    }

    /// Eager or deferred.
    #[must_use]
    pub fn exposure(&self) -> Exposure {
        self.exposure
    }

    /// A copy offered with `exposure` instead.
    #[must_use]
    pub fn with_exposure(mut self, exposure: Exposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// A copy the model calls by `name` (aliases kept), as for a tool
    /// whose own name is taken.
    #[must_use]
    pub fn with_name(mut self, name: ToolName) -> Self {
        self.name = name;
        self.spec_chars = SpecChars::default();
        self
    }

    /// The definition with `schema` as its output schema (the schema of
    /// its results' `data`), for code that builds definitions of its own.
    #[must_use]
    pub(crate) fn with_output_schema(mut self, schema: Option<Value>) -> Self {
        self.output_schema = schema.map(Arc::new);
        self
    }

    /// A copy with another origin, as for tools that ship with Iris.
    #[must_use]
    pub fn with_origin(mut self, origin: ToolOrigin) -> Self {
        self.origin = origin;
        self
    }

    /// Native, built-in or MCP.
    #[must_use]
    pub fn origin(&self) -> &ToolOrigin {
        &self.origin
    }

    /// Whether `name` is this tool's name or one of its aliases.
    #[must_use]
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.iter().any(|a| a == name)
    }

    /// The provider-neutral spec for a request (cheap: shares the schema).
    #[must_use]
    pub fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            self.name.clone(),
            Arc::clone(&self.description),
            Arc::clone(&self.input_schema),
        )
    }

    /// Characters of this tool's spec as OpenAI Chat Completions receives
    /// it (name, description and schema, as JSON): what the tool costs a
    /// request's prompt. Measured once per definition.
    #[must_use]
    pub fn spec_chars(&self) -> usize {
        *self.spec_chars.0.get_or_init(|| {
            let projected = crate::provider::openai_chat(&self.spec()).tool;
            serde_json::to_string(&projected).map_or(0, |json| json.chars().count())
        })
    }
}

/// Collects the parts of a [`ToolDefinition`] and checks them together.
#[derive(Debug, Clone)]
#[must_use]
pub struct ToolDefinitionBuilder {
    name: ToolName,
    aliases: Vec<ToolName>,
    description: Arc<str>,
    input_schema: Option<Value>,
    output_schema: Option<Value>,
    capabilities: Capabilities,
    tags: Vec<String>,
    result_policy: ResultPolicy,
    exposure: Exposure,
    origin: ToolOrigin,
}

impl ToolDefinitionBuilder {
    /// Adds an alias.
    pub fn alias(mut self, alias: ToolName) -> Self {
        self.aliases.push(alias);
        self
    }

    /// Sets the arguments' JSON Schema; without one the tool takes `{}`.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// Declares the schema of the structured result.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Adds a capability tag.
    pub fn capability(mut self, cap: Capability) -> Self {
        self.capabilities = self.capabilities.with(cap);
        self
    }

    /// Replaces the capability tags.
    pub fn capabilities(mut self, caps: Capabilities) -> Self {
        self.capabilities = caps;
        self
    }

    /// Adds a free-form tag.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tags.push(tag.into());
        self
    }

    /// Sets the result policy.
    pub fn result_policy(mut self, policy: ResultPolicy) -> Self {
        self.result_policy = policy;
        self
    }

    /// Sets eager or deferred exposure.
    pub fn exposure(mut self, exposure: Exposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// Sets where the tool comes from.
    pub fn origin(mut self, origin: ToolOrigin) -> Self {
        self.origin = origin;
        self
    }

    /// Checks the parts and builds the definition.
    ///
    /// # Errors
    /// [`DefinitionError`] when the description is blank, an alias repeats the
    /// name or another alias, `read_only` is combined with `write` or `exec`,
    /// or the input schema is not an object schema.
    pub fn build(self) -> Result<ToolDefinition, DefinitionError> {
        let name = self.name;
        if self.description.trim().is_empty() {
            return Err(DefinitionError::MissingDescription {
                name: name.to_string(),
            });
        }
        for (i, alias) in self.aliases.iter().enumerate() {
            if *alias == name {
                return Err(DefinitionError::AliasEqualsName {
                    name: name.to_string(),
                });
            }
            if self.aliases[..i].contains(alias) {
                return Err(DefinitionError::DuplicateAlias {
                    name: name.to_string(),
                    alias: alias.to_string(),
                });
            }
        }
        if let Some(conflict) = self.capabilities.read_only_conflict() {
            return Err(DefinitionError::ConflictingCapabilities {
                name: name.to_string(),
                conflict: conflict.as_str(),
            });
        }
        let input_schema = match self.input_schema {
            Some(schema) => {
                check_object_schema(&name, &schema)?;
                schema
            }
            None => crate::schema::empty_object_schema(),
        };
        Ok(ToolDefinition {
            name,
            aliases: self.aliases,
            description: self.description,
            constraints: Constraints::of(&input_schema).map(Arc::new),
            optional_nulls: crate::schema::nulls::may_drop_nulls(&input_schema),
            input_schema: Arc::new(input_schema),
            output_schema: self.output_schema.map(Arc::new),
            capabilities: self.capabilities,
            tags: self.tags,
            result_policy: self.result_policy,
            exposure: self.exposure,
            origin: self.origin,
            spec_chars: SpecChars::default(),
        })
    }
}

fn check_object_schema(name: &ToolName, schema: &Value) -> Result<(), DefinitionError> {
    let found = match schema {
        Value::Object(map) => match map.get("type") {
            Some(Value::String(t)) if t == "object" => return Ok(()),
            Some(other) => format!("`type: {other}`"),
            None => "a schema without `type`".to_owned(),
        },
        other => format!("a JSON {}", crate::schema::json_kind(other)),
    };
    Err(DefinitionError::SchemaNotObject {
        name: name.to_string(),
        found,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn name(s: &'static str) -> ToolName {
        ToolName::new(s).unwrap()
    }

    #[test]
    fn spec_chars_measure_the_projection_and_follow_a_rename() {
        let square = ToolDefinition::builder(name("square"), "Square a number.")
            .build()
            .unwrap();
        let projected = crate::provider::openai_chat(&square.spec()).tool;
        let expected = serde_json::to_string(&projected).unwrap().chars().count();
        assert_eq!(square.spec_chars(), expected);
        // Measured once, then kept by copies...
        assert_eq!(square.clone().spec_chars(), expected);
        // ...but a new name is a new spec.
        let renamed = square.with_name(name("square_of_an_integer"));
        assert_eq!(renamed.spec_chars(), expected + "_of_an_integer".len());
    }

    #[test]
    fn builder_checks_aliases_capabilities_and_schema() {
        let ok = ToolDefinition::builder(name("square"), "Square a number.")
            .alias(name("sq"))
            .capability(Capability::ReadOnly)
            .build()
            .unwrap();
        assert!(ok.answers_to("sq") && ok.answers_to("square") && !ok.answers_to("cube"));
        assert_eq!(ok.input_schema()["type"], "object");

        let same = ToolDefinition::builder(name("square"), "d")
            .alias(name("square"))
            .build();
        assert!(matches!(same, Err(DefinitionError::AliasEqualsName { .. })));

        let twice = ToolDefinition::builder(name("square"), "d")
            .alias(name("sq"))
            .alias(name("sq"))
            .build();
        assert!(matches!(twice, Err(DefinitionError::DuplicateAlias { .. })));

        let conflict = ToolDefinition::builder(name("rm"), "d")
            .capability(Capability::ReadOnly)
            .capability(Capability::Write)
            .build();
        assert!(matches!(
            conflict,
            Err(DefinitionError::ConflictingCapabilities {
                conflict: "write",
                ..
            })
        ));

        let blank = ToolDefinition::builder(name("x"), "  ").build();
        assert!(matches!(
            blank,
            Err(DefinitionError::MissingDescription { .. })
        ));

        let array = ToolDefinition::builder(name("x"), "d")
            .input_schema(json!({"type": "array"}))
            .build();
        assert!(matches!(
            array,
            Err(DefinitionError::SchemaNotObject { .. })
        ));
    }

    #[test]
    fn spec_shares_the_schema() {
        let def = ToolDefinition::builder(name("t"), "d").build().unwrap();
        let spec = def.spec();
        assert!(std::ptr::eq(spec.parameters(), def.input_schema.as_ref()));
        assert!(!spec.strict());
    }
}
