//! A call as the model emitted it, and as hooks and middleware see it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::definition::ToolDefinition;
use crate::tool::DynTool;

/// A tool call as the model emitted it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseBlock {
    /// The provider's call id, echoed back with the result.
    pub id: String,
    /// The name the model used (a canonical name or an alias).
    pub name: String,
    /// The raw arguments.
    pub input: Value,
    /// The provider's opaque signature of the model's reasoning before
    /// this call (Gemini's `thoughtSignature`), kept with the history and
    /// sent back verbatim with the call on the next turn, as the provider
    /// requires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl ToolUseBlock {
    /// A call of `name` with `input`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            input,
            signature: None,
        }
    }

    /// The same call, with the provider's signature of the reasoning
    /// before it.
    #[must_use]
    pub fn with_signature(mut self, signature: impl Into<String>) -> Self {
        self.signature = Some(signature.into());
        self
    }
}

/// A resolved call, as hooks and middleware see it.
///
/// `arguments` is a JSON snapshot of what the model sent (after input
/// repairs): changing it never changes what the body receives, which was
/// parsed once before this call was made.
#[derive(Clone)]
pub struct ToolCall {
    id: String,
    tool: Arc<dyn DynTool>,
    /// The arguments as JSON, for inspection.
    pub arguments: Value,
}

impl ToolCall {
    /// A call with id `id` of `tool` with `arguments`.
    pub fn new(id: impl Into<String>, tool: Arc<dyn DynTool>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            tool,
            arguments,
        }
    }

    /// The provider's call id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The canonical name of the called tool.
    #[must_use]
    pub fn name(&self) -> &str {
        self.tool.definition_dyn().name().as_str()
    }

    /// The called tool's definition.
    #[must_use]
    pub fn definition(&self) -> &ToolDefinition {
        self.tool.definition_dyn()
    }
}

impl std::fmt::Debug for ToolCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCall")
            .field("id", &self.id)
            .field("name", &self.name())
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}
