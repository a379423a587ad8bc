//! Projections of [`ToolSpec`]s into providers' wire shapes.
//!
//! Pure functions from specs to JSON. Each projection returns the wire value
//! together with a [`ProjectionReport`] saying what had to change (strict
//! mode, `$ref` inlining, dropped keywords) and what could not be expressed,
//! so hosts can log or test it instead of discovering it in a 400 response.
//!
//! | provider | function | shape |
//! |---|---|---|
//! | OpenAI Chat Completions | [`openai_chat`] | `{"type":"function","function":{name, description, parameters, strict}}` |
//! | OpenAI Responses | [`openai_responses`] | `{"type":"function", name, description, parameters, strict}` |
//! | Anthropic Messages | [`anthropic`] | `{name, description, input_schema}` |
//! | Gemini | [`gemini`] | `{name, description, parametersJsonSchema}` (JSON Schema subset) |
//! | Gemini, OpenAPI form | [`gemini_openapi`] | `{name, description, parameters}` (OpenAPI subset, no `$ref`) |
//!
//! Gemini takes a tool's parameters in either of two fields; [`gemini`] uses
//! the JSON Schema one, which keeps references, open maps and tuples, and
//! [`gemini_openapi`] the OpenAPI one, for models and gateways that only
//! take that.
//!
//! Results travel back the same way: [`openai_chat_result`],
//! [`openai_responses_result`], [`anthropic_result`] and [`gemini_result`]
//! turn a [`ToolResult`](crate::ToolResult), images included, into each
//! provider's message shape.
#![doc = include_str!("keywords.md")]

mod anthropic;
mod describe;
mod gemini;
mod gemini_openapi;
mod inline;
mod openai;
mod results;
mod strict;
pub(crate) mod walk;

use serde::Serialize;
use serde_json::Value;

use crate::name::ToolName;
use crate::spec::ToolSpec;

pub use anthropic::anthropic;
pub use gemini::gemini;
pub use gemini_openapi::gemini_openapi;
pub use openai::{openai_chat, openai_responses};
pub use results::{anthropic_result, gemini_result, openai_chat_result, openai_responses_result};

/// One tool in a provider's wire shape, with what the projection did to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Projection {
    /// The JSON to put in the request's tool list.
    pub tool: Value,
    /// What changed on the way.
    pub report: ProjectionReport,
}

/// What a projection changed or could not express, per tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProjectionReport {
    /// The tool.
    pub tool: ToolName,
    /// Whether the projected tool asks the provider for strict schema
    /// enforcement.
    pub strict: bool,
    /// Each change, in the order it was made.
    pub notes: Vec<ProjectionNote>,
}

impl ProjectionReport {
    fn new(tool: &ToolName) -> Self {
        Self {
            tool: tool.clone(),
            strict: false,
            notes: Vec::new(),
        }
    }
}

/// One change a projection made, located by a JSON Pointer into the schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "note", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProjectionNote {
    /// Strict mode was requested but the schema cannot be made strict; the
    /// tool was sent non-strict.
    NotStrict {
        /// Where the obstacle is.
        at: String,
        /// Why strict mode cannot express it.
        reason: String,
    },
    /// A keyword the target does not support was removed.
    DroppedKeyword {
        /// Where it was.
        at: String,
        /// The keyword.
        keyword: String,
    },
    /// A constraint the target does not support was removed, and its
    /// meaning added to the description ("2 to 12 characters"); the
    /// runtime still enforces it.
    DescribedKeyword {
        /// Where it was.
        at: String,
        /// The keyword.
        keyword: String,
    },
    /// An optional property became required-but-nullable (strict mode).
    MadeNullable {
        /// The property.
        at: String,
    },
    /// `oneOf` became `anyOf`.
    OneOfToAnyOf {
        /// Where.
        at: String,
    },
    /// The branches of an `allOf` were folded into one schema (the target
    /// has no `allOf`).
    MergedAllOf {
        /// Where.
        at: String,
    },
    /// A `$ref` was replaced by the schema it points to.
    InlinedRef {
        /// Where.
        at: String,
        /// The reference.
        reference: String,
    },
    /// A recursive `$ref` could not be inlined and was replaced by a plain
    /// object schema.
    RecursionCut {
        /// Where.
        at: String,
        /// The reference.
        reference: String,
    },
    /// A `$ref` with keywords beside it (a description), which the target
    /// refuses, became a one-branch `anyOf` holding the `$ref`, the keywords
    /// kept beside the `anyOf`.
    RefWrapped {
        /// Where.
        at: String,
        /// The reference.
        reference: String,
    },
    /// A reference into a recursive type, which the provider expands only
    /// to a limited depth (Gemini): deeper values are not described.
    RecursionLimited {
        /// Where.
        at: String,
        /// The reference.
        reference: String,
    },
    /// A recursive type was inlined where it is used with a description
    /// (strict mode refuses keywords beside `$ref`) and also kept in
    /// `$defs` for its own references: its schema is sent twice.
    RepeatedDefinition {
        /// Where the copy was inlined.
        at: String,
        /// The reference.
        reference: String,
        /// Characters of schema the copy adds to the request.
        chars: usize,
    },
    /// Inlining stopped because the schema grew past the limit.
    TooLarge {
        /// Where inlining stopped.
        at: String,
        /// The node limit that was reached.
        limit: usize,
    },
}

impl ProjectionNote {
    /// Where in the emitted schema the change was made (a JSON Pointer).
    #[must_use]
    pub fn at(&self) -> &str {
        match self {
            ProjectionNote::NotStrict { at, .. }
            | ProjectionNote::DroppedKeyword { at, .. }
            | ProjectionNote::DescribedKeyword { at, .. }
            | ProjectionNote::MadeNullable { at }
            | ProjectionNote::OneOfToAnyOf { at }
            | ProjectionNote::MergedAllOf { at }
            | ProjectionNote::InlinedRef { at, .. }
            | ProjectionNote::RecursionCut { at, .. }
            | ProjectionNote::RefWrapped { at, .. }
            | ProjectionNote::RecursionLimited { at, .. }
            | ProjectionNote::RepeatedDefinition { at, .. }
            | ProjectionNote::TooLarge { at, .. } => at,
        }
    }

    /// Points the note at `at` (a node moved by a later rewrite).
    fn set_at(&mut self, to: String) {
        match self {
            ProjectionNote::NotStrict { at, .. }
            | ProjectionNote::DroppedKeyword { at, .. }
            | ProjectionNote::DescribedKeyword { at, .. }
            | ProjectionNote::MadeNullable { at }
            | ProjectionNote::OneOfToAnyOf { at }
            | ProjectionNote::MergedAllOf { at }
            | ProjectionNote::InlinedRef { at, .. }
            | ProjectionNote::RecursionCut { at, .. }
            | ProjectionNote::RefWrapped { at, .. }
            | ProjectionNote::RecursionLimited { at, .. }
            | ProjectionNote::RepeatedDefinition { at, .. }
            | ProjectionNote::TooLarge { at, .. } => *at = to,
        }
    }
}

/// Projects every spec with `project`, keeping the wire values and the
/// reports apart.
pub fn project_all(
    specs: &[ToolSpec],
    project: fn(&ToolSpec) -> Projection,
) -> (Vec<Value>, Vec<ProjectionReport>) {
    specs
        .iter()
        .map(|spec| {
            let Projection { tool, report } = project(spec);
            (tool, report)
        })
        .unzip()
}

#[cfg(any(test, feature = "fuzzing"))]
pub(crate) mod invariants;
#[cfg(test)]
mod tests;
