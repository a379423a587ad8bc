//! Conformance scenarios for a host's own [`Model`] implementation: what
//! the run loop needs of every model, checked through real runs.
//!
//! The host gives a function that makes its model answer a list of
//! [`ModelResponse`]s in order (for an HTTP adapter: a fake provider on
//! loopback that answers them in its wire format, such as a cassette
//! server's `answering`, feature `cassettes`). Each scenario makes a fresh
//! model, runs an agent with two tools (`lookup`, read-only; `record`, a
//! write that waits for approval), and checks the run:
//!
//! - parallel calls: three calls in one answer run, and their results come
//!   back in call order;
//! - a refused call: a call of an unknown tool gets an error result, and the
//!   run goes on to the answer;
//! - step limit: a model that keeps calling stops at `max_steps`;
//! - approval: a write pauses the run, which resumes with an approval and
//!   finishes, the model asked once per step;
//! - streamed and whole: the same script gives the same run with an
//!   observer (which makes the runner stream) as without;
//! - a question: the model asks the person (`ask_question`), the run waits,
//!   resumes with the answer and finishes;
//! - a nested approval: the model delegates to a child agent (the same
//!   model) whose write waits; the root lists it by its path, resumes with
//!   an approval, and both finish;
//! - a typed run: the run asks for an output; the model looks a key up,
//!   answers JSON that misses a field, is told the fault, and answers the
//!   value, which the run returns typed.

use std::sync::Arc;

use iris_agent::{
    Agent, AgentRunner, Answer, ChildAgent, QuestionReply, Questions, RunContext, RunOutcome,
};
use iris_core::{
    BoxFuture, Capability, DynamicTool, RunId, ToolDefinition, ToolErrorKind, ToolName, ToolResult,
    ToolUseBlock,
};
use iris_model::{FinishReason, Message, Model, ModelResponse};
use iris_runtime::{ApprovalDecision, Rule, RulePolicy, ToolExecutor, ToolRegistry};
use serde_json::json;

use crate::events::EventLog;
use crate::transcript::{CallOutcome, Transcript};

/// What a host gives: a model that answers `answers`, in order (made
/// asynchronously, so that it may start a fake provider first).
pub type MakeModel<'a> =
    &'a (dyn Fn(Vec<ModelResponse>) -> BoxFuture<'static, Arc<dyn Model>> + Sync);

/// The scenarios, by name, in the order they run.
pub const SCENARIOS: [&str; 8] = [
    "parallel calls",
    "a refused call",
    "step limit",
    "approval",
    "streamed and whole",
    "a question",
    "a nested approval",
    "a typed run",
];

/// How a model fared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConformanceReport {
    /// The scenarios that held.
    pub passed: Vec<&'static str>,
    /// The scenarios that did not, each with what went wrong.
    pub failed: Vec<(&'static str, String)>,
}

impl ConformanceReport {
    /// Fails the test, naming every scenario that did not hold.
    ///
    /// # Panics
    /// When a scenario failed, as `assert!` does.
    #[track_caller]
    #[allow(
        clippy::panic,
        clippy::manual_assert,
        reason = "it fails the test, as assert! does"
    )]
    pub fn assert_conformant(&self) {
        if !self.failed.is_empty() {
            let lines: Vec<String> = self
                .failed
                .iter()
                .map(|(scenario, why)| format!("- {scenario}: {why}"))
                .collect();
            panic!(
                "the model fails {} of {} conformance scenarios:\n{}",
                self.failed.len(),
                SCENARIOS.len(),
                lines.join("\n")
            );
        }
    }
}

/// Runs every scenario with models `make` makes.
pub async fn check(make: MakeModel<'_>) -> ConformanceReport {
    let mut report = ConformanceReport::default();
    for (name, outcome) in [
        (SCENARIOS[0], parallel_calls(make).await),
        (SCENARIOS[1], refused_call(make).await),
        (SCENARIOS[2], step_limit(make).await),
        (SCENARIOS[3], approval(make).await),
        (SCENARIOS[4], streamed_and_whole(make).await),
        (SCENARIOS[5], question(make).await),
        (SCENARIOS[6], nested_approval(make).await),
        (SCENARIOS[7], typed_run(make).await),
    ] {
        match outcome {
            Ok(()) => report.passed.push(name),
            Err(why) => report.failed.push((name, why)),
        }
    }
    report
}

