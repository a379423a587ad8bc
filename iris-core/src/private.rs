//! What `#[tool]` and `#[middleware]` expansions call. Not a public API:
//! anything here may change in any release.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt::Display;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use ::schemars;
pub use ::serde;
pub use ::serde_json;
pub use std::boxed::Box;
pub use std::sync::Arc;
pub use std::sync::OnceLock;
pub use std::vec::Vec;

pub use crate::call::ToolCall;
pub use crate::capability::Capability;
pub use crate::context::{FromToolContext, ToolContext};
pub use crate::definition::ToolDefinition;
pub use crate::error::ArgumentError;
pub use crate::error::MiddlewareError;
pub use crate::into_result::IntoToolResult;
pub use crate::middleware::{IntoMiddlewareResult, Middleware, Next};
pub use crate::result::ToolResult;
pub use crate::schema::output_probe::{
    OutputOf, OutputSchemaFn, OutputViaIntoToolResult, OutputViaJson, OutputViaOk, OutputViaSchema,
};
pub use crate::tool::{BoxFuture, DynTool, Tool, ToolBody};
pub use crate::toolbox::Toolbox;

#[cfg(feature = "catalog")]
pub use crate::__iris_catalog_tool as catalog_tool;
#[cfg(feature = "catalog")]
pub use crate::__iris_catalog_toolbox_tool as catalog_toolbox_tool;
#[cfg(feature = "catalog")]
pub use crate::catalog::{CatalogTool, CatalogToolboxTool};
#[cfg(feature = "catalog")]
pub use ::inventory;

/// Without the catalog, a `#[tool]` registers nothing at link time (and
/// costs nothing more to compile).
#[cfg(not(feature = "catalog"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __iris_no_catalog_tool {
    ($($tokens:tt)*) => {};
}
#[cfg(not(feature = "catalog"))]
pub use crate::__iris_no_catalog_tool as catalog_tool;
#[cfg(not(feature = "catalog"))]
pub use crate::__iris_no_catalog_tool as catalog_toolbox_tool;

use crate::capability::Capabilities;
use crate::definition::{Exposure, ResultPolicy};
use crate::into_result::{error_result, serialized_result};
use crate::name::ToolName;
use crate::schema::{input_schema_for, reject_unknown_keys};

/// The attribute values of one `#[tool]`, checked at compile time.
#[derive(Debug)]
pub struct ToolMeta {
    /// Canonical name.
    pub name: &'static str,
    /// The raw description (doc comment lines or `description = ...`).
    pub description: &'static str,
    /// Aliases.
    pub aliases: &'static [&'static str],
    /// Capability tags.
    pub capabilities: &'static [Capability],
    /// Whether the tool is deferred.
    pub deferred: bool,
    /// `max_result_chars`.
    pub max_result_chars: Option<usize>,
}

/// A tool's attribute values and the definition built from them on first use.
#[derive(Debug)]
pub struct ToolStatic {
    meta: ToolMeta,
    built_in: bool,
    definition: OnceLock<ToolDefinition>,
}

impl ToolStatic {
    /// Holds `meta` until the definition is first asked for.
    #[must_use]
    pub const fn new(meta: ToolMeta) -> Self {
        Self {
            meta,
            built_in: false,
            definition: OnceLock::new(),
        }
    }

    /// As [`ToolStatic::new`], for a tool that ships with Iris (origin
    /// [`ToolOrigin::BuiltIn`](crate::ToolOrigin::BuiltIn)).
    #[must_use]
    pub const fn built_in(meta: ToolMeta) -> Self {
        Self {
            meta,
            built_in: true,
            definition: OnceLock::new(),
        }
    }
}

/// What a tool's parameter type, and its argument type, must be. Generated
/// code states it once per parameter, in the `where` clauses of the argument
/// struct and the tool, so a type without the derives is reported on the
/// parameter's type instead of from each use inside the derived code.
pub trait ToolParam: DeserializeOwned + JsonSchema {}

impl<T: DeserializeOwned + JsonSchema> ToolParam for T {}

/// The same requirement, checked first by a function of its own with the
/// parameter types in its `where` clause, so that the first error a user
/// reads is this one, on the parameter, with the lines that fix it. No
/// supertraits and `do_not_recommend` on the impl: rustc then reports this
/// trait's own message instead of the missing derive it stands for.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it needs `Deserialize` and `JsonSchema`",
    label = "parsed from the model's JSON and described to it by a JSON Schema, so it needs both derives",
    note = "derive both on the type; in a crate that depends on `iris` alone, through `iris`:\n    #[derive(iris::serde::Deserialize, iris::schemars::JsonSchema)]\n    #[serde(crate = \"iris::serde\")]\n    #[schemars(crate = \"iris::schemars\")]\n(with `serde` and `schemars` as dependencies of your own, `#[derive(serde::Deserialize, schemars::JsonSchema)]` alone); the errors after this one follow from it"
)]
pub trait ToolParamCheck {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema> ToolParamCheck for T {}

/// The cached definition of a tool whose arguments are `A`, with the output
/// schema `output` makes (when its return type has one).
#[inline]
pub fn definition<A: ToolParam>(
    tool: &'static ToolStatic,
    output: OutputSchemaFn,
) -> &'static ToolDefinition {
    // A call reaches the definition several times (parse, the call's
    // shape, the executor's own look): once built, each is a load and a
    // test in place rather than a call.
    match tool.definition.get() {
        Some(definition) => definition,
        None => definition_with(tool, input_schema_for::<A>, output),
    }
}

