//! Tools assembled at run time from a definition and a handler, for
//! catalogs that are data rather than code (remote tools, generated
//! catalogs, tests).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use crate::context::ToolContext;
use crate::definition::ToolDefinition;
use crate::error::ArgumentError;
use crate::result::ToolResult;
use crate::tool::{BoxFuture, Tool, ToolBody};

type Handler = Arc<dyn Fn(Value, ToolContext) -> BoxFuture<'static, ToolResult> + Send + Sync>;

/// A tool made of a [`ToolDefinition`] and an async handler that receives
/// the input as JSON.
///
/// The input must be a JSON object; checking it against the schema is the
/// handler's business (or the remote side's).
#[derive(Clone)]
pub struct DynamicTool {
    definition: ToolDefinition,
    handler: Handler,
}

impl DynamicTool {
    /// A tool that runs `handler` for each call.
    pub fn new<F, Fut>(definition: ToolDefinition, handler: F) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolResult> + Send + 'static,
    {
        Self {
            definition,
            handler: Arc::new(move |input, cx| Box::pin(handler(input, cx))),
        }
    }
}

impl fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicTool")
            .field("name", self.definition.name())
            .finish_non_exhaustive()
    }
}

impl Tool for DynamicTool {
    type Args = Value;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn parse(&self, input: &Value) -> Result<Value, ArgumentError> {
        if input.is_object() {
            Ok(input.clone())
        } else {
            Err(ArgumentError::new(
                "$",
                format!(
                    "expected a JSON object of arguments, found {}",
                    kind_of(input)
                ),
            ))
        }
    }

    fn call<'a>(&'a self, args: Value, cx: &'a ToolContext) -> ToolBody<'a> {
        ToolBody::Async((self.handler)(args, cx.clone()))
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
