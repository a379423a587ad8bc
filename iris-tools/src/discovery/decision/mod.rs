//! The Decision backend of `tool_search`: one structured request per
//! search, over the allowed deferred catalog and all intents, to an
//! OpenAI-compatible chat completions endpoint with a JSON-schema response
//! format. It answers one candidate name or `null` per intent. It asks
//! through the model layer's HTTP endpoint, so rate limits, server errors
//! and dropped connections are retried as for every model (`retries`).
//!
//! It never falls back to the local ranker: a name outside the allowed
//! catalog, a wrong count, malformed JSON, an HTTP error or a timeout is a
//! tool error the model reads. Every result's `stats.decision` names the
//! feature, provider, model, `question_count` and `usage` (input and output
//! tokens, when the endpoint reported them).

mod config;
mod error;

use std::fmt::Write as _;
use std::path::Path;

use iris_core::{BoxFuture, ToolName};
use serde_json::{Value, json};

use super::backend::{
    IntentAnswer, SearchAnswer, SearchBackend, SearchFailure, SearchScope, candidate_of,
};
use super::index::summary_of;
pub use error::DecisionError;
use iris_model::{HttpEndpoint, RetryPolicy};

pub use config::{API_KEY_PREFIX, DecisionConfig, DecisionFeatures};

/// Characters of each tool description sent to the model.
const DESCRIPTION_CHARS: usize = 300;

const SYSTEM_PROMPT: &str = "You choose tools for an agent. For each numbered request, answer the name of the one tool in the catalog that serves it best, or null when no tool fits. Answer only with names from the catalog, one answer per request, in order.";

/// The remote Decision backend.
pub struct DecisionBackend {
    config: DecisionConfig,
    endpoint: HttpEndpoint,
}

impl std::fmt::Debug for DecisionBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecisionBackend")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl DecisionBackend {
    /// A backend for `tool_search` from a `decision.yaml`; the API key is
    /// read now from `IRIS_PROVIDER_API_KEYS__<PROVIDER>`.
    ///
    /// # Errors
    /// [`DecisionError::DecisionFeatureOff`] when `tools.discovery` is not
    /// true, [`DecisionError::MissingApiKey`] when the key is not set,
    /// [`DecisionError::HttpClient`] when no HTTP client can be built.
    pub fn for_discovery(config: DecisionConfig, origin: &Path) -> Result<Self, DecisionError> {
        if !config.tools.discovery {
            return Err(DecisionError::DecisionFeatureOff {
                path: origin.display().to_string(),
                feature: "discovery",
            });
        }
        let variable = config.api_key_variable();
        let api_key = std::env::var(&variable)
            .ok()
            .filter(|k| !k.trim().is_empty())
            .ok_or_else(|| DecisionError::MissingApiKey {
                variable,
                provider: config.provider.clone(),
            })?;
        let endpoint = HttpEndpoint::at(
            config.endpoint.clone(),
            config.model.clone(),
            api_key,
            config.timeout(),
        )
        .map_err(|e| DecisionError::HttpClient {
            message: e.to_string(),
        })?
        .with_retries(RetryPolicy {
            retries: config.retries,
            ..RetryPolicy::default()
        });
        Ok(Self { config, endpoint })
    }

    /// Loads `decision.yaml` at `path` and builds the backend.
    ///
    /// # Errors
    /// As [`DecisionConfig::load`] and [`DecisionBackend::for_discovery`].
    pub fn load(path: impl AsRef<Path>) -> Result<Self, DecisionError> {
        let path = path.as_ref();
        Self::for_discovery(DecisionConfig::load(path)?, path)
    }

    fn metadata(&self, questions: usize, usage: Option<(u64, u64)>) -> (String, Value) {
        let usage = usage.map_or(
            Value::Null,
            |(input, output)| json!({"input_tokens": input, "output_tokens": output}),
        );
        (
            "decision".to_owned(),
            json!({
                "feature": "discovery",
                "provider": self.config.provider,
                "model": self.config.model,
                "question_count": questions,
                "usage": usage,
            }),
        )
    }

    fn request_body(&self, intents: &[String], scope: &SearchScope<'_>) -> Value {
        let mut names = Vec::new();
        let mut catalog = String::new();
        for definition in scope.definitions() {
            names.push(Value::String(definition.name().to_string()));
            let description: String = definition
                .description()
                .chars()
                .take(DESCRIPTION_CHARS)
                .collect();
            let _ = writeln!(
                catalog,
                "- {}: {}",
                definition.name(),
                description.replace('\n', " ")
            );
        }
        let mut requests = String::new();
        for (i, intent) in intents.iter().enumerate() {
            let _ = writeln!(requests, "{}. {}", i + 1, intent.replace('\n', " "));
        }
        let choice = if names.is_empty() {
            json!({"type": "null"})
        } else {
            json!({"anyOf": [{"type": "string", "enum": names}, {"type": "null"}]})
        };
        json!({
            "model": self.config.model,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": format!("Catalog:\n{catalog}\nRequests:\n{requests}")},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": "tool_choices",
                    "strict": true,
                    "schema": {
                        "type": "object",
                        "properties": {"choices": {"type": "array", "items": choice}},
                        "required": ["choices"],
                        "additionalProperties": false,
                    },
                },
            },
        })
    }

    async fn ask(&self, body: &Value) -> Result<Value, String> {
        iris_model::http::send(&self.endpoint, &self.endpoint.bearer(), body)
            .await
            .map_err(|e| e.to_string())
    }
}