// The cache is reached through a function pointer, so its code (the
// `OnceLock` and its closure) is compiled once here rather than per tool.
#[cold]
fn definition_with(
    tool: &'static ToolStatic,
    schema: fn() -> Value,
    output: OutputSchemaFn,
) -> &'static ToolDefinition {
    tool.definition.get_or_init(|| {
        let definition = build_definition(&tool.meta, schema(), output.map(|make| make()));
        if tool.built_in {
            definition.with_origin(crate::ToolOrigin::BuiltIn)
        } else {
            definition
        }
    })
}

// Not generic, so it is compiled once here rather than once per tool.
fn build_definition(
    meta: &'static ToolMeta,
    schema: Value,
    output_schema: Option<Value>,
) -> ToolDefinition {
    let description = normalize_doc(meta.description);
    // A blank `include_str!` file is the one thing the macro cannot see;
    // the name is a better description than none.
    let description: Arc<str> = if description.is_empty() {
        meta.name.into()
    } else {
        description.into()
    };
    ToolDefinition::from_checked_parts(
        ToolName::from_checked(Cow::Borrowed(meta.name)),
        meta.aliases
            .iter()
            .map(|a| ToolName::from_checked(Cow::Borrowed(*a)))
            .collect(),
        description,
        schema,
        Capabilities::from_slice(meta.capabilities),
        if meta.deferred {
            Exposure::Deferred
        } else {
            Exposure::Eager
        },
        ResultPolicy {
            max_chars: meta.max_result_chars,
        },
    )
    .with_output_schema(output_schema)
}

/// Joins doc comment lines the way rustdoc shows them: the common
/// indentation removed, blank lines at either end dropped, paragraphs kept.
#[must_use]
pub fn normalize_doc(raw: &str) -> String {
    let lines: Vec<&str> = raw.lines().map(str::trim_end).collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let body: Vec<&str> = lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or_default())
        .collect();
    body.join("\n").trim_matches('\n').to_owned()
}

/// Parses the input of a tool with generated arguments (which deny unknown
/// fields themselves).
///
/// # Errors
/// [`ArgumentError`] from parsing.
pub fn parse_args<A: ToolParam>(
    input: &Value,
    definition: &ToolDefinition,
) -> Result<A, ArgumentError> {
    let schema = definition.input_schema();
    let input = if definition.has_optional_nulls() {
        crate::schema::nulls::without_optional_nulls(input, schema)
    } else {
        std::borrow::Cow::Borrowed(input)
    };
    // A `match`, not `map_err` with a closure: a closure is one more
    // function compiled per tool.
    match A::deserialize(&*input) {
        Ok(args) => {
            definition.check_constraints(&input)?;
            Ok(args)
        }
        Err(error) => Err(located(&input, schema, &error)),
    }
}

/// A parse failure as every fault the schema finds in the input, each with
/// its own path; the parser's own message when the schema finds none (a
/// check the schema does not describe). Not generic: one copy for every tool.
fn located(input: &Value, schema: &Value, error: &serde_json::Error) -> ArgumentError {
    crate::schema::locate::departures(input, schema)
        .unwrap_or_else(|| ArgumentError::new("$", error.to_string()))
}

/// Parses the input of a tool that takes an `#[args]` struct, which may not
/// deny unknown fields itself: the schema the model saw decides.
///
/// # Errors
/// [`ArgumentError`] for unknown keys or from parsing.
pub fn parse_args_struct<A: ToolParam>(
    input: &Value,
    definition: &ToolDefinition,
) -> Result<A, ArgumentError> {
    reject_unknown_keys(input, definition.input_schema())?;
    parse_args(input, definition)
}

/// Holds a body's return value while the expansion picks how to convert it:
/// `IntoToolResult` first, then `Result<T: Serialize, E: Display>`, then
/// `T: Serialize` (method resolution through auto-ref picks the first that
/// applies).
pub struct Returned<T>(Cell<Option<T>>);

impl<T> Returned<T> {
    /// Wraps a return value.
    pub fn new(value: T) -> Self {
        Self(Cell::new(Some(value)))
    }

    fn take(&self) -> Option<T> {
        self.0.take()
    }

    /// The last resort: any `Serialize` value.
    pub fn __iris_into_result(&self) -> ToolResult
    where
        T: ToolReturn,
    {
        self.take()
            .map_or_else(already_taken, |v| serialized_result(&v))
    }
}

fn already_taken() -> ToolResult {
    ToolResult::error(
        crate::result::ToolErrorKind::Internal,
        "a tool's return value was converted twice",
    )
}