fn calls(calls: &[(&str, &str, serde_json::Value)]) -> ModelResponse {
    ModelResponse {
        tool_calls: calls
            .iter()
            .map(|(id, tool, input)| ToolUseBlock::new(*id, *tool, input.clone()))
            .collect(),
        finish: FinishReason::ToolCalls,
        ..ModelResponse::default()
    }
}

fn text(text: &str) -> ModelResponse {
    ModelResponse {
        text: Some(text.to_owned()),
        finish: FinishReason::Stop,
        ..ModelResponse::default()
    }
}

/// The scenarios' agent: `lookup` (read-only) and `record` (a write that
/// waits for approval), at most `max_steps` steps, heard by `log` if given.
fn agent(max_steps: u32, log: Option<EventLog>) -> Result<Agent, String> {
    let definition = |name: &str, description: &str, capability: Capability| {
        ToolDefinition::builder(
            ToolName::new(name.to_owned()).map_err(|e| e.to_string())?,
            description,
        )
        .input_schema(json!({
            "type": "object",
            "properties": {"key": {"type": "string"}},
            "required": ["key"]
        }))
        .capability(capability)
        .build()
        .map_err(|e| e.to_string())
    };
    let mut registry = ToolRegistry::new();
    registry
        .register(DynamicTool::new(
            definition("lookup", "Look a key up.", Capability::ReadOnly)?,
            |input, _| async move {
                ToolResult::text(format!("value of {}", input["key"].as_str().unwrap_or("?")))
            },
        ))
        .map_err(|e| e.to_string())?;
    registry
        .register(DynamicTool::new(
            definition("record", "Record a key.", Capability::Write)?,
            |input, _| async move {
                ToolResult::text(format!("recorded {}", input["key"].as_str().unwrap_or("?")))
            },
        ))
        .map_err(|e| e.to_string())?;
    let mut executor = ToolExecutor::builder(registry).policy(RulePolicy::new().write(Rule::Ask));
    if let Some(log) = log {
        executor = executor.observer(log);
    }
    let executor = executor.build().map_err(|e| e.to_string())?;
    Agent::builder(executor)
        .name("conformance")
        .instructions("Use the tools to answer.")
        .max_steps(max_steps)
        .build()
        .map_err(|e| e.to_string())
}

async fn run(
    model: Arc<dyn Model>,
    max_steps: u32,
    log: Option<EventLog>,
    run: &str,
) -> Result<RunOutcome, String> {
    let runner = AgentRunner::new(agent(max_steps, log)?, model);
    let cx = RunContext::new(std::env::temp_dir(), RunId::new(run.to_owned()));
    runner
        .run("Conformance task.", &cx)
        .await
        .map_err(|e| format!("the run failed: {e}"))
}

/// The value the typed run asks for.
#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Found {
    /// The key looked up.
    key: String,
    /// What it held.
    value: String,
}

