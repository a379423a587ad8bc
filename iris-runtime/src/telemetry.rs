//! Traces in the OpenTelemetry GenAI semantic conventions, as `tracing`
//! spans: `invoke_agent {agent}` for a run (and each child agent's, nested
//! under the call that delegated to it), `chat {model}` for each model
//! request, `execute_tool {tool}` for each call. Their fields carry the
//! conventions' attribute names, and `otel.name` the span's name, so a
//! `tracing-opentelemetry` layer (the `otlp` feature installs one) exports
//! them as any APM reads them. With no subscriber they cost a check each.
//!
//! The conventions are still in development: the names below follow
//! [`SEMCONV_VERSION`], and are kept as constants of Iris's own so that a
//! rename upstream is one change here.
//!
//! Content (messages, system instructions, tool definitions, arguments and
//! results) is recorded only when the host opts in: with
//! [`capture_content`], an agent file's `telemetry: {capture_content: true}`,
//! or `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`; each value
//! is then cut at [`MAX_CONTENT_CHARS`].

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

/// The version of the OpenTelemetry semantic conventions (GenAI, status
/// "Development") these names follow.
pub const SEMCONV_VERSION: &str = "1.38.0";

/// `gen_ai.operation.name`: `invoke_agent`, `chat` or `execute_tool`.
pub const OPERATION_NAME: &str = "gen_ai.operation.name";
/// `gen_ai.provider.name`: `openai`, `anthropic`, `gcp.gemini`.
pub const PROVIDER_NAME: &str = "gen_ai.provider.name";
/// `gen_ai.request.model`.
pub const REQUEST_MODEL: &str = "gen_ai.request.model";
/// `gen_ai.response.model`.
pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
/// `gen_ai.response.finish_reasons`.
pub const RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
/// `gen_ai.request.max_tokens`.
pub const REQUEST_MAX_TOKENS: &str = "gen_ai.request.max_tokens";
/// `gen_ai.request.temperature`.
pub const REQUEST_TEMPERATURE: &str = "gen_ai.request.temperature";
/// `gen_ai.usage.input_tokens`: every prompt token, cached ones included.
pub const USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// `gen_ai.usage.output_tokens`: every answer token, reasoning included.
pub const USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// `gen_ai.usage.cache_read.input_tokens`: of the input, read from cache.
pub const USAGE_CACHE_READ_INPUT_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";
/// `gen_ai.usage.reasoning.output_tokens`: of the output, reasoning.
pub const USAGE_REASONING_OUTPUT_TOKENS: &str = "gen_ai.usage.reasoning.output_tokens";
/// `gen_ai.agent.name`.
pub const AGENT_NAME: &str = "gen_ai.agent.name";
/// `gen_ai.agent.id`.
pub const AGENT_ID: &str = "gen_ai.agent.id";
/// `gen_ai.conversation.id`: the run's id.
pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";
/// `gen_ai.tool.name`.
pub const TOOL_NAME: &str = "gen_ai.tool.name";
/// `gen_ai.tool.call.id`.
pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// `gen_ai.tool.type`: `function` (Iris runs every tool on the client).
pub const TOOL_TYPE: &str = "gen_ai.tool.type";
/// `server.address`.
pub const SERVER_ADDRESS: &str = "server.address";
/// `server.port`.
pub const SERVER_PORT: &str = "server.port";
/// `error.type`: the error's kind.
pub const ERROR_TYPE: &str = "error.type";
/// `gen_ai.input.messages` (content; opt-in).
pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
/// `gen_ai.output.messages` (content; opt-in).
pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
/// `gen_ai.system_instructions` (content; opt-in).
pub const SYSTEM_INSTRUCTIONS: &str = "gen_ai.system_instructions";
/// `gen_ai.tool.definitions` (content; opt-in).
pub const TOOL_DEFINITIONS: &str = "gen_ai.tool.definitions";
/// `gen_ai.tool.call.arguments` (content; opt-in).
pub const TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// `gen_ai.tool.call.result` (content; opt-in).
pub const TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";

/// The variable of the conventions that turns content capture on.
pub const CAPTURE_CONTENT_VAR: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";
/// The most characters of one recorded content value.
pub const MAX_CONTENT_CHARS: usize = 8 * 1024;

