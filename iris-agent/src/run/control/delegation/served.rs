//! A child agent served on its own as a tool (by `iris serve`, or a host's
//! own MCP server): each call is a run of its own, from the call's
//! arguments to its end, held to the child's limits; a typed output
//! answers as structured content under the output's schema, listed as the
//! tool's output schema.
//!
//! A served run has no person to pause for: one that comes to wait for a
//! decision ends there, and its caller is told which decision and how to
//! settle it in the agent's file. The calls before the pause ran; the one
//! that waits did not.

use std::fmt::Write as _;
use std::sync::Arc;

use iris_core::{
    ArgumentError, RunId, ToolBody, ToolContext, ToolDefinition, ToolErrorKind, ToolResult,
};
use iris_model::Model;
use serde_json::{Value, json};

use super::child::Deadline;
use super::child_input;
use super::results::{Ending, ending};
use crate::run::{AgentRunner, RunContext, Sealing};
use crate::{AgentBuildError, ChildAgent, RunState};

/// A child agent as a tool that runs it: its name and description, the
/// input its parent would fill (`task`, or its own schema) and, for a
/// typed child, its output's schema.
///
/// The parent's policy judges it by its name, as it judges a delegation;
/// a host registers it as any other tool.
pub struct AgentTool {
    definition: ToolDefinition,
    child: ChildAgent,
    runner: AgentRunner,
    /// What the child's answers must be, when typed.
    output: Option<crate::Output>,
}

impl std::fmt::Debug for AgentTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentTool")
            .field("name", &self.child.name())
            .finish_non_exhaustive()
    }
}

impl AgentTool {
    /// `child` as a tool, each call a run of it asking its own model, or
    /// `model` (its parent's) when it has none.
    ///
    /// # Errors
    /// [`AgentBuildError::NoModel`] when it has no model and none is
    /// given; [`AgentBuildError::InvalidName`] for a name no tool may have.
    pub fn new(child: &ChildAgent, model: Option<Arc<dyn Model>>) -> Result<Self, AgentBuildError> {
        let Some(model) = child.own_model().cloned().or(model) else {
            return Err(AgentBuildError::NoModel {
                agent: child.name().to_owned(),
            });
        };
        let mut definition = child
            .definition()
            .ok_or_else(|| AgentBuildError::InvalidName {
                name: child.name().to_owned(),
                why: "it is not a tool name (1-64 letters, digits, `_` or `-`)".to_owned(),
            })?;
        // The output the parent's entry names, or else the child's own.
        let output = child
            .typed_output()
            .or_else(|| child.agent().output())
            .cloned();
        if let Some(output) = &output {
            definition =
                ToolDefinition::builder(definition.name().clone(), definition.description())
                    .input_schema(definition.input_schema().clone())
                    .output_schema(output.format().schema().clone())
                    .build()
                    .map_err(|e| AgentBuildError::InvalidName {
                        name: child.name().to_owned(),
                        why: e.to_string(),
                    })?;
        }
        let mut runner = AgentRunner::from_parts(Arc::clone(child.agent()), model);
        runner.output.clone_from(&output);
        // A served run's state is never handed out: nothing to seal.
        runner.sealing = Sealing::Trusted;
        runner.place.max_steps = Some(child.steps());
        runner.place.max_tokens = child.tokens();
        Ok(Self {
            definition,
            child: child.clone(),
            runner,
            output,
        })
    }

    /// The child as its parent `parent` delegates to it: held to the
    /// parent's policy (a call the parent's rules refuse is refused in the
    /// child too), judged by the guards the parent holds over its tree, and
    /// each run bounded by the parent's budget when the child has none of
    /// its own. A server that serves a parent's children makes them so:
    /// without it, a caller would reach through the child what the parent
    /// refuses.
    #[must_use]
    pub fn under(mut self, parent: &crate::Agent) -> Self {
        let executor = parent.executor();
        self.runner.place.ceiling = Some(
            self.runner
                .place
                .ceiling
                .clone()
                .unwrap_or_default()
                .with(executor.policy(), self.child.reach()),
        );
        if let Some(own) = executor.tree_guards() {
            self.runner.place.guards = Some(
                self.runner
                    .place
                    .guards
                    .clone()
                    .unwrap_or_default()
                    .with(own),
            );
        }
        self.runner.spending = self.runner.spending().or(parent.spending());
        self
    }

    /// One run of the child on `input` (its first message), to its end.
    async fn run(&self, input: String, cx: &ToolContext) -> ToolResult {
        let name = self.child.name();
        let run_cx = RunContext::new(cx.workspace_root(), run_id(name));
        let timer = Deadline::start(&self.child, &run_cx);
        let outcome = self.runner.run(input, &run_cx).await;
        let ran_out = timer.stop();
        match ending(name, &self.runner, outcome, ran_out) {
            Ending::Finished { output, .. } => self.answer(output),
            Ending::Waiting(state) => {
                let result = waited(name, &state);
                // Nobody resumes a served run: it ends here, and the
                // ledger forgets it.
                self.runner
                    .end(crate::RunOutcome::Waiting(state), &run_cx)
                    .await;
                result
            }
            Ending::Other(_, result, _) => result,
        }
    }

    /// A finished run's answer: text as text; a typed output as JSON and as
    /// structured content of the listed schema (a value that is not an
    /// object under `response`, as the model gave it).
    fn answer(&self, output: Value) -> ToolResult {
        match (&output, &self.output) {
            (_, Some(typed)) if typed.format().is_wrapped() => {
                ToolResult::json(json!({ "response": output }))
            }
            (Value::String(text), None) => ToolResult::text(text.clone()),
            _ => ToolResult::json(output),
        }
    }
}

/// A run id no other call's run has: the child's name and 64 random bits
/// (a count of this process's served runs where the system has no
/// randomness: a served run is never kept, so one process is all it must
/// be told apart in).
fn run_id(name: &str) -> RunId {
    static SERVED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut bytes = [0_u8; 8];
    let number = if getrandom::fill(&mut bytes).is_ok() {
        u64::from_le_bytes(bytes)
    } else {
        SERVED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    };
    RunId::new(format!("{name}-{number:016x}"))
}

/// The result of a served run that came to wait for a person: which
/// decisions, and how to settle them in the agent's file.
fn waited(name: &str, state: &RunState) -> ToolResult {
    let mut which = String::new();
    for item in state.pending() {
        if !which.is_empty() {
            which.push_str(", ");
        }
        let _ = write!(which, "`{}` ({})", item.item.call().name, item.item.kind());
    }
    ToolResult::error(
        ToolErrorKind::PermissionDenied,
        format!(
            "agent `{name}` stopped to wait for a person's decision on {which}, which nobody can give to an agent served as a tool; the calls before it ran, that one did not. Give the agent's file a rule that allows or denies it"
        ),
    )
    .with_data(json!({"status": "waiting", "agent": name, "run_id": state.run_id}))
}

impl iris_core::Tool for AgentTool {
    type Args = String;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn rust_item(&self) -> &'static str {
        "iris::agent::AgentTool (a child agent)"
    }

    fn parse(&self, input: &Value) -> Result<String, ArgumentError> {
        child_input(&self.child, input).map_err(|why| ArgumentError::new("$", why))
    }

    fn call<'a>(&'a self, input: String, cx: &'a ToolContext) -> ToolBody<'a> {
        ToolBody::Async(Box::pin(self.run(input, cx)))
    }
}
