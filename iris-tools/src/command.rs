//! Tools that are programs: a tool defined by configuration (an agent
//! file's `tools.command`) whose body is an external program.
//!
//! The call's arguments, checked against the tool's schema, go to the
//! program as one JSON object on stdin; what it writes to stdout is the
//! result: JSON when it is JSON (structured content), text otherwise, or as
//! configured. A non-zero exit is a tool error carrying the end of its
//! stderr. The arguments never reach a shell: the program starts from its
//! argv. It runs with the same bounds and cleanup as command hooks: its own
//! process group, at most [`MAX_COMMAND_STDOUT_BYTES`] of output, a deadline, and
//! everything it started killed when the call ends. `IRIS_RUN_ID`, and in a
//! run kept in a store `IRIS_IDEMPOTENCY_KEY`, tell it which call it serves.

use std::path::PathBuf;
use std::time::Duration;

use iris_core::{
    ArgumentError, Tool, ToolBody, ToolContext, ToolDefinition, ToolErrorKind, ToolResult,
};
use iris_runtime::journal::IdempotencyKey;
use iris_runtime::process::{ProcessError, Program};
use serde::Deserialize;
use serde_json::Value;

/// Most bytes a command tool may write to stdout; a larger result is
/// kept as an artifact by the executor's result policy, not here.
pub const MAX_COMMAND_STDOUT_BYTES: usize = 4 * 1024 * 1024;
/// Most bytes a command tool may write to stderr.
pub const MAX_COMMAND_STDERR_BYTES: usize = 64 * 1024;
/// The environment variable that marks a command tool's processes.
const MARK_VAR: &str = "IRIS_TOOL_RUN";

/// How a command tool's stdout becomes its result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CommandOutput {
    /// JSON when the whole of it parses as JSON, text otherwise.
    #[default]
    Auto,
    /// Always text.
    Text,
    /// Always JSON; anything else is a tool error.
    Json,
}

/// A tool whose body is an external program.
#[derive(Debug, Clone)]
pub struct CommandTool {
    definition: ToolDefinition,
    program: Program,
    output: CommandOutput,
}

/// Why a command tool could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandToolError {
    /// The argv was empty.
    #[error(
        "tool `{tool}` has an empty command; give the program and its arguments, such as [\"python3\", \"count.py\"]"
    )]
    EmptyCommand {
        /// The tool.
        tool: String,
    },
}

impl CommandTool {
    /// The default deadline of one call.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

    /// A tool `definition` whose calls run `argv[0]` with the remaining
    /// arguments.
    ///
    /// # Errors
    /// [`CommandToolError::EmptyCommand`] for an empty argv.
    pub fn new(definition: ToolDefinition, argv: Vec<String>) -> Result<Self, CommandToolError> {
        let mut program =
            Program::new(argv, MARK_VAR).ok_or_else(|| CommandToolError::EmptyCommand {
                tool: definition.name().to_string(),
            })?;
        program.timeout(Self::DEFAULT_TIMEOUT);
        program.limits(MAX_COMMAND_STDOUT_BYTES, MAX_COMMAND_STDERR_BYTES);
        Ok(Self {
            definition,
            program,
            output: CommandOutput::Auto,
        })
    }

    /// Sets an environment variable for the program (the rest of the
    /// host's environment is inherited).
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.program.env(key.into(), value.into());
        self
    }

    /// Runs the program in `dir` instead of the host's working directory.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.program.current_dir(dir.into());
        self
    }

    /// Sets the deadline of one call.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.program.timeout(timeout);
        self
    }

    /// Sets how stdout becomes the result.
    #[must_use]
    pub fn output(mut self, output: CommandOutput) -> Self {
        self.output = output;
        self
    }

    async fn run(&self, arguments: Value, cx: ToolContext) -> ToolResult {
        let tool = self.definition.name();
        let input = arguments.to_string();
        let mut program = self.program.clone();
        program.env("IRIS_RUN_ID".to_owned(), cx.run_id().as_str().to_owned());
        if let Some(key) = cx.extension::<IdempotencyKey>() {
            program.env("IRIS_IDEMPOTENCY_KEY".to_owned(), key.as_str().to_owned());
        }
        let finished = match program.exchange(input.as_bytes()).await {
            Ok(finished) => finished,
            Err(ProcessError::Timeout(after)) => {
                return ToolResult::error(
                    ToolErrorKind::Timeout,
                    format!("`{tool}` did not finish within {after:?}, so it was stopped"),
                );
            }
            Err(error) => {
                return ToolResult::error(ToolErrorKind::Execution, format!("`{tool}`: {error}"));
            }
        };
        let stderr = finished.stderr.trim();
        if !finished.status.success() {
            let detail = if stderr.is_empty() {
                String::new()
            } else {
                format!(": {stderr}")
            };
            return ToolResult::error(
                ToolErrorKind::Execution,
                format!("`{tool}` failed ({}){detail}", finished.status),
            );
        }
        let Ok(text) = String::from_utf8(finished.stdout) else {
            return ToolResult::error(
                ToolErrorKind::Execution,
                format!("`{tool}` wrote output that is not UTF-8 text"),
            );
        };
        match self.output {
            CommandOutput::Text => ToolResult::text(text),
            CommandOutput::Auto => match serde_json::from_str::<Value>(&text) {
                Ok(value) if !text.trim().is_empty() => ToolResult::json(value),
                _ => ToolResult::text(text),
            },
            CommandOutput::Json => match serde_json::from_str::<Value>(&text) {
                Ok(value) => ToolResult::json(value),
                Err(error) => ToolResult::error(
                    ToolErrorKind::Execution,
                    format!(
                        "`{tool}` is configured to answer JSON but wrote something else ({error})"
                    ),
                ),
            },
        }
    }
}

impl Tool for CommandTool {
    type Args = Value;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn rust_item(&self) -> &'static str {
        "iris::command (a program named by configuration)"
    }

    fn parse(&self, input: &Value) -> Result<Value, ArgumentError> {
        if !input.is_object() {
            return Err(ArgumentError::new(
                "$",
                format!(
                    "expected a JSON object of arguments, found {}",
                    iris_core::schema::json_kind(input)
                ),
            ));
        }
        iris_core::schema::check_input(input, self.definition.input_schema())?;
        Ok(input.clone())
    }

    fn call<'a>(&'a self, args: Value, cx: &'a ToolContext) -> ToolBody<'a> {
        ToolBody::Async(Box::pin(self.run(args, cx.clone())))
    }
}