async fn typed_run(make: MakeModel<'_>) -> Result<(), String> {
    let answers = vec![
        calls(&[("t1", "lookup", json!({"key": "a"}))]),
        text(r#"{"key": "a"}"#),
        text(r#"{"key": "a", "value": "value of a"}"#),
    ];
    let model = make(answers).await;
    let runner = AgentRunner::new(agent(4, None)?, model);
    let cx = RunContext::new(std::env::temp_dir(), RunId::new("conformance-typed"));
    let found: Found = runner
        .run_for("Conformance task.", &cx)
        .await
        .map_err(|e| format!("the typed run should return the value: {e}"))?;
    if found
        != (Found {
            key: "a".to_owned(),
            value: "value of a".to_owned(),
        })
    {
        return Err(format!("the typed run returned {found:?}"));
    }
    Ok(())
}

async fn parallel_calls(make: MakeModel<'_>) -> Result<(), String> {
    let answers = [
        calls(&[
            ("p1", "lookup", json!({"key": "a"})),
            ("p2", "lookup", json!({"key": "b"})),
            ("p3", "lookup", json!({"key": "c"})),
        ]),
        text("a, b and c looked up"),
    ];
    let outcome = run(
        make(answers.to_vec()).await,
        5,
        None,
        "conformance-parallel",
    )
    .await?;
    let transcript = Transcript::of(&outcome);
    if transcript.ended != "finished" {
        return Err(format!(
            "the run ended `{}`, not finished",
            transcript.ended
        ));
    }
    let step = transcript
        .steps
        .first()
        .ok_or("the model's first answer is missing")?;
    let keys: Vec<&str> = step
        .calls
        .iter()
        .map(|c| c.arguments["key"].as_str().unwrap_or("?"))
        .collect();
    if keys != ["a", "b", "c"] {
        return Err(format!(
            "the first answer should hold three calls (a, b, c) in order; it held {keys:?}"
        ));
    }
    let results: Vec<&str> = outcome
        .state()
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    let ids: Vec<&str> = step.calls.iter().map(|c| c.call_id.as_str()).collect();
    if results != ids {
        return Err(format!(
            "results should answer the calls in call order {ids:?}; they came as {results:?}"
        ));
    }
    Ok(())
}

async fn refused_call(make: MakeModel<'_>) -> Result<(), String> {
    let answers = [
        calls(&[("r1", "no_such_tool", json!({"key": "a"}))]),
        calls(&[("r2", "lookup", json!({"key": "a"}))]),
        text("found a"),
    ];
    let outcome = run(make(answers.to_vec()).await, 5, None, "conformance-refused").await?;
    let transcript = Transcript::of(&outcome);
    let first = transcript
        .calls()
        .next()
        .ok_or("the model's call of an unknown tool is missing")?;
    match &first.outcome {
        CallOutcome::Error {
            kind: ToolErrorKind::UnknownTool,
            ..
        } => {}
        other => {
            return Err(format!(
                "a call of an unknown tool should get an `unknown_tool` error; it got {other:?}"
            ));
        }
    }
    if transcript.answer.as_deref() != Some("found a") {
        return Err(format!(
            "after the refused call the run should go on to the answer `found a`; it ended `{}` with {:?}",
            transcript.ended, transcript.answer
        ));
    }
    Ok(())
}

async fn step_limit(make: MakeModel<'_>) -> Result<(), String> {
    let answers: Vec<ModelResponse> = (1..=4)
        .map(|i| {
            let id = format!("s{i}");
            calls(&[(id.as_str(), "lookup", json!({"key": "again"}))])
        })
        .collect();
    let outcome = run(make(answers).await, 2, None, "conformance-limit").await?;
    match outcome {
        RunOutcome::MaxSteps(state) if state.step == 2 => Ok(()),
        RunOutcome::MaxSteps(state) => Err(format!(
            "the run should stop after 2 steps; it took {}",
            state.step
        )),
        other => Err(format!(
            "a model that keeps calling should meet `max_steps` (2); the run ended {}",
            Transcript::of(&other).ended
        )),
    }
}

async fn approval(make: MakeModel<'_>) -> Result<(), String> {
    let answers = [
        calls(&[("w1", "record", json!({"key": "a"}))]),
        text("recorded a"),
    ];
    let runner = AgentRunner::new(agent(5, None)?, make(answers.to_vec()).await);
    let cx = RunContext::new(std::env::temp_dir(), RunId::new("conformance-approval"));
    let outcome = runner
        .run("Conformance task.", &cx)
        .await
        .map_err(|e| format!("the run failed: {e}"))?;
    let RunOutcome::Waiting(state) = outcome else {
        return Err(format!(
            "a write should pause the run for approval; it ended {}",
            Transcript::of(&outcome).ended
        ));
    };
    let decisions: Vec<(String, ApprovalDecision)> = state
        .waiting
        .iter()
        .filter_map(|item| {
            Some((
                item.id().to_owned(),
                ApprovalDecision::approve(item.approval_request()?),
            ))
        })
        .collect();
    let outcome = runner
        .resume(state, decisions, &cx)
        .await
        .map_err(|e| format!("the resume failed: {e}"))?;
    match outcome {
        RunOutcome::Finished { text, state } if text == "recorded a" && state.step == 2 => Ok(()),
        other => Err(format!(
            "after the approval the run should finish with `recorded a` in 2 steps; it ended {} after {} step(s)",
            Transcript::of(&other).ended,
            other.state().step
        )),
    }
}

async fn question(make: MakeModel<'_>) -> Result<(), String> {
    let answers = [
        calls(&[(
            "q1",
            "ask_question",
            json!({"questions": [{
                "question": "Which key?",
                "header": "Key",
                "options": [
                    {"label": "a", "description": "the first"},
                    {"label": "b", "description": "the second"}
                ],
                "multi_select": false
            }]}),
        )]),
        text("you chose b"),
    ];
    let runner = AgentRunner::new(agent(5, None)?, make(answers.to_vec()).await)
        .with_questions(Questions::new());
    let cx = RunContext::new(std::env::temp_dir(), RunId::new("conformance-question"));
    let outcome = runner
        .run("Conformance task.", &cx)
        .await
        .map_err(|e| format!("the run failed: {e}"))?;
    let RunOutcome::Waiting(state) = outcome else {
        return Err(format!(
            "`ask_question` should pause the run for the person; it ended {}",
            Transcript::of(&outcome).ended
        ));
    };
    let Some(request) = state.questions().next().cloned() else {
        return Err("the run waits, but not on a question".to_owned());
    };
    let reply = QuestionReply::answer(&request, vec![Answer::choose("b")]);
    let outcome = runner
        .resume(state, [(request.call_id.clone(), reply)], &cx)
        .await
        .map_err(|e| format!("the resume failed: {e}"))?;
    match outcome {
        RunOutcome::Finished { text, state } if text == "you chose b" && state.step == 2 => Ok(()),
        other => Err(format!(
            "after the answer the run should finish with `you chose b` in 2 steps; it ended {} after {} step(s)",
            Transcript::of(&other).ended,
            other.state().step
        )),
    }
}

async fn nested_approval(make: MakeModel<'_>) -> Result<(), String> {
    // One model for both: the parent's first step, the child's two, the
    // parent's last.
    let answers = [
        calls(&[("h1", "helper", json!({"task": "Record a."}))]),
        calls(&[("w1", "record", json!({"key": "a"}))]),
        text("recorded a"),
        text("the helper recorded a"),
    ];
    let parent = Agent::builder(
        ToolExecutor::builder(ToolRegistry::new())
            .policy(RulePolicy::new().other(Rule::Allow))
            .build()
            .map_err(|e| e.to_string())?,
    )
    .name("conformance-lead")
    .child(ChildAgent::new("helper", "Records keys.", agent(5, None)?))
    .build()
    .map_err(|e| e.to_string())?;
    let runner = AgentRunner::new(parent, make(answers.to_vec()).await);
    let cx = RunContext::new(std::env::temp_dir(), RunId::new("conformance-nested"));
    let outcome = runner
        .run("Conformance task.", &cx)
        .await
        .map_err(|e| format!("the run failed: {e}"))?;
    let RunOutcome::Waiting(state) = outcome else {
        return Err(format!(
            "the child's write should pause the whole run; it ended {}",
            Transcript::of(&outcome).ended
        ));
    };
    let pending = state.pending();
    let Some(waiting) = pending.iter().find(|p| p.id == "h1/w1") else {
        return Err(format!(
            "the root should list the child's write as `h1/w1`; it lists {:?}",
            pending.iter().map(|p| &p.id).collect::<Vec<_>>()
        ));
    };
    let Some(request) = waiting.item.approval_request() else {
        return Err("`h1/w1` should wait for approval".to_owned());
    };
    let approve = ApprovalDecision::approve(request);
    let outcome = runner
        .resume(state.clone(), [("h1/w1".to_owned(), approve)], &cx)
        .await
        .map_err(|e| format!("the resume failed: {e}"))?;
    match outcome {
        RunOutcome::Finished { text, state }
            if text == "the helper recorded a" && state.children.len() == 1 =>
        {
            Ok(())
        }
        other => Err(format!(
            "after the approval the child and the run should finish with `the helper recorded a`; it ended {} after {} step(s)",
            Transcript::of(&other).ended,
            other.state().step
        )),
    }
}

async fn streamed_and_whole(make: MakeModel<'_>) -> Result<(), String> {
    let answers = [
        ModelResponse {
            text: Some("Looking a and b up.".to_owned()),
            ..calls(&[
                ("t1", "lookup", json!({"key": "a"})),
                ("t2", "lookup", json!({"key": "b"})),
            ])
        },
        text("a and b are known."),
    ];
    let whole = run(make(answers.to_vec()).await, 5, None, "conformance-whole").await?;
    let streamed = run(
        make(answers.to_vec()).await,
        5,
        Some(EventLog::new()),
        "conformance-streamed",
    )
    .await?;
    let (whole, streamed) = (Transcript::of(&whole), Transcript::of(&streamed));
    if whole.steps != streamed.steps || whole.answer != streamed.answer {
        return Err(format!(
            "the streamed run differs from the whole one: whole {:?} / {:?}, streamed {:?} / {:?}",
            whole.steps, whole.answer, streamed.steps, streamed.answer
        ));
    }
    Ok(())
}
