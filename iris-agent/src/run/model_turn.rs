//! What the hooks on the model's turn see and change: the request about to
//! be sent (`model.before`), its tools narrowed or extended within the
//! agent's, and the answer before it is acted on (`model.after`).

use std::borrow::Cow;

use iris_core::{ToolName, ToolSpec};
use iris_model::{Message, ModelOptions, ModelResponse};
use iris_runtime::hooks::{AfterVerdict, Denial, InheritedGuards, Steer};
use iris_runtime::{ToolExecutor, ToolRegistry};
use serde_json::{Map, Value, json};

use crate::RunState;

/// How many times in a row `model.after` hooks may send answers back
/// before the run ends as refused: a hook that never accepts must not
/// spend the whole step budget.
pub(super) const MAX_RETRIES_IN_A_ROW: u32 = 2;

/// One turn's request as it will be sent: tools, instructions, settings.
pub(super) struct TurnRequest<'a> {
    pub(super) tools: Vec<ToolSpec>,
    pub(super) instructions: Option<Cow<'a, str>>,
    pub(super) options: Cow<'a, ModelOptions>,
    /// The hooks that changed it.
    pub(super) steered_by: Vec<String>,
    /// Whether a hook chose its tools: then a call of run control's not
    /// among them is refused as not offered, as the executor refuses its
    /// own.
    narrowed: bool,
}

impl<'a> TurnRequest<'a> {
    /// The turn as the agent offers it: `tools`, its `instructions` and
    /// `options`, unchanged.
    pub(super) fn new(
        tools: Vec<ToolSpec>,
        instructions: Option<&'a str>,
        options: &'a ModelOptions,
    ) -> Self {
        Self {
            tools,
            instructions: instructions.map(Cow::Borrowed),
            options: Cow::Borrowed(options),
            steered_by: Vec::new(),
            narrowed: false,
        }
    }

    /// The tools offered, when a hook chose them.
    pub(super) fn narrowed(&self) -> Option<&[ToolSpec]> {
        self.narrowed.then_some(self.tools.as_slice())
    }
}

/// What `model.before` hooks see of a request (built once a turn, so each
/// map is made at its size).
fn request_view(
    instructions: Option<&str>,
    messages: &[Message],
    tools: &[ToolSpec],
    options: &ModelOptions,
) -> Value {
    let mut settings = Map::with_capacity(2);
    settings.insert("temperature".into(), json!(options.temperature));
    settings.insert("max_tokens".into(), json!(options.max_tokens));
    let tools = tools
        .iter()
        .map(|t| Value::String(t.name().as_str().to_owned()))
        .collect();
    let mut view = Map::with_capacity(4);
    view.insert("instructions".into(), json!(instructions));
    view.insert("messages".into(), json!(messages));
    view.insert("tools".into(), Value::Array(tools));
    view.insert("settings".into(), Value::Object(settings));
    Value::Object(view)
}

/// What `model.after` hooks see of an answer.
fn answer_view(response: &ModelResponse) -> Value {
    let calls: Vec<Value> = response
        .tool_calls
        .iter()
        .map(|call| json!({"id": call.id, "tool": call.name, "arguments": call.input}))
        .collect();
    let mut view = Map::with_capacity(2);
    view.insert("text".into(), json!(response.text));
    view.insert("calls".into(), Value::Array(calls));
    Value::Object(view)
}

/// `request` changed by `steer`: its tools exactly those named (each one
/// offered already, or a tool of `registry` not offered yet, such as a
/// deferred one; a name the agent has no tool for is left out, with a
/// warning), the steer's instructions after the agent's, its settings over
/// the agent's. The names of the registry's tools now offered, for the
/// calls' context.
fn steered_request<'a>(
    mut request: TurnRequest<'a>,
    steer: Steer,
    registry: &ToolRegistry,
) -> (TurnRequest<'a>, Option<Vec<ToolName>>) {
    let mut offered_names = None;
    if let Some(names) = steer.tools {
        let mut tools = Vec::with_capacity(names.len());
        for name in &names {
            let offered = request.tools.iter().find(|t| t.name().as_str() == name);
            let spec = if let Some(spec) = offered {
                spec.clone()
            } else if let Some(tool) = registry.resolve(name) {
                tool.definition_dyn().spec()
            } else {
                tracing::warn!(tool = %iris_runtime::__wings::shorten(name), "a model.before hook named a tool the agent does not have; it is not offered");
                continue;
            };
            // A name and its alias are one tool, offered once.
            if !tools.iter().any(|t: &ToolSpec| t.name() == spec.name()) {
                tools.push(spec);
            }
        }
        offered_names = Some(
            tools
                .iter()
                .filter(|t| registry.resolve(t.name().as_str()).is_some())
                .map(|t| t.name().clone())
                .collect(),
        );
        request.tools = tools;
        request.narrowed = true;
    }
    if let Some(extra) = steer.instructions {
        request.instructions = Some(Cow::Owned(match request.instructions {
            Some(own) => format!("{own}\n\n{extra}"),
            None => extra,
        }));
    }
    if steer.temperature.is_some() || steer.max_tokens.is_some() {
        let options = request.options.to_mut();
        options.temperature = steer.temperature.or(options.temperature);
        options.max_tokens = steer.max_tokens.or(options.max_tokens);
    }
    (request, offered_names)
}

