//! A call as the model emitted it, and as hooks and middleware see it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::definition::ToolDefinition;
use crate::tool::DynTool;

/// A tool call as the model emitted it.
///
/// The one Iris type that keeps the providers' own field names (`id`,
/// `name`, `input`, as in Anthropic's `tool_use` block and OpenAI's
/// `function_call`): it is the wire's call, before Iris resolved it. Every
/// type made from it says `call_id`, `tool` and `arguments`.
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
/// [`arguments`](Self::arguments) is a JSON snapshot of what the model sent
/// (after input repairs): changing it ([`arguments_mut`](Self::arguments_mut))
/// changes what later middleware and hooks read, never what the body
/// receives, which was parsed once before this call was made.
#[derive(Clone)]
pub struct ToolCall {
    call_id: String,
    tool: Arc<dyn DynTool>,
    arguments: Value,
}

impl ToolCall {
    /// A call with id `call_id` of `tool` with `arguments`.
    pub fn new(call_id: impl Into<String>, tool: Arc<dyn DynTool>, arguments: Value) -> Self {
        Self {
            call_id: call_id.into(),
            tool,
            arguments,
        }
    }

    /// The provider's call id.
    #[must_use]
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The canonical name of the called tool.
    #[must_use]
    pub fn tool(&self) -> &str {
        self.tool.definition_dyn().name().as_str()
    }

    /// The called tool's definition.
    #[must_use]
    pub fn definition(&self) -> &ToolDefinition {
        self.tool.definition_dyn()
    }

    /// The arguments as JSON, for inspection.
    #[must_use]
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The arguments' snapshot, to change for the stages after this one.
    pub fn arguments_mut(&mut self) -> &mut Value {
        &mut self.arguments
    }
}

impl std::fmt::Debug for ToolCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCall")
            .field("call_id", &self.call_id)
            .field("tool", &self.tool())
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}