/// Reads the per-intent choices and usage from a chat completion.
fn parse_choices(
    completion: &Value,
    expected: usize,
    scope: &SearchScope<'_>,
) -> Result<Vec<Option<ToolName>>, String> {
    let content = completion
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or("the Decision answer has no message content at `choices[0].message.content`")?;
    let parsed: Value = serde_json::from_str(content)
        .map_err(|e| format!("the Decision answer is not the JSON asked for ({e})"))?;
    let choices = parsed
        .get("choices")
        .and_then(Value::as_array)
        .ok_or("the Decision answer has no `choices` list")?;
    if choices.len() != expected {
        return Err(format!(
            "the Decision answer holds {} choices for {expected} intents",
            choices.len()
        ));
    }
    choices
        .iter()
        .map(|choice| match choice {
            Value::Null => Ok(None),
            Value::String(name) if scope.contains(name) => ToolName::new(name.clone())
                .map(Some)
                .map_err(|e| e.to_string()),
            Value::String(name) => Err(format!(
                "the Decision answer chose `{}`, which is not among the tools this request may search",
                summary_of(name)
            )),
            other => Err(format!("the Decision answer holds {other} where a tool name or null belongs")),
        })
        .collect()
}

fn usage_of(completion: &Value) -> Option<(u64, u64)> {
    let usage = completion.get("usage")?;
    Some((
        usage.get("prompt_tokens")?.as_u64()?,
        usage.get("completion_tokens")?.as_u64()?,
    ))
}

impl SearchBackend for DecisionBackend {
    fn name(&self) -> &'static str {
        "decision"
    }

    fn search<'a>(
        &'a self,
        intents: &'a [String],
        scope: &'a SearchScope<'a>,
    ) -> BoxFuture<'a, Result<SearchAnswer, SearchFailure>> {
        Box::pin(async move {
            let body = self.request_body(intents, scope);
            let completion = self.ask(&body).await.map_err(|message| SearchFailure {
                message,
                metadata: Some(self.metadata(intents.len(), None)),
            })?;
            let usage = usage_of(&completion);
            let choices = parse_choices(&completion, intents.len(), scope).map_err(|message| {
                SearchFailure {
                    message,
                    metadata: Some(self.metadata(intents.len(), usage)),
                }
            })?;
            let answers = intents
                .iter()
                .zip(choices)
                .map(|(intent, selected)| {
                    let candidates = selected
                        .as_ref()
                        .and_then(|name| scope.registry().resolve(name.as_str()))
                        .map(|tool| vec![candidate_of(tool.definition_dyn())])
                        .unwrap_or_default();
                    IntentAnswer {
                        intent: intent.clone(),
                        selected,
                        candidates,
                    }
                })
                .collect();
            Ok(SearchAnswer {
                intents: answers,
                metadata: Some(self.metadata(intents.len(), usage)),
            })
        })
    }
}
