//! The provider-neutral spec of a tool that a model request carries: what
//! both a definition and the provider projections know, below each.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::name::ToolName;

/// The provider-neutral form of a tool that a model request carries.
///
/// Providers project specs into their wire shapes (see [`crate::provider`]);
/// tools never know the wire shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    name: ToolName,
    description: Arc<str>,
    parameters: Arc<Value>,
    strict: bool,
}

impl ToolSpec {
    /// A spec of `name` taking arguments that `parameters` (a JSON Schema
    /// object) describes, not strict.
    #[must_use]
    pub fn new(
        name: ToolName,
        description: impl Into<Arc<str>>,
        parameters: impl Into<Arc<Value>>,
    ) -> Self {
        Self {
            name,
            description: description.into(),
            parameters: parameters.into(),
            strict: false,
        }
    }

    /// The name the model calls.
    #[must_use]
    pub fn name(&self) -> &ToolName {
        &self.name
    }

    /// What the tool does.
    #[must_use]
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The arguments' JSON Schema.
    #[must_use]
    pub fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// Whether the request asks the provider to enforce the schema strictly
    /// (OpenAI structured outputs); projections fall back and report when a
    /// schema cannot be made strict.
    #[must_use]
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// This spec with strict mode requested or not.
    #[must_use]
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }
}