/// `model.before` on `request`, the turn of `state`'s run about to be sent:
/// the request as the hooks (the executor's, then `guards`) leave it, and
/// the names of the registry's tools it now offers when a hook chose them.
///
/// # Errors
/// The hook that refused the turn.
pub(super) async fn before<'a>(
    executor: &ToolExecutor,
    guards: Option<&InheritedGuards>,
    state: &RunState,
    request: TurnRequest<'a>,
    registry: &ToolRegistry,
) -> Result<(TurnRequest<'a>, Option<Vec<ToolName>>), Denial> {
    let view = request_view(
        request.instructions.as_deref(),
        &state.messages,
        &request.tools,
        &request.options,
    );
    let steered = executor.model_before(&state.run_id, view, guards).await?;
    if steered.by.is_empty() {
        return Ok((request, None));
    }
    let (mut request, offered) = steered_request(request, steered.steer, registry);
    request.steered_by = steered.by;
    Ok((request, offered))
}

/// What the `model.after` hooks made of an answer: their verdict, or the
/// hook that refused it.
pub(super) type Judged = Result<AfterVerdict, Denial>;

/// `model.after` on `response`, the answer to `run`: its text redacted in
/// place when a hook redacts it, and all of it dropped (text and calls,
/// its usage kept) when a hook refuses it. Called where the answer is
/// asked for, so that an engine keeps the answer as the hooks left it,
/// never the model's raw words.
pub(super) async fn judge(
    executor: &ToolExecutor,
    guards: Option<&InheritedGuards>,
    run: &iris_core::RunId,
    response: &mut ModelResponse,
) -> Judged {
    let judged = executor
        .model_after(run, answer_view(response), guards)
        .await;
    if let Ok(verdict) = &judged {
        if let Some((hook, text)) = &verdict.redacted {
            tracing::info!(target: "iris::telemetry", hook = %hook, "a model.after hook redacted the answer before it was recorded");
            response.text = Some(text.clone());
        }
    } else {
        response.text = None;
        response.tool_calls.clear();
        // Marked, so that a kept answer says it was refused even where
        // the verdict kept beside it was lost.
        response.finish = iris_model::FinishReason::ContentFilter;
    }
    judged
}

/// The verdict on a kept answer whose own verdict was not kept (a crash
/// between the two): an answer the hooks emptied was refused; any other
/// is judged again.
pub(super) fn refused_when_kept(response: &ModelResponse) -> Option<Judged> {
    let emptied = response.text.is_none()
        && response.tool_calls.is_empty()
        && response.finish == iris_model::FinishReason::ContentFilter;
    emptied.then(|| {
        Err(Denial {
            hook: "model.after".to_owned(),
            reason: "a model.after hook refused the answer before the run was cut off".to_owned(),
        })
    })
}

/// A verdict as an engine keeps it.
pub(super) fn kept(judged: &Judged) -> Value {
    match judged {
        Ok(verdict) => {
            json!({"redacted_by": verdict.redacted.as_ref().map(|(hook, _)| hook), "retry": verdict.retry})
        }
        Err(denial) => json!({"refused": [denial.hook, denial.reason]}),
    }
}

/// A verdict an engine kept, read back against the answer it kept (already
/// redacted); `None` for anything else (no verdict was kept).
pub(super) fn read_kept(kept: &Value, response: &ModelResponse) -> Option<Judged> {
    let pair = |value: &Value| -> Option<(String, String)> {
        Some((
            value.get(0)?.as_str()?.to_owned(),
            value.get(1)?.as_str()?.to_owned(),
        ))
    };
    if let Some(refused) = kept.get("refused") {
        let (hook, reason) = pair(refused)?;
        return Some(Err(Denial { hook, reason }));
    }
    let object = kept.as_object()?;
    let redacted = object
        .get("redacted_by")
        .and_then(Value::as_str)
        .map(|hook| (hook.to_owned(), response.text.clone().unwrap_or_default()));
    let retry = object.get("retry").and_then(pair);
    Some(Ok(AfterVerdict { redacted, retry }))
}