/// What a `#[tool]` body may return; exists to word the compile error for
/// a type that is neither `IntoToolResult` nor `Serialize`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "this return type cannot become a tool result",
    note = "return `String`, `&str`, `()`, `ToolResult`, a type that implements `Serialize` or `IntoToolResult`, or `Result<T, E>` of those with `E: Display`"
)]
pub trait ToolReturn: Serialize {}

impl<T: Serialize> ToolReturn for T {}

/// First choice: the value implements [`IntoToolResult`].
pub trait ViaIntoToolResult {
    /// Converts the held value.
    fn __iris_into_result(&self) -> ToolResult;
}

impl<T: IntoToolResult> ViaIntoToolResult for &&Returned<T> {
    fn __iris_into_result(&self) -> ToolResult {
        self.take()
            .map_or_else(already_taken, IntoToolResult::into_tool_result)
    }
}

/// Second choice: `Result<T: Serialize, E: Display>`.
pub trait ViaSerializeOk {
    /// Converts the held value.
    fn __iris_into_result(&self) -> ToolResult;
}

impl<T: Serialize, E: Display> ViaSerializeOk for &Returned<Result<T, E>> {
    fn __iris_into_result(&self) -> ToolResult {
        match self.take() {
            Some(Ok(value)) => serialized_result(&value),
            Some(Err(err)) => error_result(&err),
            None => already_taken(),
        }
    }
}

/// The first parameter of a `#[middleware]` function: the call. Generated
/// code passes each argument through one of these traits, so a parameter of
/// the wrong type is reported on that parameter, with what was expected.
#[diagnostic::on_unimplemented(
    message = "the first parameter of a middleware must be `ToolCall`, not `{Self}`",
    label = "expected `ToolCall` here",
    note = "a middleware is `async fn(call: ToolCall, next: Next<'_>)`, or `async fn(call: ToolCall, cx: &ToolContext, next: Next<'_>)` when it needs the context"
)]
pub trait MiddlewareCallParam: Sized {
    /// The call, as the parameter's type.
    fn from_call(call: ToolCall) -> Self;
}

impl MiddlewareCallParam for ToolCall {
    fn from_call(call: ToolCall) -> Self {
        call
    }
}

/// The middle parameter of a three-parameter `#[middleware]` function.
#[diagnostic::on_unimplemented(
    message = "the middle parameter of a middleware must be `&ToolContext`, not `{Self}`",
    label = "expected `&ToolContext` here",
    note = "a middleware is `async fn(call: ToolCall, next: Next<'_>)`, or `async fn(call: ToolCall, cx: &ToolContext, next: Next<'_>)` when it needs the context"
)]
pub trait MiddlewareContextParam<'a>: Sized {
    /// The context, as the parameter's type.
    fn from_context(cx: &'a ToolContext) -> Self;
}

impl<'a> MiddlewareContextParam<'a> for &'a ToolContext {
    fn from_context(cx: &'a ToolContext) -> Self {
        cx
    }
}

/// The last parameter of a `#[middleware]` function: what runs the rest.
#[diagnostic::on_unimplemented(
    message = "the last parameter of a middleware must be `Next<'_>`, not `{Self}`",
    label = "expected `Next<'_>` here",
    note = "a middleware is `async fn(call: ToolCall, next: Next<'_>)`, or `async fn(call: ToolCall, cx: &ToolContext, next: Next<'_>)` when it needs the context"
)]
pub trait MiddlewareNextParam<'a>: Sized {
    /// The rest of the stack, as the parameter's type.
    fn from_next(next: Next<'a>) -> Self;
}

impl<'a> MiddlewareNextParam<'a> for Next<'a> {
    fn from_next(next: Next<'a>) -> Self {
        next
    }
}

/// A tool name its caller has checked: a macro at compile time, or a
/// built-in name a test of its own checks.
#[must_use]
pub const fn checked_tool_name(name: &'static str) -> crate::name::ToolName {
    crate::name::ToolName::from_checked(Cow::Borrowed(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_lines_lose_common_indent_and_keep_paragraphs() {
        let raw = " First line.\n More.\n\n Second paragraph.\n     indented code\n";
        assert_eq!(
            normalize_doc(raw),
            "First line.\nMore.\n\nSecond paragraph.\n    indented code"
        );
        assert_eq!(normalize_doc(""), "");
    }

    #[test]
    #[allow(
        clippy::needless_borrow,
        reason = "the borrows select the conversion, as in expansions"
    )]
    fn conversion_prefers_into_tool_result_then_serialize() {
        let text = (&&&Returned::new(String::from("hi"))).__iris_into_result();
        assert_eq!(text.text_content(), "hi");
        let number = (&&&Returned::new(16_i64)).__iris_into_result();
        assert_eq!(number.data(), Some(&Value::from(16)));
        let ok: Result<Vec<u8>, String> = Ok(vec![1]);
        let ok = (&&&Returned::new(ok)).__iris_into_result();
        assert_eq!(ok.text_content(), "[1]");
        let err: Result<Vec<u8>, String> = Err("nope".into());
        let err = (&&&Returned::new(err)).__iris_into_result();
        assert_eq!(err.text_content(), "nope");
    }
}
