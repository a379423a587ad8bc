//! The run's spans in the OpenTelemetry GenAI conventions (see
//! `iris_runtime::telemetry`): `invoke_agent {agent}` around each drive of
//! a run (a child's nests under the `execute_tool` span of the call that
//! delegated to it), and `chat {model}` around each model request, with the
//! model the agent names, the tokens, the finish reason and the error kind.
//! Content is recorded only when it is captured.

use iris_model::{
    FinishReason, ModelConfig, ModelError, ModelProvider, ModelRequest, ModelResponse,
};
use iris_runtime::telemetry::{
    AGENT_ID, AGENT_NAME, CONVERSATION_ID, ERROR_TYPE, INPUT_MESSAGES, OPERATION_NAME,
    OUTPUT_MESSAGES, PROVIDER_NAME, REQUEST_MAX_TOKENS, REQUEST_MODEL, REQUEST_TEMPERATURE,
    RESPONSE_FINISH_REASONS, RESPONSE_MODEL, SERVER_ADDRESS, SERVER_PORT, SYSTEM_INSTRUCTIONS,
    TOOL_DEFINITIONS, USAGE_CACHE_READ_INPUT_TOKENS, USAGE_INPUT_TOKENS, USAGE_OUTPUT_TOKENS,
    USAGE_REASONING_OUTPUT_TOKENS, bounded, capturing_content, link_run_span,
};
use tracing::field::Empty;

use iris_model::Usage;
use tracing::Instrument as _;

use super::{AgentRunner, RunContext};
use crate::{RunError, RunOutcome};

/// Runs `drive` (a start or a resume of the run `cx` names, by `runner`)
/// inside the run's `invoke_agent` span, closed with how it ended.
pub(super) async fn traced(
    runner: &AgentRunner,
    cx: &RunContext,
    drive: impl std::future::Future<Output = Result<RunOutcome, RunError>>,
) -> Result<RunOutcome, RunError> {
    let span = invoke_agent(
        runner.agent().name(),
        cx.run_id().as_str(),
        runner.model_config(),
    );
    let outcome = drive.instrument(span.clone()).await;
    agent_ended(&span, &outcome);
    outcome
}

fn provider_name(config: &ModelConfig) -> &'static str {
    match config.provider {
        ModelProvider::Anthropic => "anthropic",
        ModelProvider::Gemini => "gcp.gemini",
        _ => "openai",
    }
}

/// The host and port the model is asked at.
fn server(config: &ModelConfig) -> Option<(String, u16)> {
    let url = match (&config.base_url, config.provider) {
        (Some(url), _) => url.as_str(),
        (None, ModelProvider::Anthropic) => "https://api.anthropic.com",
        (None, ModelProvider::Gemini) => "https://generativelanguage.googleapis.com",
        (None, _) => "https://api.openai.com",
    };
    let url = host_and_port(url)?;
    Some(url)
}

/// `scheme://host[:port]/...` as host and port.
fn host_and_port(url: &str) -> Option<(String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?']).next()?;
    let authority = authority.rsplit('@').next()?;
    let default = if scheme == "http" { 80 } else { 443 };
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
            match port.parse() {
                Ok(port) => Some((host.trim_matches(['[', ']']).to_owned(), port)),
                Err(_) => Some((authority.trim_matches(['[', ']']).to_owned(), default)),
            }
        }
        _ => Some((authority.trim_matches(['[', ']']).to_owned(), default)),
    }
}

/// The span of one drive of run `run_id` by agent `agent`.
fn invoke_agent(agent: &str, run_id: &str, model: Option<&ModelConfig>) -> tracing::Span {
    let span = tracing::info_span!(
        target: "iris::telemetry",
        "invoke_agent",
        "otel.name" = format!("invoke_agent {agent}"),
        "otel.kind" = "internal",
        { OPERATION_NAME } = "invoke_agent",
        { AGENT_NAME } = agent,
        { AGENT_ID } = agent,
        { CONVERSATION_ID } = run_id,
        { PROVIDER_NAME } = Empty,
        { REQUEST_MODEL } = Empty,
        { USAGE_INPUT_TOKENS } = Empty,
        { USAGE_OUTPUT_TOKENS } = Empty,
        "iris.run.outcome" = Empty,
        "iris.run.over_budget" = Empty,
        "iris.budget.spent_usd" = Empty,
        "iris.budget.requests" = Empty,
        { ERROR_TYPE } = Empty,
        "otel.status_code" = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    if let Some(model) = model {
        span.record(PROVIDER_NAME, provider_name(model));
        span.record(REQUEST_MODEL, model.model.as_str());
    }
    // A root run's spans join its run's trace, in whichever process drives it.
    if !run_id.contains('/') {
        link_run_span(&span, run_id);
    }
    span
}

/// Closes a drive's span with how it ended and the run's tokens so far.
fn agent_ended(span: &tracing::Span, outcome: &Result<RunOutcome, RunError>) {
    if span.is_disabled() {
        return;
    }
    match outcome {
        Ok(outcome) => {
            let usage = outcome.state().usage;
            span.record(USAGE_INPUT_TOKENS, usage.input_tokens);
            span.record(USAGE_OUTPUT_TOKENS, usage.output_tokens);
            span.record(
                "iris.run.outcome",
                match outcome {
                    RunOutcome::Finished { .. } => "finished",
                    RunOutcome::CutOff { .. } => "cut_off",
                    RunOutcome::Waiting(_) => "waiting",
                    RunOutcome::MaxSteps(_) => "max_steps",
                    RunOutcome::Cancelled(_) => "cancelled",
                    RunOutcome::OutputInvalid { .. } => "output_invalid",
                    RunOutcome::Refused { .. } => "refused",
                    RunOutcome::OverBudget { .. } => "over_budget",
                },
            );
            if let RunOutcome::OverBudget { over, .. } = outcome {
                span.record("iris.run.over_budget", over.budget.name());
            }
            let spent = outcome.state().spent;
            if !spent.is_empty() {
                span.record("iris.budget.spent_usd", spent.usd());
                span.record("iris.budget.requests", spent.requests);
            }
        }
        Err(error) => {
            span.record(ERROR_TYPE, error_type(error));
            span.record("otel.status_code", "ERROR");
        }
    }
}

fn error_type(error: &RunError) -> &'static str {
    match error {
        RunError::Model(_) => "model",
        _ => "run",
    }
}

