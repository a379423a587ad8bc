//! The `Tool` trait: parse JSON into typed arguments once, then run.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::context::ToolContext;
use crate::definition::ToolDefinition;
use crate::error::ArgumentError;
use crate::result::{ToolErrorKind, ToolResult};

/// A boxed, sendable future, the return type of object-safe async methods.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How a tool body runs.
///
/// Async bodies are polled on the executor; blocking bodies are handed to
/// the runtime, which runs them where they cannot stall other calls.
#[non_exhaustive]
pub enum ToolBody<'a> {
    /// An async body.
    Async(BoxFuture<'a, ToolResult>),
    /// A synchronous body.
    Blocking(Box<dyn FnOnce() -> ToolResult + Send + 'static>),
}

impl std::fmt::Debug for ToolBody<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ToolBody::Async(_) => "ToolBody::Async",
            ToolBody::Blocking(_) => "ToolBody::Blocking",
        })
    }
}

impl ToolBody<'_> {
    /// A body that is already done, such as a refusal before the real body.
    #[must_use]
    pub fn ready(result: ToolResult) -> Self {
        ToolBody::Async(Box::pin(std::future::ready(result)))
    }

    /// Runs the body on the current thread, to completion.
    ///
    /// For tests and simple hosts; the runtime's executor moves blocking
    /// bodies off the async workers instead.
    pub async fn run_inline(self) -> ToolResult {
        match self {
            ToolBody::Async(fut) => fut.await,
            ToolBody::Blocking(body) => body(),
        }
    }
}

/// An executable tool: a definition plus typed argument parsing and a body.
///
/// `#[tool]` implements it for a unit struct named after the function.
/// Hand-written implementations are for tools whose shape is only known at
/// run time.
pub trait Tool: Send + Sync + 'static {
    /// The typed arguments the body receives.
    type Args: Send + 'static;

    /// The tool's definition; implementations build it once and return a reference.
    fn definition(&self) -> &ToolDefinition;

    /// Parses raw JSON input into the typed arguments (the only parse of a call).
    ///
    /// # Errors
    /// [`ArgumentError`] naming the JSON path of the culprit and what was
    /// expected there.
    fn parse(&self, input: &Value) -> Result<Self::Args, ArgumentError>;

    /// Runs the body with already parsed arguments.
    fn call<'a>(&'a self, args: Self::Args, cx: &'a ToolContext) -> ToolBody<'a>;

    /// The Rust item behind the tool (a type's path, or for a toolbox
    /// method `my_crate::Service::method`), for messages that must tell two
    /// tools apart when they share a name.
    fn rust_item(&self) -> &'static str {
        core::any::type_name::<Self>()
    }

    /// Whether this particular call only reads; defaults to the `read_only` tag.
    fn is_read_only(&self, args: &Self::Args) -> bool {
        let _ = args;
        self.definition().capabilities().is_read_only()
    }

    /// Whether this particular call may run next to others; defaults to the
    /// `concurrency_safe` tag.
    fn is_concurrency_safe(&self, args: &Self::Args) -> bool {
        let _ = args;
        self.definition().capabilities().is_concurrency_safe()
    }
}

/// Arguments parsed by a [`DynTool`], with the tool's answers for them.
pub struct ParsedArgs {
    args: Box<dyn Any + Send>,
    read_only: bool,
    concurrency_safe: bool,
}

impl ParsedArgs {
    /// Whether the tool said this call only reads.
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Whether the tool said this call may run next to others.
    #[must_use]
    pub fn is_concurrency_safe(&self) -> bool {
        self.concurrency_safe
    }

    /// Both answers at once.
    #[must_use]
    pub fn shape(&self) -> CallShape {
        CallShape {
            read_only: self.read_only,
            concurrency_safe: self.concurrency_safe,
        }
    }
}

impl std::fmt::Debug for ParsedArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParsedArgs")
            .field("read_only", &self.read_only)
            .field("concurrency_safe", &self.concurrency_safe)
            .finish_non_exhaustive()
    }
}