/// 0: as the environment says; 1: off; 2: on.
static CAPTURE: AtomicU8 = AtomicU8::new(0);

/// Records content in spans (`true`) or never (`false`), whatever the
/// environment says. Process-wide: spans are too.
pub fn capture_content(on: bool) {
    CAPTURE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

/// Whether content is recorded: as [`capture_content`] set it, else as
/// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` says (`true`).
#[must_use]
pub fn capturing_content() -> bool {
    static FROM_ENV: OnceLock<bool> = OnceLock::new();
    match CAPTURE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => *FROM_ENV.get_or_init(|| {
            std::env::var(CAPTURE_CONTENT_VAR).is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"))
        }),
    }
}

/// `text` as recorded: at most [`MAX_CONTENT_CHARS`] characters, a cut one
/// saying how much was left out.
#[must_use]
pub fn bounded(text: &str) -> String {
    match text.char_indices().nth(MAX_CONTENT_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => format!(
            "{}…[{} more bytes not recorded]",
            &text[..at],
            text.len() - at
        ),
    }
}

/// What links a run's root span into the run's trace, set by an exporter.
type RunLinker = fn(&tracing::Span, &str);

static RUN_LINKER: OnceLock<RunLinker> = OnceLock::new();

/// Has `link` called with each root run's span and the run's id before
/// the span starts: an exporter gives every process that drives the same
/// run (one that pauses and one that resumes) the same trace, from the
/// run id. Set once per process; a second call is ignored.
pub fn link_runs(link: RunLinker) {
    let _ = RUN_LINKER.set(link);
}

/// Links `span`, a root run's, into its run's trace (see [`link_runs`]).
pub fn link_run_span(span: &tracing::Span, run_id: &str) {
    if let Some(link) = RUN_LINKER.get() {
        link(span, run_id);
    }
}

/// The `execute_tool {tool}` span of call `call_id` of `tool` (disabled,
/// and free, with no subscriber that wants it); its arguments are recorded
/// when content is captured. Enter it while the call runs, and close it
/// with [`tool_ended`].
pub fn execute_tool_span(
    call_id: &str,
    tool: &str,
    arguments: &serde_json::Value,
) -> tracing::Span {
    let span = tracing::info_span!(
        target: "iris::telemetry",
        "execute_tool",
        "otel.name" = format!("execute_tool {tool}"),
        "otel.kind" = "internal",
        { OPERATION_NAME } = "execute_tool",
        { TOOL_NAME } = tool,
        { TOOL_CALL_ID } = call_id,
        { TOOL_TYPE } = "function",
        { ERROR_TYPE } = tracing::field::Empty,
        "otel.status_code" = tracing::field::Empty,
        { TOOL_CALL_ARGUMENTS } = tracing::field::Empty,
        { TOOL_CALL_RESULT } = tracing::field::Empty,
    );
    if !span.is_disabled() && capturing_content() {
        span.record(TOOL_CALL_ARGUMENTS, bounded(&arguments.to_string()));
    }
    span
}

/// Closes a call's span with its `result`: the error kind when it failed,
/// and the result's text when content is captured.
pub fn tool_ended(span: &tracing::Span, result: &iris_core::ToolResult) {
    if span.is_disabled() {
        return;
    }
    if let Some(kind) = result.error_kind() {
        span.record(ERROR_TYPE, kind.as_str());
        span.record("otel.status_code", "ERROR");
    }
    if capturing_content() {
        span.record(TOOL_CALL_RESULT, bounded(&result.text_content()));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn recorded_content_is_bounded_on_a_character_boundary() {
        let short = "é".repeat(10);
        assert_eq!(super::bounded(&short), short);
        let long = "é".repeat(super::MAX_CONTENT_CHARS + 5);
        let cut = super::bounded(&long);
        assert!(cut.starts_with(&"é".repeat(super::MAX_CONTENT_CHARS)));
        assert!(
            cut.ends_with("…[10 more bytes not recorded]"),
            "{}",
            &cut[cut.len() - 40..]
        );
    }
}
