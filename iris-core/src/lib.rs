#![cfg_attr(docsrs, feature(doc_cfg))]
//! Core types and traits of Iris: tool definitions, provider-neutral specs
//! and their wire projections, results, the execution context, and the
//! [`Tool`] trait.
//!
//! Tool crates can depend on this crate alone; the runtime (registry,
//! executor, discovery) lives in `iris-sdk-runtime`. Most users depend on the
//! `iris` facade, which re-exports everything here.
//!
//! ```
//! use iris_core::{Tool, ToolContext, RunId, provider};
//! # use iris_core::{ToolDefinition, ToolName, ToolBody, ToolResult, ArgumentError, Capability};
//! # use serde_json::{json, Value};
//! # use std::sync::OnceLock;
//! // A hand-written tool; `#[iris::tool]` writes this for you.
//! struct Echo;
//!
//! impl Tool for Echo {
//!     type Args = String;
//!     fn definition(&self) -> &ToolDefinition {
//!         static DEF: OnceLock<ToolDefinition> = OnceLock::new();
//!         DEF.get_or_init(|| {
//!             ToolDefinition::builder(ToolName::new("echo").unwrap(), "Repeat the text.")
//!                 .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
//!                 .capability(Capability::ReadOnly)
//!                 .build()
//!                 .unwrap()
//!         })
//!     }
//!     fn parse(&self, input: &Value) -> Result<String, ArgumentError> {
//!         input["text"].as_str().map(str::to_owned)
//!             .ok_or_else(|| ArgumentError::new("$.text", "expected a string"))
//!     }
//!     fn call<'a>(&'a self, text: String, _cx: &'a ToolContext) -> ToolBody<'a> {
//!         ToolBody::Async(Box::pin(async move { ToolResult::text(text) }))
//!     }
//! }
//!
//! let wire = provider::openai_chat(&Echo.definition().spec());
//! assert_eq!(wire.tool["function"]["name"], "echo");
//! ```

mod call;
mod call_id;
mod capability;
#[cfg(feature = "catalog")]
pub mod catalog;
mod content;
mod context;
mod definition;
mod dynamic;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod into_result;
mod middleware;
mod name;
pub mod provider;
mod result;
pub mod schema;
mod spec;
mod stop;
pub mod text;
#[cfg(feature = "tls")]
#[doc(hidden)]
pub mod tls;
mod tool;
mod toolbox;

#[doc(hidden)]
pub mod __private {
    pub use crate::private::*;
}
mod private;

/// The JSON crate of Iris's public API (`Value`, `json!`), re-exported so
/// tool crates need no dependency of their own.
pub use serde_json;

/// The schema crate behind tool schemas, re-exported so that a crate
/// depending on `iris` alone can derive `JsonSchema` for nested argument
/// types (`#[derive(iris::schemars::JsonSchema)]` with
/// `#[schemars(crate = "iris::schemars")]`).
pub use schemars;

/// The serialization crate, re-exported for the same reason as
/// [`schemars`]: nested argument types derive `Deserialize` with
/// `#[serde(crate = "iris::serde")]`.
pub use serde;

pub use call::{ToolCall, ToolUseBlock};
pub use call_id::{CallId, CallIdError, CallPath};
pub use capability::{Capabilities, Capability};
pub use content::{ContentBlock, IMAGE_MEDIA_TYPES, ImageBlock, MAX_IMAGE_BYTES, sniff_media_type};
pub use context::{FromToolContext, RunId, State, ToolContext, ToolContextBuilder};
pub use definition::{Exposure, ResultPolicy, ToolDefinition, ToolDefinitionBuilder, ToolOrigin};
pub use dynamic::DynamicTool;
pub use error::{ArgumentError, ArgumentFault, DefinitionError, ImageError, MiddlewareError};
pub use into_result::{IntoToolResult, Json};
pub use middleware::{InnerStack, IntoMiddlewareResult, Middleware, Next};
pub use name::{MAX_TOOL_NAME_LEN, ToolName, check_tool_name};
pub use result::{ArtifactRef, ToolError, ToolErrorKind, ToolResult};
pub use schema::Patch;
pub use spec::ToolSpec;
pub use stop::StopFlag;
pub use tool::{Admit, Admitted, BoxFuture, CallShape, DynTool, ParsedArgs, Tool, ToolBody};
pub use toolbox::Toolbox;