/// The object-safe face of [`Tool`], which registries store.
///
/// Implemented for every `Tool`; there is no need to implement it by hand.
pub trait DynTool: Send + Sync + 'static {
    /// The Rust item behind the tool (a type's path, such as
    /// `my_crate::Square`), for messages that must tell two tools apart
    /// when they share a name.
    fn rust_item(&self) -> &'static str {
        core::any::type_name::<Self>()
    }

    /// The tool's definition.
    fn definition_dyn(&self) -> &ToolDefinition;

    /// Parses input and asks the tool how this call may be scheduled.
    ///
    /// # Errors
    /// [`ArgumentError`] as in [`Tool::parse`].
    fn parse_dyn(&self, input: &Value) -> Result<ParsedArgs, ArgumentError>;

    /// Runs the body with arguments from [`DynTool::parse_dyn`] of this tool.
    fn call_dyn<'a>(&'a self, args: ParsedArgs, cx: &'a ToolContext) -> ToolBody<'a>;

    /// Parses input, asks `admit` what becomes of the call given the
    /// tool's answers for these arguments, and acts on the answer: the body
    /// made ([`Admit::Run`]), the arguments kept for a later
    /// [`call_dyn`](DynTool::call_dyn) ([`Admit::Keep`]), or nothing
    /// ([`Admit::Drop`]).
    ///
    /// The same as [`parse_dyn`](DynTool::parse_dyn) then
    /// [`call_dyn`](DynTool::call_dyn), in one step: a call admitted at
    /// once hands its typed arguments straight to the body instead of
    /// storing them apart, which is most of what a plain call would
    /// otherwise allocate.
    ///
    /// # Errors
    /// [`ArgumentError`] as in [`Tool::parse`]; `admit` is not asked then.
    fn parse_admit_dyn<'a>(
        &'a self,
        input: &Value,
        cx: &'a ToolContext,
        admit: &mut dyn FnMut(CallShape) -> Admit,
    ) -> Result<Admitted<'a>, ArgumentError> {
        let args = self.parse_dyn(input)?;
        Ok(match admit(args.shape()) {
            Admit::Run => Admitted::Body(self.call_dyn(args, cx)),
            Admit::Keep => Admitted::Kept(args),
            Admit::Drop => Admitted::Dropped,
        })
    }
}

/// What a tool says of one call, from its parsed arguments: what the
/// executor schedules and checks permissions by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallShape {
    /// The call only reads.
    pub read_only: bool,
    /// The call may run next to others.
    pub concurrency_safe: bool,
}

/// The answer [`DynTool::parse_admit_dyn`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Make the body now: it is about to run.
    Run,
    /// Keep the arguments: the call runs later, if at all.
    Keep,
    /// The call will not run.
    Drop,
}

/// What [`DynTool::parse_admit_dyn`] did with the call.
#[derive(Debug)]
pub enum Admitted<'a> {
    /// The body, not yet started.
    Body(ToolBody<'a>),
    /// The parsed arguments, for [`DynTool::call_dyn`].
    Kept(ParsedArgs),
    /// Nothing: the call will not run.
    Dropped,
}

impl<T: Tool> DynTool for T {
    fn rust_item(&self) -> &'static str {
        Tool::rust_item(self)
    }

    fn definition_dyn(&self) -> &ToolDefinition {
        Tool::definition(self)
    }

    fn parse_dyn(&self, input: &Value) -> Result<ParsedArgs, ArgumentError> {
        let args = self.parse(input)?;
        let read_only = self.is_read_only(&args);
        let concurrency_safe = self.is_concurrency_safe(&args);
        Ok(ParsedArgs {
            args: Box::new(args),
            read_only,
            concurrency_safe,
        })
    }

    fn call_dyn<'a>(&'a self, args: ParsedArgs, cx: &'a ToolContext) -> ToolBody<'a> {
        match args.args.downcast::<T::Args>() {
            Ok(args) => self.call(*args, cx),
            Err(_) => parsed_by_another_tool(Tool::definition(self)),
        }
    }

    fn parse_admit_dyn<'a>(
        &'a self,
        input: &Value,
        cx: &'a ToolContext,
        admit: &mut dyn FnMut(CallShape) -> Admit,
    ) -> Result<Admitted<'a>, ArgumentError> {
        let args = self.parse(input)?;
        let shape = CallShape {
            read_only: self.is_read_only(&args),
            concurrency_safe: self.is_concurrency_safe(&args),
        };
        Ok(match admit(shape) {
            Admit::Run => Admitted::Body(self.call(args, cx)),
            Admit::Keep => Admitted::Kept(ParsedArgs {
                args: Box::new(args),
                read_only: shape.read_only,
                concurrency_safe: shape.concurrency_safe,
            }),
            Admit::Drop => Admitted::Dropped,
        })
    }
}

// Not generic: the message is formatted by one copy of this code, not by
// one per tool.
fn parsed_by_another_tool(definition: &ToolDefinition) -> ToolBody<'static> {
    let name = definition.name();
    ToolBody::ready(ToolResult::error(
        ToolErrorKind::Internal,
        format!("arguments handed to `{name}` were parsed by another tool"),
    ))
}