/// The span of one model request.
pub(super) fn chat(model: Option<&ModelConfig>, request: &ModelRequest<'_>) -> tracing::Span {
    let name = model.map_or("model", |m| m.model.as_str());
    let span = tracing::info_span!(
        target: "iris::telemetry",
        "chat",
        "otel.name" = format!("chat {name}"),
        "otel.kind" = "client",
        { OPERATION_NAME } = "chat",
        { PROVIDER_NAME } = Empty,
        { REQUEST_MODEL } = Empty,
        { RESPONSE_MODEL } = Empty,
        { REQUEST_MAX_TOKENS } = Empty,
        { REQUEST_TEMPERATURE } = Empty,
        { SERVER_ADDRESS } = Empty,
        { SERVER_PORT } = Empty,
        { USAGE_INPUT_TOKENS } = Empty,
        { USAGE_OUTPUT_TOKENS } = Empty,
        { USAGE_CACHE_READ_INPUT_TOKENS } = Empty,
        { USAGE_REASONING_OUTPUT_TOKENS } = Empty,
        { RESPONSE_FINISH_REASONS } = Empty,
        { ERROR_TYPE } = Empty,
        "otel.status_code" = Empty,
        { SYSTEM_INSTRUCTIONS } = Empty,
        { INPUT_MESSAGES } = Empty,
        { TOOL_DEFINITIONS } = Empty,
        { OUTPUT_MESSAGES } = Empty,
        "iris.model.steered_by" = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    if let Some(model) = model {
        span.record(PROVIDER_NAME, provider_name(model));
        span.record(REQUEST_MODEL, model.model.as_str());
        if let Some((host, port)) = server(model) {
            span.record(SERVER_ADDRESS, host.as_str());
            span.record(SERVER_PORT, port);
        }
    }
    if let Some(max_tokens) = request.options.max_tokens {
        span.record(REQUEST_MAX_TOKENS, max_tokens);
    }
    if let Some(temperature) = request.options.temperature {
        span.record(REQUEST_TEMPERATURE, temperature);
    }
    if capturing_content() {
        if let Some(instructions) = request.instructions {
            span.record(SYSTEM_INSTRUCTIONS, bounded(instructions).as_str());
        }
        let messages = serde_json::to_string(request.messages).unwrap_or_default();
        span.record(INPUT_MESSAGES, bounded(&messages).as_str());
        let tools: Vec<serde_json::Value> = request
            .tools
            .iter()
            .map(|t| serde_json::json!({"name": t.name(), "description": t.description()}))
            .collect();
        span.record(
            TOOL_DEFINITIONS,
            bounded(&serde_json::Value::from(tools).to_string()).as_str(),
        );
    }
    span
}

/// Closes a model request's span with its answer or failure.
/// `with_content`: whether the answer's text may be recorded (not when a
/// `model.after` hook may still redact it).
pub(super) fn chat_ended(
    span: &tracing::Span,
    model: Option<&ModelConfig>,
    answer: Option<&Result<ModelResponse, ModelError>>,
    with_content: bool,
) {
    if span.is_disabled() {
        return;
    }
    match answer {
        Some(Ok(response)) => {
            record_usage(span, response.usage);
            if let Some(model) = model {
                span.record(RESPONSE_MODEL, model.model.as_str());
            }
            let reason = match response.finish {
                FinishReason::Stop => "stop",
                FinishReason::ToolCalls => "tool_calls",
                FinishReason::Length => "length",
                FinishReason::ContentFilter => "content_filter",
            };
            span.record(RESPONSE_FINISH_REASONS, format!("[\"{reason}\"]").as_str());
            if with_content && capturing_content() {
                let output = serde_json::json!([{
                    "role": "assistant",
                    "text": response.text,
                    "tool_calls": response.tool_calls,
                }]);
                span.record(OUTPUT_MESSAGES, bounded(&output.to_string()).as_str());
            }
        }
        Some(Err(_)) => {
            span.record(ERROR_TYPE, "model");
            span.record("otel.status_code", "ERROR");
        }
        None => {
            span.record(ERROR_TYPE, "cancelled");
        }
    }
}

fn record_usage(span: &tracing::Span, usage: Usage) {
    span.record(USAGE_INPUT_TOKENS, usage.input_tokens);
    span.record(USAGE_OUTPUT_TOKENS, usage.output_tokens);
    if usage.cached_input_tokens > 0 {
        span.record(USAGE_CACHE_READ_INPUT_TOKENS, usage.cached_input_tokens);
    }
    if usage.reasoning_tokens > 0 {
        span.record(USAGE_REASONING_OUTPUT_TOKENS, usage.reasoning_tokens);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_server_is_its_host_and_port() {
        assert_eq!(
            super::host_and_port("http://127.0.0.1:8080/v1"),
            Some(("127.0.0.1".to_owned(), 8080))
        );
        assert_eq!(
            super::host_and_port("https://api.openai.com/v1"),
            Some(("api.openai.com".to_owned(), 443))
        );
        assert_eq!(
            super::host_and_port("http://[::1]:9/v1"),
            Some(("::1".to_owned(), 9))
        );
    }
}