/// Acts on what the `model.after` hooks made of `response`, the answer to
/// `state`'s run (`judge` applied it to the answer): when a hook retries
/// it, its text (its calls never run) and the feedback are added to
/// `state`'s history (`true`: ask the model again). An answer that passes
/// is told to observers now when it was `held` back from streaming.
///
/// # Errors
/// The hook that refused the answer, or the last that retried it once
/// [`MAX_RETRIES_IN_A_ROW`] in a row were spent.
pub(super) fn after(
    executor: &ToolExecutor,
    judged: Judged,
    state: &mut RunState,
    response: &ModelResponse,
    held: bool,
) -> Result<bool, Denial> {
    let verdict = judged?;
    let Some((hook, feedback)) = verdict.retry else {
        // What was held back while the hooks judged it.
        if let Some(text) = response
            .text
            .as_deref()
            .filter(|t| held && !t.is_empty() && executor.has_observers())
        {
            executor.emit_event(iris_runtime::RunEvent::ModelText {
                run_id: state.run_id.clone(),
                text: text.to_owned(),
            });
        }
        return Ok(false);
    };
    if retried_in_a_row(&state.messages) >= MAX_RETRIES_IN_A_ROW {
        return Err(Denial {
            hook,
            reason: format!(
                "the model was asked again {MAX_RETRIES_IN_A_ROW} times in a row and its answer still did not pass"
            ),
        });
    }
    // Its text is kept, its calls never run (an answer with no text keeps
    // a note of them: providers refuse an empty turn).
    state.messages.push(Message::Assistant {
        text: Some(kept_text(response)),
        tool_calls: Vec::new(),
    });
    state.messages.push(Message::User {
        text: format!("{RETRY_MARK}{feedback}"),
    });
    Ok(true)
}

/// How a hook's feedback starts in the history: what the model reads, and
/// how a resumed run counts the answers sent back in a row.
const RETRY_MARK: &str = "[Sent back by a hook] ";

/// The answers sent back in a row at the end of `messages`.
fn retried_in_a_row(messages: &[Message]) -> u32 {
    let mut count = 0;
    let mut rest = messages;
    while let [
        before @ ..,
        Message::Assistant { tool_calls, .. },
        Message::User { text },
    ] = rest
        && tool_calls.is_empty()
        && text.starts_with(RETRY_MARK)
    {
        count += 1;
        rest = before;
    }
    count
}

/// The text an answer sent back is kept with: its own, or, when it has
/// none, a note of the calls it made (which never ran), since providers
/// refuse an assistant turn with nothing in it.
pub(super) fn kept_text(response: &ModelResponse) -> String {
    match response.text.as_deref() {
        Some(text) if !text.trim().is_empty() => text.to_owned(),
        _ => {
            let names: Vec<&str> = response
                .tool_calls
                .iter()
                .map(|call| call.name.as_str())
                .collect();
            if names.is_empty() {
                "(an empty answer)".to_owned()
            } else {
                format!("(calls that were not run: {})", names.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use iris_model::{FinishReason, ModelResponse};
    use iris_runtime::hooks::{AfterVerdict, Denial};

    use super::{kept, read_kept, refused_when_kept};

    #[test]
    fn a_kept_verdict_reads_back_as_it_was() {
        let answer = ModelResponse {
            text: Some("[card]".to_owned()),
            ..ModelResponse::default()
        };
        let verdicts = [
            Ok(AfterVerdict {
                redacted: Some(("cards".to_owned(), "[card]".to_owned())),
                retry: Some(("polite".to_owned(), "Again.".to_owned())),
            }),
            Ok(AfterVerdict::default()),
            Err(Denial {
                hook: "guard".to_owned(),
                reason: "no".to_owned(),
            }),
        ];
        for verdict in verdicts {
            assert_eq!(read_kept(&kept(&verdict), &answer), Some(verdict));
        }
        assert_eq!(read_kept(&serde_json::Value::Null, &answer), None);
    }

    #[test]
    fn an_answer_the_hooks_emptied_reads_as_refused_without_its_verdict() {
        let emptied = ModelResponse {
            finish: FinishReason::ContentFilter,
            ..ModelResponse::default()
        };
        assert!(matches!(refused_when_kept(&emptied), Some(Err(_))));
        let plain = ModelResponse {
            text: Some("fine".to_owned()),
            ..ModelResponse::default()
        };
        assert!(refused_when_kept(&plain).is_none());
    }
}
